import numpy as np
import pytest
from onnx import TensorProto, helper

from hlsgen.errors import UnsupportedOpsError
from hlsgen.frontend import import_model
from hlsgen.ops.pool import output_size
from tests.builders import assert_close_to_ort, make_model, tensor_value

# Shared by MaxPool and AveragePool; the 9x10 input makes floor and ceil output sizes differ.
POOL_CASES = [
    {"kernel_shape": [3, 3]},
    {"kernel_shape": [2, 3], "strides": [2, 2]},
    {"kernel_shape": [3, 3], "pads": [1, 0, 2, 1]},
    {"kernel_shape": [3, 2], "dilations": [2, 3]},
    {"kernel_shape": [3, 3], "strides": [2, 2], "dilations": [2, 2], "pads": [1, 1, 1, 1]},
    {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1},
    {"kernel_shape": [3, 3], "strides": [3, 3], "pads": [1, 1, 1, 1], "ceil_mode": 1},
    {"kernel_shape": [2, 2], "strides": [3, 3], "dilations": [2, 2], "ceil_mode": 1},
    {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"},
    {"kernel_shape": [2, 4], "auto_pad": "SAME_LOWER"},
    {"kernel_shape": [4, 3], "strides": [3, 2], "auto_pad": "SAME_LOWER", "ceil_mode": 1},
    {"kernel_shape": [2, 2], "strides": [2, 2], "auto_pad": "VALID"},
    {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "VALID", "ceil_mode": 1},
]


def _pool_model(op, attrs, shape=(1, 3, 9, 10), opset=19):
    node = helper.make_node(op, ["x"], ["y"], name="pool", **attrs)
    return make_model([node], [tensor_value("x", shape)], [tensor_value("y", None)], opset=opset)


@pytest.mark.parametrize("attrs", POOL_CASES)
@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
def test_pool_matches_onnxruntime(op, attrs):
    assert_close_to_ort(_pool_model(op, attrs))


@pytest.mark.parametrize(
    "attrs",
    [
        {"kernel_shape": [3, 3], "pads": [2, 1, 2, 0]},
        {"kernel_shape": [3, 3], "strides": [3, 3], "pads": [1, 1, 1, 1], "ceil_mode": 1},
        {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1},
        {"kernel_shape": [3, 3], "strides": [2, 2], "dilations": [2, 2], "pads": [1, 2, 1, 2], "ceil_mode": 1},
        {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"},
    ],
)
@pytest.mark.parametrize("count_include_pad", [0, 1])
def test_average_pool_count_include_pad(attrs, count_include_pad):
    assert_close_to_ort(_pool_model("AveragePool", {**attrs, "count_include_pad": count_include_pad}))


@pytest.mark.parametrize(
    "shape, attrs",
    [
        ((2, 3, 11), {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}),
        ((1, 2, 5, 6, 7), {"kernel_shape": [2, 3, 2], "strides": [2, 1, 2], "ceil_mode": 1}),
        ((1, 2, 5, 6, 7), {"kernel_shape": [2, 2, 2], "dilations": [2, 1, 3], "pads": [1, 0, 1, 1, 1, 0]}),
        # Both taps of the only window land in padding.
        ((1, 2, 1), {"kernel_shape": [2], "strides": [2], "dilations": [2], "pads": [1, 1]}),
    ],
)
@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
def test_pool_1d_and_3d(op, shape, attrs):
    assert_close_to_ort(_pool_model(op, attrs, shape))


def test_max_pool_keeps_integer_dtype():
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2])
    model = make_model(
        [node], [tensor_value("x", [1, 2, 7, 7], TensorProto.UINT8)], [tensor_value("y", None)], opset=12
    )
    x = np.random.default_rng(3).integers(0, 256, (1, 2, 7, 7)).astype(np.uint8)
    graph = assert_close_to_ort(model, {"x": x})
    assert graph.tensors["y"].dtype == "uint8"


def test_opset_7_average_pool():
    assert_close_to_ort(_pool_model("AveragePool", {"kernel_shape": [2, 2], "pads": [1, 1, 0, 0]}, opset=7))


@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool"])
@pytest.mark.parametrize("shape", [(2, 3, 5, 6), (1, 4, 7), (1, 2, 3, 4, 5)])
def test_global_pool_matches_onnxruntime(op, shape):
    node = helper.make_node(op, ["x"], ["y"])
    model = make_model([node], [tensor_value("x", shape)], [tensor_value("y", None)])
    graph = assert_close_to_ort(model)
    assert graph.tensors["y"].shape == shape[:2] + (1,) * (len(shape) - 2)


def test_ceil_mode_drops_a_window_starting_in_end_padding():
    # Size 5, pads 1+1, kernel 3, stride 3: ceil gives 3 windows but the third would start at index 6,
    # in the end padding, so ONNX keeps 2. With size 6 it starts inside the input and stays.
    assert output_size(5, 3, 3, 1, 1, 1, ceil_mode=True) == 2
    assert output_size(6, 3, 3, 1, 1, 1, ceil_mode=True) == 3
    assert output_size(6, 3, 3, 1, 1, 1, ceil_mode=False) == 2


@pytest.mark.parametrize(
    "outputs, attrs",
    [(["y", "idx"], {}), (["y"], {"storage_order": 1})],
)
def test_max_pool_indices_are_unsupported(outputs, attrs):
    node = helper.make_node("MaxPool", ["x"], outputs, name="mp", kernel_shape=[2, 2], **attrs)
    model = make_model(
        [node], [tensor_value("x", [1, 1, 4, 4])], [tensor_value(o, None) for o in outputs], opset=12
    )
    with pytest.raises(UnsupportedOpsError, match="'mp' \\(MaxPool") as info:
        import_model(model)
    assert [p.node for p in info.value.problems] == ["mp"]


def test_pool_window_larger_than_input_is_unsupported():
    node = helper.make_node("AveragePool", ["x"], ["y"], name="ap", kernel_shape=[5, 5])
    model = make_model([node], [tensor_value("x", [1, 1, 4, 6])], [tensor_value("y", [1, 1, 0, 2])])
    with pytest.raises(UnsupportedOpsError, match="'ap' \\(AveragePool.*larger than the padded input"):
        import_model(model)


def _reduce_model(op, shape, axes, keepdims=1, opset=13):
    """`op` over `axes`: an attribute before opset 18, a constant input from 18."""
    inits, inputs, attrs = {}, ["x"], {"keepdims": keepdims}
    if opset >= 18:
        inits["axes"] = np.array(axes, np.int64)
        inputs.append("axes")
    else:
        attrs["axes"] = axes
    node = helper.make_node(op, inputs, ["y"], name="reduce", **attrs)
    return make_model([node], [tensor_value("x", list(shape))], [tensor_value("y", None)], inits, opset=opset)


@pytest.mark.parametrize("op", ["ReduceMean", "ReduceMax"])
@pytest.mark.parametrize("shape, axes", [((1, 4, 5, 6), [2, 3]), ((1, 4, 5, 6), [-1, -2]), ((1, 6, 20), [2])],
                         ids=["2d", "negative_axes", "1d"])
@pytest.mark.parametrize("keepdims, opset", [(1, 13), (0, 13), (0, 18)])
def test_a_reduction_over_the_spatial_axes_is_a_global_pool(op, shape, axes, keepdims, opset):
    """PyTorch's x.mean([2, 3]) and x.mean(dim=2) of a 1-D map: a global pool (and a Reshape to N x C)."""
    graph = assert_close_to_ort(_reduce_model(op, shape, axes, keepdims, opset))
    pools = [n for n in graph.nodes.values() if n.op.startswith("Global")]
    assert [n.op for n in pools] == ["GlobalAveragePool" if op == "ReduceMean" else "GlobalMaxPool"]
    assert graph.shape("y") == (shape[:2] + (1,) * (len(shape) - 2) if keepdims else shape[:2])


@pytest.mark.parametrize("axes", [[1], [1, 2, 3], [3]])
def test_another_reduction_is_refused_naming_its_axes(axes):
    with pytest.raises(UnsupportedOpsError, match=r"reduces axes \[.*\] of a rank-4 tensor"):
        import_model(_reduce_model("ReduceMean", (1, 4, 5, 6), axes))
