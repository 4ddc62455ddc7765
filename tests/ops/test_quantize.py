"""Pre-quantized ONNX: QuantizeLinear/DequantizeLinear, the QOperator ops and QONNX's Quant/BipolarQuant."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from hlsgen.errors import UnsupportedOpsError
from hlsgen.frontend import import_model
from hlsgen.reference import verify_graph
from hlsgen.reference import run_graph
from tests.builders import IR_VERSION, assert_close_to_ort, make_model, run_ort, tensor_value

QONNX = "qonnx.custom_op.general"
ONNX_TYPE = {np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8, np.int16: TensorProto.INT16}
RNG = np.random.default_rng(7)


def assert_equal_to_ort(model: onnx.ModelProto, feeds: dict[str, np.ndarray]):
    """Import `model`, run the float reference and require onnxruntime's outputs exactly (dtype included)."""
    graph = import_model(model)
    verify_graph(graph)
    ours = run_graph(graph, feeds)
    for name, expected in run_ort(model, feeds).items():
        assert ours[name].dtype == expected.dtype, name
        np.testing.assert_array_equal(ours[name], expected, err_msg=name)
    return graph


def random_ints(dtype, shape) -> np.ndarray:
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)


def weights_7bit(shape) -> np.ndarray:
    """int8 weights in [-64, 63]. onnxruntime's uint8 x int8 kernels on AVX2 saturate the sum of two
    full-range products to int16 (its quantizer keeps weights to 7 bits for that reason), so only
    7-bit weights give its exact results."""
    return RNG.integers(-64, 64, size=shape).astype(np.int8)


# ---- QuantizeLinear / DequantizeLinear -------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16])
@pytest.mark.parametrize("axis", [None, 1, -1])
def test_quantize_linear_matches_onnxruntime(dtype, axis):
    shape = (2, 3, 4, 5)
    channels = 1 if axis is None else shape[axis]
    # Power-of-two scales make x / scale exact, so the halves below are true ties (rounded to even).
    scale = (2.0 ** RNG.integers(-3, 1, channels)).astype(np.float32)
    zero_point = random_ints(dtype, channels) // 4
    if axis is None:
        scale, zero_point = scale.reshape(()), zero_point.reshape(())
    x = np.concatenate([np.arange(60) * 0.0625 - 2.0, RNG.standard_normal(60) * 3e4]).astype(np.float32)
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=-1 if axis is None else axis)
    model = make_model([node], [tensor_value("x", shape)], [tensor_value("y", None)],
                       {"s": scale, "z": zero_point}, opset=21)
    graph = assert_equal_to_ort(model, {"x": x.reshape(shape)})
    (q,) = graph.nodes.values()
    assert q.attrs.axis == (None if axis is None else axis % 4)
    assert q.attrs.out_dtype == np.dtype(dtype).name


def test_quantize_linear_output_dtype_without_zero_point():
    node = helper.make_node("QuantizeLinear", ["x", "s"], ["y"], output_dtype=TensorProto.INT8)
    model = make_model([node], [tensor_value("x", [8])], [tensor_value("y", None)],
                       {"s": np.float32(0.01)}, opset=21)
    graph = assert_equal_to_ort(model, {"x": RNG.standard_normal(8).astype(np.float32)})
    assert next(iter(graph.nodes.values())).attrs.out_dtype == "int8"


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32])
@pytest.mark.parametrize("per_axis", [False, True])
def test_dequantize_linear_matches_onnxruntime(dtype, per_axis):
    shape = (2, 3, 4)
    scale = RNG.uniform(0.001, 0.1, 3 if per_axis else ()).astype(np.float32)
    inits = {"s": scale}
    inputs = ["x", "s"]
    if dtype is not np.int32:  # int32 (a bias) has no zero point
        inits["z"] = random_ints(dtype, scale.shape) // 2
        inputs.append("z")
    node = helper.make_node("DequantizeLinear", inputs, ["y"], axis=1)
    model = make_model([node], [tensor_value("x", shape, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)))],
                       [tensor_value("y", None)], inits, opset=21)
    x = random_ints(np.int16 if dtype is np.int32 else dtype, shape).astype(dtype)
    assert_equal_to_ort(model, {"x": x})


def test_quantization_parameters_must_be_constants():
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])
    inputs = [tensor_value("x", [4]), tensor_value("s", []), tensor_value("z", [], TensorProto.UINT8)]
    model = make_model([node], inputs, [tensor_value("y", None)], opset=13)
    with pytest.raises(UnsupportedOpsError, match="must be a constant"):
        import_model(model)


def test_fp8_is_rejected_with_its_reason():
    fp8 = helper.tensor_dtype_to_np_dtype(TensorProto.FLOAT8E4M3FN)
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])
    model = make_model([node], [tensor_value("x", [4])], [tensor_value("y", None)],
                       {"s": np.float32(1.0), "z": np.zeros(1, fp8)}, opset=21)
    with pytest.raises(UnsupportedOpsError, match="fp8 types are not supported"):
        import_model(model)


# ---- QOperator ops -------------------------------------------------------------------------------
@pytest.mark.parametrize("attrs", [{}, {"pads": [1, 1, 1, 1], "strides": [2, 2]}, {"group": 2}])
def test_qlinear_conv_per_channel_with_bias_matches_onnxruntime(attrs):
    group = attrs.get("group", 1)
    w = weights_7bit((6, 4 // group, 3, 3))
    inits = {
        "x_scale": np.float32(0.02), "x_zp": np.uint8(120),
        "w": w, "w_scale": RNG.uniform(0.002, 0.01, 6).astype(np.float32), "w_zp": np.zeros(6, np.int8),
        "y_scale": np.float32(0.25), "y_zp": np.uint8(100),
        "b": RNG.integers(-5000, 5000, 6).astype(np.int32),
    }
    names = ["x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp", "b"]
    node = helper.make_node("QLinearConv", names, ["y"], name="conv1", **attrs)
    model = make_model([node], [tensor_value("x", [1, 4, 7, 7], TensorProto.UINT8)], [tensor_value("y", None)], inits)
    graph = assert_equal_to_ort(model, {"x": random_ints(np.uint8, (1, 4, 7, 7))})
    # x's DequantizeLinear reads the graph input: it is absorbed as the input's grid (hlsgen.frontend.inputs)
    assert list(graph.nodes) == ["conv1/dequant_w", "conv1", "conv1/quant_y"]
    assert graph.nodes["conv1/dequant_w"].attrs.axis == 0
    assert graph.input_steps["x"].dequantize == (np.float32(0.02), 120)


def test_qlinear_conv_full_range_weights_are_exact():
    """Where onnxruntime saturates (full-range int8 weights), the reference still requantizes the exact sum."""
    x, w = random_ints(np.uint8, (1, 4, 6, 6)), random_ints(np.int8, (5, 4, 3, 3))
    w_scale = RNG.uniform(0.002, 0.01, 5).astype(np.float32)
    inits = {"x_scale": np.float32(0.02), "x_zp": np.uint8(120), "w": w, "w_scale": w_scale,
             "w_zp": np.zeros(5, np.int8), "y_scale": np.float32(0.5), "y_zp": np.uint8(128)}
    node = helper.make_node("QLinearConv", ["x", *inits], ["y"])
    model = make_model([node], [tensor_value("x", x.shape, TensorProto.UINT8)], [tensor_value("y", None)], inits)
    y = run_graph(import_model(model), {"x": x})["y"]
    # The exact integer sum, one output position at a time.
    xi = x.astype(np.int64) - 120
    acc = np.array([[np.tensordot(w.astype(np.int64), xi[0, :, i:i + 3, j:j + 3], 3) for j in range(4)]
                    for i in range(4)]).transpose(2, 0, 1)[None]
    real = acc * (0.02 * w_scale.astype(np.float64) / 0.5).reshape(1, 5, 1, 1)
    np.testing.assert_array_equal(y, np.clip(np.rint(real) + 128, 0, 255).astype(np.uint8))


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("opset,per_column", [(10, False), (21, False), (21, True)])
def test_qlinear_matmul_matches_onnxruntime(dtype, opset, per_column):
    b_scale = RNG.uniform(0.005, 0.02, 5).astype(np.float32) if per_column else np.float32(0.01)
    b_zp = np.full(b_scale.shape, -2 if dtype is np.int8 else 9, dtype)
    inits = {
        "a_scale": np.float32(0.05), "a_zp": np.array(3, dtype),
        "b": random_ints(dtype, (16, 5)), "b_scale": b_scale, "b_zp": b_zp,
        "y_scale": np.float32(0.3), "y_zp": np.array(1, dtype),
    }
    node = helper.make_node("QLinearMatMul", ["a", *inits], ["y"], name="fc")
    model = make_model([node], [tensor_value("a", [3, 16], ONNX_TYPE[dtype])], [tensor_value("y", None)], inits,
                       opset=opset)
    graph = assert_equal_to_ort(model, {"a": random_ints(dtype, (3, 16))})
    # a's DequantizeLinear reads the graph input: absorbed as the input's grid
    assert [n.op for n in graph.nodes.values()] == ["DequantizeLinear", "MatMul", "QuantizeLinear"]
    assert graph.nodes["fc/dequant_b"].attrs.axis == (1 if per_column else None)
    assert graph.input_steps["a"].dequantize == (np.float32(0.05), 3)


@pytest.mark.parametrize("attrs", [{}, {"pads": [1, 2, 1, 0], "strides": [2, 1]}, {"auto_pad": "SAME_UPPER"}])
def test_conv_integer_matches_onnxruntime(attrs):
    inits = {"w": random_ints(np.uint8, (3, 2, 3, 3)), "x_zp": np.uint8(128), "w_zp": np.uint8(127)}
    node = helper.make_node("ConvInteger", ["x", "w", "x_zp", "w_zp"], ["y"], **attrs)
    model = make_model([node], [tensor_value("x", [1, 2, 6, 6], TensorProto.UINT8)], [tensor_value("y", None)], inits)
    graph = assert_equal_to_ort(model, {"x": random_ints(np.uint8, (1, 2, 6, 6))})
    assert [n.op for n in graph.nodes.values()] == ["ConvInteger"]


@pytest.mark.parametrize("b_dtype", [np.uint8, np.int8])
def test_matmul_integer_per_column_zero_point_matches_onnxruntime(b_dtype):
    b = weights_7bit((8, 4)) if b_dtype is np.int8 else random_ints(np.uint8, (8, 4))
    inits = {"b": b, "a_zp": np.uint8(131), "b_zp": random_ints(b_dtype, 4)}
    node = helper.make_node("MatMulInteger", ["a", "b", "a_zp", "b_zp"], ["y"])
    model = make_model([node], [tensor_value("a", [5, 8], TensorProto.UINT8)], [tensor_value("y", None)], inits)
    assert_equal_to_ort(model, {"a": random_ints(np.uint8, (5, 8))})


def test_qdq_conv_model_matches_onnxruntime():
    w_scale = RNG.uniform(0.002, 0.02, 8).astype(np.float32)
    inits = {
        "s_in": np.float32(0.03), "z_in": np.uint8(128),
        "w_q": weights_7bit((8, 3, 3, 3)), "w_scale": w_scale, "w_zp": np.zeros(8, np.int8),
        "s_out": np.float32(0.05), "z_out": np.uint8(0),
    }
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s_in", "z_in"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "s_in", "z_in"], ["xf"]),
        helper.make_node("DequantizeLinear", ["w_q", "w_scale", "w_zp"], ["w"], axis=0),
        helper.make_node("Conv", ["xf", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("QuantizeLinear", ["r", "s_out", "z_out"], ["rq"]),
        helper.make_node("DequantizeLinear", ["rq", "s_out", "z_out"], ["y"]),
    ]
    model = make_model(nodes, [tensor_value("x", [1, 3, 8, 8])], [tensor_value("y", None)], inits, opset=13)
    assert_close_to_ort(model, rtol=1e-5)


# ---- QONNX Quant / BipolarQuant ------------------------------------------------------------------
def qonnx_model(nodes, inputs, outputs, inits, domain=QONNX) -> onnx.ModelProto:
    """A model as Brevitas exports it: opset 13 plus the QONNX domain, outputs typed by hand."""
    graph = helper.make_graph(nodes, "qonnx", inputs, outputs,
                              initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    opsets = [helper.make_opsetid("", 13), helper.make_opsetid(domain, 1)]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = IR_VERSION
    return model


def quant_node(x, scale, zeropt, bits, out, domain=QONNX, **attrs):
    return helper.make_node("Quant", [x, scale, zeropt, bits], [out], domain=domain, **attrs)


def run_quant(x, scale, zeropt, bits, domain=QONNX, **attrs):
    """Import and run one Quant node on x; returns the output and the imported node."""
    inits = {"s": np.asarray(scale, np.float32), "z": np.asarray(zeropt, np.float32), "b": np.float32(bits)}
    model = qonnx_model([quant_node("x", "s", "z", "b", "y", domain, **attrs)], [tensor_value("x", x.shape)],
                        [tensor_value("y", x.shape)], inits, domain)
    graph = import_model(model)
    verify_graph(graph)
    (node,) = graph.nodes.values()
    return run_graph(graph, {"x": x})["y"], node


def expected_quant(x, scale, zeropt, bits, signed, narrow, mode):
    """QONNX's Quant written out: clamp x / scale + zeropt to the integer range, round, map back."""
    lo = -(2 ** (bits - 1)) + narrow if signed else 0
    hi = 2 ** (bits - 1) - 1 if signed else 2**bits - 1 - narrow
    rounding = {"ROUND": np.round, "ROUND_TO_ZERO": np.fix, "FLOOR": np.floor, "CEIL": np.ceil}[mode]
    q = rounding(np.clip(x / scale + zeropt, lo, hi))
    return ((q - zeropt) * scale).astype(np.float32)


# The rounding table of QONNX's Quant documentation (8-bit signed, scale 1, zeropt 0).
ROUNDING_TABLE = {
    "ROUND": [6, 2, 2, 1, 1, -1, -1, -2, -2, -6],
    "CEIL": [6, 3, 2, 2, 1, -1, -1, -1, -2, -5],
    "FLOOR": [5, 2, 1, 1, 1, -1, -2, -2, -3, -6],
    "ROUND_TO_ZERO": [5, 2, 1, 1, 1, -1, -1, -1, -2, -5],
}


@pytest.mark.parametrize("mode", sorted(ROUNDING_TABLE))
def test_quant_rounding_modes_follow_the_qonnx_table(mode):
    x = np.array([5.5, 2.5, 1.6, 1.1, 1.0, -1.0, -1.1, -1.6, -2.5, -5.5], np.float32)
    y, node = run_quant(x, 1.0, 0.0, 8, rounding_mode=mode.lower())
    np.testing.assert_array_equal(y, ROUNDING_TABLE[mode])
    assert node.attrs.rounding_mode == mode


@pytest.mark.parametrize("bits", range(2, 9))
@pytest.mark.parametrize("signed,narrow", [(1, 0), (1, 1), (0, 0), (0, 1)])
@pytest.mark.parametrize("mode", sorted(ROUNDING_TABLE))
def test_quant_matches_its_definition(bits, signed, narrow, mode):
    x = (RNG.standard_normal((2, 3, 4)) * 2**bits * 0.3).astype(np.float32)
    scale, zeropt = np.float32(0.37), np.float32(0 if signed else 2)
    y, node = run_quant(x, scale, zeropt, bits, signed=signed, narrow=narrow, rounding_mode=mode)
    np.testing.assert_array_equal(y, expected_quant(x, scale, zeropt, bits, signed, narrow, mode))
    attrs = node.attrs
    assert (attrs.bits, attrs.signed, attrs.narrow, attrs.axis) == (bits, bool(signed), bool(narrow), None)


@pytest.mark.parametrize("scale_shape,axis", [((4, 1, 1, 1), 0), ((1, 3, 1, 1), 1), ((3, 1, 1), 1), ((5,), 3)])
def test_quant_per_channel_scale(scale_shape, axis):
    x = (RNG.standard_normal((4, 3, 2, 5)) * 4).astype(np.float32)
    scale = RNG.uniform(0.05, 0.5, scale_shape).astype(np.float32)
    y, node = run_quant(x, scale, 0.0, 4, narrow=1)
    np.testing.assert_array_equal(y, expected_quant(x, scale, np.float32(0), 4, 1, 1, "ROUND"))
    assert node.attrs.axis == axis


def test_bipolar_quant():
    x = np.array([[-2.0, -0.0, 0.0, 1e-9, 3.0, -1e-9]], np.float32)
    node = helper.make_node("BipolarQuant", ["x", "s"], ["y"], domain=QONNX)
    model = qonnx_model([node], [tensor_value("x", x.shape)], [tensor_value("y", x.shape)], {"s": np.float32(0.5)})
    graph = import_model(model)
    np.testing.assert_array_equal(run_graph(graph, {"x": x})["y"], [[-0.5, 0.5, 0.5, 0.5, 0.5, -0.5]])
    (imported,) = graph.nodes.values()
    assert (imported.op, imported.attrs.bipolar, imported.attrs.bits) == ("QuantDequant", True, 1)


@pytest.mark.parametrize("domain", ["finn.custom_op.general", "onnx.brevitas"])
def test_quant_accepted_in_finn_and_brevitas_domains(domain):
    x = np.linspace(-3, 3, 7, dtype=np.float32)
    y, _ = run_quant(x, 0.5, 0.0, 3, domain=domain)
    np.testing.assert_array_equal(y, expected_quant(x, 0.5, 0.0, 3, 1, 0, "ROUND"))


@pytest.mark.parametrize(
    "change,reason",
    [
        ({"rounding_mode": "HALF_UP"}, "rounding_mode HALF_UP is not supported"),
        ({"bits": 2.5}, "bitwidth must be one whole number"),
        ({"bits": 0}, "bitwidth must be one whole number"),
        ({"domain": "qonnx.custom_op.other"}, "custom domain"),
    ],
)
def test_quant_rejections(change, reason):
    domain = change.get("domain", QONNX)
    attrs = {"rounding_mode": change["rounding_mode"]} if "rounding_mode" in change else {}
    inits = {"s": np.float32(1), "z": np.float32(0), "b": np.float32(change.get("bits", 4))}
    model = qonnx_model([quant_node("x", "s", "z", "b", "y", domain, **attrs)], [tensor_value("x", [4])],
                        [tensor_value("y", [4])], inits, domain or QONNX)
    with pytest.raises(UnsupportedOpsError, match=reason):
        import_model(model)


def test_other_qonnx_ops_stay_unsupported():
    node = helper.make_node("FloatQuant", ["x", "s", "z", "b", "b"], ["y"], domain=QONNX)
    inits = {"s": np.float32(1), "z": np.float32(0), "b": np.float32(4)}
    model = qonnx_model([node], [tensor_value("x", [4])], [tensor_value("y", [4])], inits)
    with pytest.raises(UnsupportedOpsError, match="custom domain"):
        import_model(model)


def brevitas_conv_model(rng) -> tuple[onnx.ModelProto, dict]:
    """Quant(x) -> Conv(w = Quant(w), b) -> Relu -> Quant, as Brevitas exports a quantized Conv layer:
    8-bit signed input, 4-bit narrow per-channel weights, 4-bit unsigned output."""
    # Power-of-two scales keep every product and sum exact in float32, so expectations are exact too.
    w_scale = (2.0 ** -rng.integers(3, 6, (4, 1, 1, 1))).astype(np.float32)
    inits = {
        "x_s": np.float32(2**-4), "zero": np.float32(0), "b8": np.float32(8), "b4": np.float32(4),
        "w": rng.standard_normal((4, 3, 3, 3)).astype(np.float32) * 0.2, "w_s": w_scale,
        "bias": (rng.integers(-64, 64, 4) * 2**-6).astype(np.float32), "y_s": np.float32(2**-2),
    }
    nodes = [
        quant_node("x", "x_s", "zero", "b8", "xq", signed=1, narrow=0, rounding_mode="ROUND", name="Quant_0"),
        quant_node("w", "w_s", "zero", "b4", "wq", signed=1, narrow=1, rounding_mode="ROUND", name="Quant_1"),
        helper.make_node("Conv", ["xq", "wq", "bias"], ["c"], pads=[1, 1, 1, 1], name="Conv_0"),
        helper.make_node("Relu", ["c"], ["r"], name="Relu_0"),
        quant_node("r", "y_s", "zero", "b4", "y", signed=0, narrow=0, rounding_mode="ROUND", name="Quant_2"),
    ]
    model = qonnx_model(nodes, [tensor_value("x", [1, 3, 6, 6])], [tensor_value("y", [1, 4, 6, 6])], inits)
    return model, inits


def test_brevitas_style_qonnx_conv_model():
    model, inits = brevitas_conv_model(RNG)
    w_scale = inits["w_s"]
    graph = import_model(model)
    verify_graph(graph)
    assert [n.op for n in graph.nodes.values()] == ["QuantDequant", "QuantDequant", "Conv", "Relu", "QuantDequant"]
    assert graph.nodes["Quant_1"].attrs.axis == 0 and graph.nodes["Quant_1"].attrs.narrow
    x = RNG.standard_normal((1, 3, 6, 6)).astype(np.float32)
    y = run_graph(graph, {"x": x})["y"]

    xq = expected_quant(x, inits["x_s"], 0, 8, 1, 0, "ROUND")
    wq = expected_quant(inits["w"], w_scale, 0, 4, 1, 1, "ROUND")
    conv = helper.make_node("Conv", ["xq", "wq", "bias"], ["c"], pads=[1, 1, 1, 1])
    float_model = make_model([conv], [tensor_value("xq", [1, 3, 6, 6])], [tensor_value("c", None)],
                             {"wq": wq, "bias": inits["bias"]})
    c = run_ort(float_model, {"xq": xq})["c"]
    np.testing.assert_array_equal(y, expected_quant(np.maximum(c, 0), inits["y_s"], 0, 4, 0, 0, "ROUND"))


# ---- QONNX Trunc ---------------------------------------------------------------------------------------
def run_trunc(x, inputs: dict, domain=QONNX, **attrs):
    """Import and run one Trunc node (inputs in spec order after x) on x."""
    inits = {k: np.float32(v) for k, v in inputs.items()}
    node = helper.make_node("Trunc", ["x", *inits], ["y"], domain=domain, **attrs)
    model = qonnx_model([node], [tensor_value("x", x.shape)], [tensor_value("y", x.shape)], inits, domain)
    graph = import_model(model)
    verify_graph(graph)
    return run_graph(graph, {"x": x})["y"]


@pytest.mark.parametrize("mode", ["FLOOR", "CEIL", "ROUND"])
def test_trunc_version_1_drops_low_bits(mode):
    # QONNX Trunc v1 written out: q = round(x / s + z); y = (R(q / 2^(in - out)) - z) * s
    s, z = 0.5, 0.0
    q = np.arange(-40, 41, dtype=np.float32)
    rounding = {"FLOOR": np.floor, "CEIL": np.ceil, "ROUND": np.round}[mode]
    y = run_trunc(q * s, {"s": s, "z": z, "in_b": 10, "out_b": 7}, rounding_mode=mode)
    np.testing.assert_array_equal(y, (rounding(q / 8) - z) * s)


def test_trunc_version_2_rescales_and_clamps():
    # v2: t = 2^round(log2(out_s / s)); y = (R(clip(q / t, lo, hi)) - z / t) * out_s, FLOOR by default
    s, out_s = 0.25, 1.0  # t = 4
    q = np.arange(-64, 64, dtype=np.float32)
    y = run_trunc(q * s, {"s": s, "z": 0, "in_b": 8, "out_s": out_s, "out_b": 4}, signed=1, narrow=0)
    np.testing.assert_array_equal(y, np.floor(np.clip(q / 4, -8, 7)) * out_s)


@pytest.mark.parametrize(
    "inputs,attrs,reason",
    [
        ({"s": 1, "z": 0, "in_b": 8}, {}, "Trunc takes 5 inputs"),
        ({"s": 1, "z": 0, "in_b": 8, "out_b": 4}, {"rounding_mode": "HALF_UP"}, "rounding_mode HALF_UP"),
    ],
)
def test_trunc_rejections(inputs, attrs, reason):
    inits = {k: np.float32(v) for k, v in inputs.items()}
    node = helper.make_node("Trunc", ["x", *inits], ["y"], domain=QONNX, **attrs)
    model = qonnx_model([node], [tensor_value("x", [4])], [tensor_value("y", [4])], inits)
    with pytest.raises(UnsupportedOpsError, match=reason):
        import_model(model)
