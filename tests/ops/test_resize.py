import numpy as np
import pytest
from onnx import helper

from hlsgen.errors import UnsupportedOpsError
from hlsgen.frontend import import_model
from tests.builders import assert_close_to_ort, make_model, tensor_value

SHAPE = [1, 2, 3, 4]


def _model(op, inputs, inits, opset, shape=SHAPE, **attrs):
    node = helper.make_node(op, ["x", *inputs], ["y"], name="up", **attrs)
    return make_model([node], [tensor_value("x", shape)], [tensor_value("y", None)], inits, opset=opset)


def _scales(*values):
    return np.array(values, np.float32)


def _sizes(*values):
    return np.array(values, np.int64)


@pytest.mark.parametrize("opset", [7, 8])
def test_upsample_with_scales_attribute(opset):
    graph = assert_close_to_ort(_model("Upsample", [], None, opset, scales=[1.0, 1.0, 2.0, 3.0]))
    assert graph.shape("y") == (1, 2, 6, 12)


def test_upsample_with_scales_input():
    assert_close_to_ort(_model("Upsample", ["s"], {"s": _scales(1, 1, 2, 2)}, 9, mode="nearest"))


def test_resize_10():
    assert_close_to_ort(_model("Resize", ["s"], {"s": _scales(1, 1, 3, 2)}, 10))


# coordinate_transformation_mode / nearest_mode pairs that repeat pixels for integer factors
REPEATING = [("asymmetric", "floor"), ("half_pixel", "round_prefer_floor"), ("half_pixel", "round_prefer_ceil"),
             ("pytorch_half_pixel", "round_prefer_floor"), ("tf_half_pixel_for_nn", "floor"),
             ("asymmetric", "round_prefer_floor")]


@pytest.mark.parametrize("opset", [11, 13, 18])
@pytest.mark.parametrize("transform, nearest", REPEATING)
def test_resize_with_scales(opset, transform, nearest):
    factors = (1, 1, 2, 2)  # asymmetric + round_prefer_floor repeats only for factor 2
    model = _model("Resize", ["roi", "s"], {"roi": np.zeros(0, np.float32), "s": _scales(*factors)}, opset,
                   mode="nearest", coordinate_transformation_mode=transform, nearest_mode=nearest)
    assert_close_to_ort(model)


@pytest.mark.parametrize("transform, nearest", REPEATING[:5])
def test_resize_with_sizes_and_a_factor_of_three(transform, nearest):
    model = _model("Resize", ["", "", "sizes"], {"sizes": _sizes(1, 2, 9, 12)}, 13, mode="nearest",
                   coordinate_transformation_mode=transform, nearest_mode=nearest)
    assert assert_close_to_ort(model).shape("y") == (1, 2, 9, 12)


def test_align_corners_is_taken_where_it_repeats_pixels():
    """align_corners picks round(x * (n - 1) / (2n - 1)) = x // 2 for 2x: the check is exact, not a list."""
    assert_close_to_ort(_model("Resize", ["", "s"], {"s": _scales(1, 1, 2, 2)}, 13,
                               coordinate_transformation_mode="align_corners"))


def test_resize_defaults_and_half_pixel_symmetric():
    assert_close_to_ort(_model("Resize", ["", "s"], {"s": _scales(1, 1, 2, 2)}, 13))
    assert_close_to_ort(_model("Resize", ["", "s"], {"s": _scales(1, 1, 2, 2)}, 19,
                               coordinate_transformation_mode="half_pixel_symmetric"))


def test_resize_18_axes_and_keep_aspect_ratio():
    assert_close_to_ort(_model("Resize", ["", "s"], {"s": _scales(2, 2)}, 18, axes=[2, 3]))
    model = _model("Resize", ["", "", "sizes"], {"sizes": _sizes(6, 100)}, 18, axes=[2, 3],
                   keep_aspect_ratio_policy="not_larger")
    assert assert_close_to_ort(model).shape("y") == (1, 2, 6, 8)


def test_resize_1d():
    model = _model("Resize", ["", "s"], {"s": _scales(1, 1, 4)}, 13, shape=[1, 3, 5],
                   coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    assert assert_close_to_ort(model).shape("y") == (1, 3, 20)


@pytest.mark.parametrize("opset, transform", [(opset, t) for opset in (13, 18) for t in (
    "half_pixel", "pytorch_half_pixel", "asymmetric", "align_corners")] + [(18, "half_pixel_symmetric")])
@pytest.mark.parametrize("factors", [(2, 2), (3, 4), (1, 2)], ids=str)
def test_linear_resize(opset, transform, factors):
    model = _model("Resize", ["", "s"], {"s": _scales(1, 1, *factors)}, opset, mode="linear",
                   coordinate_transformation_mode=transform)
    assert assert_close_to_ort(model).shape("y") == (1, 2, 3 * factors[0], 4 * factors[1])


@pytest.mark.parametrize("transform", ["half_pixel", "pytorch_half_pixel", "asymmetric", "align_corners",
                                       "half_pixel_symmetric"])
@pytest.mark.parametrize("shape, sizes", [([1, 2, 5, 7], [1, 2, 8, 12]), ([1, 2, 12], [1, 2, 32]),
                                          ([1, 2, 3, 4], [1, 2, 3, 10])], ids=str)
def test_linear_resize_by_fractional_factors(transform, shape, sizes):
    model = _model("Resize", ["", "", "s"], {"s": _sizes(*sizes)}, 18, shape=shape, mode="linear",
                   coordinate_transformation_mode=transform)
    assert assert_close_to_ort(model).shape("y") == tuple(sizes)


@pytest.mark.parametrize("transform", ["half_pixel", "pytorch_half_pixel", "asymmetric", "align_corners",
                                       "half_pixel_symmetric", "tf_half_pixel_for_nn"])
@pytest.mark.parametrize("nearest", ["floor", "ceil", "round_prefer_floor", "round_prefer_ceil"])
@pytest.mark.parametrize("shape, sizes", [([1, 2, 5, 7], [1, 2, 8, 12]), ([1, 2, 12], [1, 2, 32]),
                                          ([1, 2, 6, 6], [1, 2, 9, 15])], ids=str)
def test_nearest_resize_by_fractional_factors(transform, nearest, shape, sizes):
    model = _model("Resize", ["", "", "s"], {"s": _sizes(*sizes)}, 18, shape=shape, mode="nearest",
                   coordinate_transformation_mode=transform, nearest_mode=nearest)
    assert assert_close_to_ort(model).shape("y") == tuple(sizes)


def test_a_nearest_resize_whose_picks_depend_on_floating_point_rounding_is_refused():
    """7 -> 9, half_pixel, floor: output pixel 4's source coordinate is 3 exactly, 2.9999999999999996 in float64."""
    model = _model("Resize", ["", "", "s"], {"s": _sizes(1, 2, 9, 4)}, 13, shape=[1, 2, 7, 4],
                   coordinate_transformation_mode="half_pixel", nearest_mode="floor")
    with pytest.raises(UnsupportedOpsError, match=r"spatial axis 0 \(7 -> 9, half_pixel, floor\) depend on float64"):
        import_model(model)


def test_linear_resize_by_a_fractional_scale_that_is_its_sizes_ratio():
    model = _model("Resize", ["", "s"], {"s": _scales(1, 1, 1.5, 2.5)}, 13, shape=[1, 2, 4, 6], mode="linear")
    assert assert_close_to_ort(model).shape("y") == (1, 2, 6, 15)


def test_linear_resize_1d_and_upsample_9():
    model = _model("Resize", ["", "s"], {"s": _scales(1, 1, 3)}, 13, shape=[1, 3, 5], mode="linear")
    assert assert_close_to_ort(model).shape("y") == (1, 3, 15)
    model = _model("Upsample", ["s"], {"s": _scales(1, 1, 2, 2)}, 9, mode="linear")
    assert assert_close_to_ort(model).shape("y") == (1, 2, 6, 8)


@pytest.mark.parametrize("inputs, inits, attrs, why", [
    (["", "s"], {"s": _scales(1, 1, 2, 2)}, {"mode": "cubic"}, "mode 'cubic' is not supported"),
    (["", "s"], {"s": _scales(1, 1, 2, 2)}, {"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize"},
     "'tf_crop_and_resize' of a linear Resize is not supported"),
    (["", "s"], {"s": _scales(1, 1, 1.7, 2)}, {}, "is not its output size over its input size"),
    (["", "s"], {"s": _scales(1, 1, 1.7, 2)}, {"mode": "linear"}, "is not its output size over its input size"),
    (["", "s"], {"s": _scales(1, 1, 0.5, 1)}, {"mode": "linear"}, "only upscaling"),
    (["", "s"], {"s": _scales(1, 1, 0.5, 0.5)}, {}, "not an integer multiple"),
    (["", "s"], {"s": _scales(1, 2, 2, 2)}, {}, "only the spatial axes"),
    (["", "s"], {"s": _scales(1, 1, 3, 3)}, {"coordinate_transformation_mode": "align_corners"}, "does not repeat"),
    (["", "s"], {"s": _scales(1, 1, 2, 2)}, {"coordinate_transformation_mode": "asymmetric", "nearest_mode": "ceil"},
     "does not repeat"),
    (["", "s"], {"s": _scales(1, 1, 3, 3)}, {"coordinate_transformation_mode": "asymmetric"}, "does not repeat"),
    (["", "s"], {"s": _scales(1, 1, 2, 2)}, {"coordinate_transformation_mode": "half_pixel", "nearest_mode": "floor"},
     "does not repeat"),
])
def test_other_resizes_are_rejected_with_the_reason(inputs, inits, attrs, why):
    with pytest.raises(UnsupportedOpsError, match=why):
        import_model(_model("Resize", inputs, inits, 13, **attrs))


def test_computed_scales_are_rejected():
    nodes = [helper.make_node("Resize", ["x", "", "s"], ["y"], name="up")]
    model = make_model(nodes, [tensor_value("x", SHAPE), tensor_value("s", [4])], [tensor_value("y", None)], opset=13)
    with pytest.raises(UnsupportedOpsError, match="must be a constant"):
        import_model(model)


def test_a_refused_resize_is_listed_alone_and_its_readers_do_not_fail():
    nodes = [helper.make_node("Resize", ["x", "", "s"], ["u"], name="up", mode="cubic"),
             helper.make_node("Relu", ["u"], ["r"]), helper.make_node("Resize", ["r", "", "s"], ["y"], name="up2")]
    model = make_model(nodes, [tensor_value("x", SHAPE)], [tensor_value("y", None)], {"s": _scales(1, 1, 2, 2)}, opset=13)
    with pytest.raises(UnsupportedOpsError) as caught:
        import_model(model)
    assert [p.node for p in caught.value.problems] == ["up"]
