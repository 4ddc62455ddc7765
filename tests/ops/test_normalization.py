import numpy as np
import pytest
from onnx import helper

from hlsgen.errors import UnsupportedOpsError
from hlsgen.frontend import import_model
from hlsgen.ops.normalization import channel_affine
from hlsgen.ops.registry import NoAttrs
from tests.builders import assert_close_to_ort, make_model, tensor_value

RNG = np.random.default_rng(7)


def _stats(c):
    scale = RNG.standard_normal(c).astype(np.float32)
    bias = RNG.standard_normal(c).astype(np.float32)
    mean = RNG.standard_normal(c).astype(np.float32)
    var = RNG.uniform(0.1, 2.0, c).astype(np.float32)
    return {"scale": scale, "bias": bias, "mean": mean, "var": var}


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (4, 3), (1, 3, 7), (1, 3, 2, 3, 4)])
@pytest.mark.parametrize("attrs", [{}, {"epsilon": 0.01}])
def test_batch_norm_matches_onnxruntime(shape, attrs):
    node = helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"], **attrs)
    model = make_model([node], [tensor_value("x", shape)], [tensor_value("y", None)], _stats(shape[1]))
    assert_close_to_ort(model)


def test_batch_norm_with_statistics_as_graph_inputs():
    names = ["x", "scale", "bias", "mean", "var"]
    node = helper.make_node("BatchNormalization", names, ["y"])
    inputs = [tensor_value("x", [1, 4, 3, 3])] + [tensor_value(n, [4]) for n in names[1:]]
    model = make_model([node], inputs, [tensor_value("y", None)])
    feeds = {"x": RNG.standard_normal((1, 4, 3, 3)).astype(np.float32), **_stats(4)}
    assert_close_to_ort(model, feeds)


@pytest.mark.parametrize("opset", [7, 9])
def test_batch_norm_old_opsets(opset):
    node = helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"], epsilon=1e-3)
    model = make_model([node], [tensor_value("x", [1, 3, 4, 4])], [tensor_value("y", None)], _stats(3), opset=opset)
    assert_close_to_ort(model)


@pytest.mark.parametrize(
    "opset, outputs, attrs, why",
    [
        (15, ["y", "rm", "rv"], {"training_mode": 1}, "training-mode"),
        (9, ["y", "m", "v", "saved_m", "saved_v"], {}, "training-mode"),
        (7, ["y"], {"spatial": 0}, "spatial=0"),
    ],
)
def test_batch_norm_unsupported_forms(opset, outputs, attrs, why):
    node = helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], outputs, name="bn", **attrs)
    outs = [tensor_value(o, [2, 3, 4] if o == "y" else [3]) for o in outputs]
    model = make_model([node], [tensor_value("x", [2, 3, 4])], outs, _stats(3), opset=opset)
    with pytest.raises(UnsupportedOpsError, match=f"'bn' \\(BatchNormalization, opset {opset}\\): .*{why}") as info:
        import_model(model)
    assert [p.node for p in info.value.problems] == ["bn"]


def test_channel_affine_scales_and_shifts_axis_1():
    x = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
    scale, shift = np.array([1.0, -2.0, 0.5], np.float32), np.array([0.0, 1.0, -3.0], np.float32)
    expected = np.empty_like(x)
    for c in range(3):
        expected[:, c] = x[:, c] * scale[c] + shift[c]
    got = channel_affine(NoAttrs(), x, scale, shift)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_channel_affine_on_2d_input():
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    scale, shift = np.array([2.0, 3.0, 4.0], np.float32), np.array([1.0, 1.0, 1.0], np.float32)
    np.testing.assert_allclose(channel_affine(NoAttrs(), x, scale, shift), x * scale + shift, rtol=1e-6)
