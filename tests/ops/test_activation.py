import numpy as np
import pytest
from onnx import TensorProto, helper

from hlsgen.errors import UnsupportedOpsError
from hlsgen.frontend import import_model
from hlsgen.reference import run_graph
from tests.builders import assert_close_to_ort, make_model, tensor_value

SHAPE = [2, 3, 4, 5]


def _single_op_model(op, opset=17, inits=None, extra_inputs=(), x_type=TensorProto.FLOAT, shape=SHAPE, **attrs):
    node = helper.make_node(op, ["x", *extra_inputs], ["y"], name="act", **attrs)
    return make_model([node], [tensor_value("x", shape, x_type)], [tensor_value("y", None)], inits, opset=opset)


def _wide_feed(seed=0):
    """Values spread over [-8, 8], past every activation's knees."""
    return {"x": (np.random.default_rng(seed).standard_normal(SHAPE) * 4).astype(np.float32)}


@pytest.mark.parametrize(
    "op, opset, attrs",
    [
        ("Relu", 6, {}),
        ("Relu", 14, {}),
        ("Sigmoid", 6, {}),
        ("Sigmoid", 13, {}),
        ("HardSwish", 14, {}),
        ("LeakyRelu", 6, {}),
        ("LeakyRelu", 6, {"alpha": 0.2}),
        ("LeakyRelu", 16, {"alpha": 0.1}),
        ("HardSigmoid", 6, {}),
        ("HardSigmoid", 6, {"alpha": 0.1, "beta": 0.3}),
        ("Clip", 6, {}),
        ("Clip", 6, {"min": -1.5}),
        ("Clip", 6, {"min": 0.0, "max": 6.0}),
        ("Elu", 6, {}),
        ("Elu", 6, {"alpha": 0.3}),
        ("Selu", 6, {}),
        ("Selu", 6, {"alpha": 1.2, "gamma": 0.8}),
        ("Tanh", 13, {}),
        ("Softplus", 13, {}),
        ("Softsign", 13, {}),
        ("Erf", 13, {}),
        ("Mish", 18, {}),
        ("Gelu", 20, {}),
        ("Gelu", 20, {"approximate": "tanh"}),
    ],
)
def test_activation_matches_onnxruntime(op, opset, attrs):
    assert_close_to_ort(_single_op_model(op, opset, **attrs), _wide_feed())


def test_sigmoid_is_accurate_at_large_magnitudes():
    x = np.array([-80.0, -30.0, -1.0, 0.0, 1.0, 30.0, 100.0], np.float32)  # exp(-80) is still a normal float32
    graph = import_model(_single_op_model("Sigmoid", shape=[7]))
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        got = run_graph(graph, {"x": x})["y"]
    np.testing.assert_allclose(got, 1 / (1 + np.exp(-x.astype(np.float64))), rtol=1e-6)


@pytest.mark.parametrize("opset", [11, 13])
@pytest.mark.parametrize("lo, hi", [(-1.0, 2.0), (None, 0.5), (-0.5, None), (None, None), (1.0, -1.0)])
def test_clip_with_constant_bounds_matches_onnxruntime(opset, lo, hi):
    inits = {k: np.float32(v) for k, v in (("lo", lo), ("hi", hi)) if v is not None}
    extra = ["lo" if lo is not None else "", "hi" if hi is not None else ""]
    assert_close_to_ort(_single_op_model("Clip", opset, inits, extra), _wide_feed(1))


@pytest.mark.parametrize(
    "dtype, np_dtype", [(TensorProto.INT8, np.int8), (TensorProto.UINT8, np.uint8), (TensorProto.INT64, np.int64)]
)
@pytest.mark.parametrize("bounds", [(None, None), (3, None), (None, 3), (2, 9)])
def test_clip_on_integers_matches_onnxruntime(dtype, np_dtype, bounds):
    info = np.iinfo(np_dtype)
    x = np.array([info.min, 0, 1, 3, 5, 9, 10, info.max], np_dtype)
    inits = {k: np_dtype(v) for k, v in zip(("lo", "hi"), bounds) if v is not None}
    extra = ["lo" if bounds[0] is not None else "", "hi" if bounds[1] is not None else ""]
    graph = assert_close_to_ort(_single_op_model("Clip", 13, inits, extra, dtype, [8]), {"x": x})
    assert graph.tensors["y"].dtype == np.dtype(np_dtype).name


def test_clip_with_a_computed_bound_is_rejected_naming_the_node():
    node = helper.make_node("Clip", ["x", "lo"], ["y"], name="clip_node")
    inputs = [tensor_value("x", [2, 3]), tensor_value("lo", [])]
    model = make_model([node], inputs, [tensor_value("y", None)], opset=13)
    with pytest.raises(UnsupportedOpsError, match=r"'clip_node' \(Clip, opset 13\): min \(input 1\) must be"):
        import_model(model)


@pytest.mark.parametrize("slope_shape", [[1], [5], [3, 1, 1], [4, 5], [1, 3, 4, 5]])
@pytest.mark.parametrize("constant_slope", [True, False])
@pytest.mark.parametrize("opset", [7, 16])
def test_prelu_matches_onnxruntime(slope_shape, constant_slope, opset):
    slope = np.random.default_rng(2).uniform(0.05, 0.5, slope_shape).astype(np.float32)
    node = helper.make_node("PRelu", ["x", "slope"], ["y"])
    inputs = [tensor_value("x", SHAPE)] + ([] if constant_slope else [tensor_value("slope", slope_shape)])
    model = make_model([node], inputs, [tensor_value("y", None)], {"slope": slope} if constant_slope else None, opset)
    assert_close_to_ort(model, {**_wide_feed(3), **({} if constant_slope else {"slope": slope})})


@pytest.mark.parametrize("constant_slope", [True, False])
def test_prelu_legacy_per_channel_slope(constant_slope):
    # Old PyTorch exports give a [C] slope for NCHW input; ONNX broadcasting cannot apply it, so
    # hlsgen reads it per channel (onnxruntime rejects such models, so compare with numpy).
    slope = np.array([0.1, 0.2, 0.3], np.float32)
    node = helper.make_node("PRelu", ["x", "slope"], ["y"])
    inputs = [tensor_value("x", SHAPE)] + ([] if constant_slope else [tensor_value("slope", [3])])
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, SHAPE)]
    model = make_model([node], inputs, outputs, {"slope": slope} if constant_slope else None, opset=6)
    graph = import_model(model)
    x = _wide_feed(4)["x"]
    got = run_graph(graph, {"x": x} if constant_slope else {"x": x, "slope": slope})["y"]
    np.testing.assert_allclose(got, np.where(x >= 0, x, x * slope.reshape(3, 1, 1)), rtol=1e-6)
    assert any("per channel" in n for n in graph.notices)


@pytest.mark.parametrize("op", ["Relu", "Sigmoid", "HardSwish", "LeakyRelu", "HardSigmoid"])
def test_float16_keeps_its_dtype(op):
    graph = import_model(_single_op_model(op, x_type=TensorProto.FLOAT16))
    assert graph.tensors["y"].dtype == "float16"


@pytest.mark.parametrize("op", ["Elu", "Selu"])
def test_elu_and_selu_do_not_overflow_on_large_inputs(op):
    x = np.array([-100.0, -1.0, 0.0, 1.0, 100.0, 3e38], np.float32)
    graph = import_model(_single_op_model(op, shape=[6]))
    with np.errstate(over="raise", invalid="raise"):
        got = run_graph(graph, {"x": x})["y"]
    assert np.isfinite(got).all() and got[0] < 0 and got[2] == 0


def test_softplus_does_not_overflow_at_large_magnitudes():
    x = np.array([-200.0, -30.0, 0.0, 30.0, 200.0], np.float32)
    graph = import_model(_single_op_model("Softplus", 13, shape=[5]))
    with np.errstate(over="raise", invalid="raise"):
        got = run_graph(graph, {"x": x})["y"]
    np.testing.assert_allclose(got, [0.0, np.exp(-30.0), np.log(2.0), 30.0, 200.0], rtol=1e-6, atol=1e-30)


def test_a_gelu_approximation_onnx_does_not_define_is_refused_by_name():
    with pytest.raises(UnsupportedOpsError, match="approximate='fast'"):
        import_model(_single_op_model("Gelu", 20, approximate="fast"))
