"""Pre-quantized models keep their scales, zero points, widths and integer weights."""
import numpy as np
import pytest
from onnx import helper, numpy_helper

from hlsgen.errors import DataError, UnsupportedModelError
from hlsgen.frontend import import_model
from hlsgen.passes import optimize
from hlsgen.quant import BitConfig, QuantizedModel, quantize
from hlsgen.quant.int_ops import QRequantAttrs
from hlsgen.quant.lower import lower
from hlsgen.quant.prequant import absorb_quantization
from hlsgen.quant.report import run_float, sqnr_db
from hlsgen.reference import run_graph
from tests.builders import IR_VERSION, make_model, tensor_value
from tests.ops.test_quantize import brevitas_conv_model
from tests.qonnx_models import digits_images, trunc_pool_model, w3a3_digits

RNG = np.random.default_rng(7)


def build_int(model, x):
    graph = import_model(model)
    float_out = run_graph(graph, {"x": x})  # the model's own float semantics, fake-quantization included
    assert absorb_quantization(graph)
    assert not {"QuantizeLinear", "DequantizeLinear", "QuantDequant"} & {n.op for n in graph.nodes.values()}
    optimize(graph)
    return quantize(graph, {"x": x}), float_out


def qdq_conv_model():
    inits = {
        "s_in": np.float32(0.03), "z_in": np.uint8(128),
        "w_q": RNG.integers(-100, 100, (8, 3, 3, 3)).astype(np.int8),
        "w_scale": RNG.uniform(0.002, 0.02, 8).astype(np.float32), "w_zp": np.zeros(8, np.int8),
        "s_out": np.float32(0.05), "z_out": np.uint8(0),
    }
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s_in", "z_in"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "s_in", "z_in"], ["xf"]),
        helper.make_node("DequantizeLinear", ["w_q", "w_scale", "w_zp"], ["w"], axis=0),
        helper.make_node("Conv", ["xf", "w"], ["c"], pads=[1, 1, 1, 1], name="conv"),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("QuantizeLinear", ["r", "s_out", "z_out"], ["rq"]),
        helper.make_node("DequantizeLinear", ["rq", "s_out", "z_out"], ["y"]),
    ]
    return make_model(nodes, [tensor_value("x", [1, 3, 8, 8])], [tensor_value("y", None)], inits, opset=13), inits


def test_qdq_model_keeps_its_quantization():
    model, inits = qdq_conv_model()
    x = RNG.uniform(-3, 3, (1, 3, 8, 8)).astype(np.float32)
    quantized, float_out = build_int(model, x)
    q = quantized.graph.quant
    assert (q["x"].scale, q["x"].zero_point, q["x"].bits, q["x"].signed) == (np.float32(0.03), 128, 8, False)
    assert (q["y"].scale, q["y"].zero_point, q["y"].signed) == (np.float32(0.05), 0, False)
    conv = quantized.graph.nodes["conv"]
    assert np.array_equal(quantized.graph.constants[conv.inputs[1]], inits["w_q"])
    assert conv.attrs.input_zero_point == 128
    got = quantized.run({"x": x})["y"]
    # Same grid; the only difference allowed is the tie rule (half up in the integer model, half even in ONNX).
    assert np.abs(got - float_out["y"]).max() <= 0.05 + 1e-6


def test_qonnx_4_bit_model_keeps_its_widths():
    model, inits = brevitas_conv_model(RNG)
    w_scale = inits["w_s"]
    x = RNG.standard_normal((1, 3, 6, 6)).astype(np.float32)
    quantized, float_out = build_int(model, x)
    q = quantized.graph.quant
    assert (q["y"].bits, q["y"].signed, q["y"].scale) == (4, False, 0.25)
    assert (q["x"].bits, q["x"].signed) == (8, True)
    layer = quantized.lowered.layers[0]
    assert layer.weight_bits == 4
    assert np.allclose(layer.weight_scales, w_scale.ravel())
    w_int = quantized.graph.constants[quantized.graph.nodes["Conv_0"].inputs[1]]
    assert np.abs(w_int).max() <= 7  # narrow 4-bit
    got = quantized.run({"x": x})["y"]
    assert np.abs(got - float_out["y"]).max() <= 0.25 + 1e-6


# ---- a W3A3 QONNX export (default domain, BatchNorm, float logits) without calibration data ---------------
@pytest.fixture(scope="module")
def w3a3():
    """The W3A3 digits model, its float graph (the model's own execution) and its integer model lowered
    with no calibration statistics at all: every range must come from the model."""
    model = w3a3_digits()
    float_graph = import_model(model)
    graph = import_model(model)
    assert absorb_quantization(graph)
    optimize(graph)
    return float_graph, QuantizedModel(lower(graph, {}, BitConfig()), graph)


def test_w3a3_keeps_3_bit_weights_and_activations(w3a3):
    _, quantized = w3a3
    q, layers = quantized.graph.quant, quantized.lowered.layers
    # BatchNorm folding (conv1, conv2) and Gemm transposition (fc1, fc2) keep the model's integer weights
    assert [(layer.name, layer.weight_bits) for layer in layers] == [("conv1", 3), ("conv2", 3), ("fc1", 3), ("fc2", 3)]
    for node in quantized.graph.nodes.values():
        if node.op in ("QConv", "QDense"):
            assert np.abs(quantized.graph.constants[node.inputs[1]]).max() <= 3  # narrow 3-bit
    assert (q["image"].bits, q["image"].signed, q["image"].scale) == (8, False, np.float32(1 / 255))
    assert [(q[t].bits, q[t].signed) for t in ("r1", "p1", "r2", "p2", "r3")] == [(3, False)] * 5
    assert quantized.lowered.ranges == {}  # nothing calibrated


def test_w3a3_logits_stay_at_accumulator_precision(w3a3):
    _, quantized = w3a3
    fc2 = next(layer for layer in quantized.lowered.layers if layer.name == "fc2")
    logits = quantized.graph.quant["logits"]
    acc_scales = quantized.graph.quant["r3"].scale * np.asarray(fc2.weight_scales)
    assert logits.signed and logits.zero_point == 0 and logits.scale == acc_scales.min()
    assert logits.bits == 11 and fc2.acc_bits <= logits.bits  # the widest channel's reach, rescaled, never clipped
    node = quantized.graph.nodes["fc2"]
    assert (node.attrs.requant.lo, node.attrs.requant.hi) == (-1024, 1023)


def test_w3a3_without_calibration_tracks_its_own_float_execution(w3a3):
    float_graph, quantized = w3a3
    images, _ = digits_images("test")
    reference = run_float(float_graph, {"image": images})["logits"]
    logits = quantized.run({"image": images})["logits"]
    assert np.mean(reference.argmax(1) == logits.argmax(1)) >= 0.99
    assert sqnr_db(reference, logits) >= 25.0


def test_an_unquantized_tensor_without_calibration_is_an_error():
    model = w3a3_digits()
    graph = import_model(model)
    absorb_quantization(graph)
    optimize(graph)
    del graph.quant["r2"]  # as if the model had no Quant after conv2's ReLU
    with pytest.raises(DataError, match="'r2' has no range: the model does not quantize it and no "
                                                  "calibration data covers it"):
        lower(graph, {}, BitConfig())


# ---- QONNX Trunc after a pool: a right shift of the pool's integers ------------------------------------
@pytest.mark.parametrize("version", [1, 2])
def test_trunc_after_a_pool_is_an_exact_right_shift(version):
    model = trunc_pool_model(version, "FLOOR")
    float_graph, graph = import_model(model), import_model(model)
    absorb_quantization(graph)
    assert (graph.quant["g"].scale, graph.quant["g"].bits) == (np.float32(0.25 / 32), 8)  # the Trunc's input grid
    optimize(graph)
    quantized = QuantizedModel(lower(graph, {}, BitConfig()), graph)
    trunc = quantized.graph.nodes["trunc"]
    assert trunc.op == "QRequant" and trunc.attrs == QRequantAttrs(8, 1, 4, 0, 0, 15)  # floor(q / 16)
    out = quantized.graph.quant["t"]
    assert (out.bits, out.signed, out.scale) == (4, False, np.float32(0.25 / 32) * (16 if version == 2 else 1))
    images = digits_images("test")[0][:20]
    for x in images:
        expected = run_graph(float_graph, {"image": x[None]}, keep_all=True)["t"]
        got = run_graph(quantized.graph, quantized.quantize_inputs({"image": x[None]}), keep_all=True)["t"]
        np.testing.assert_array_equal(got * out.scale, expected.reshape(got.shape))


@pytest.mark.parametrize("mode,offset", [("CEIL", -7), ("ROUND", 0)])
def test_trunc_ceil_and_round_offsets(mode, offset):
    graph = import_model(trunc_pool_model(2, mode))
    absorb_quantization(graph)
    optimize(graph)
    trunc = lower(graph, {}, BitConfig()).graph.nodes["trunc"]
    assert (trunc.attrs.input_zero_point, trunc.attrs.shift) == (offset, 4)  # ceil(q / 16); ties round up


# ---- BipolarQuant: 1-bit weights are +-1; 1-bit activations stay an error ---------------------------------
def bipolar_conv_model(activation_bipolar: bool = False):
    """Quant(x, 8-bit) -> Conv(BipolarQuant(w), per-channel scale) -> Relu -> Quant (4-bit unsigned), in the
    default domain as FINN exports its binary-weight networks (or a BipolarQuant activation instead)."""
    rng = np.random.default_rng(11)
    inits = {"x_s": np.float32(2**-5), "zero": np.float32(0), "b8": np.float32(8), "b4": np.float32(4),
             "w": rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w_s": np.float32([0.5, 0.25, 0.125, 1])
             .reshape(4, 1, 1, 1), "y_s": np.float32(0.5)}
    out = helper.make_node("BipolarQuant", ["r", "y_s"], ["y"], name="bipolar_out") if activation_bipolar else \
        helper.make_node("Quant", ["r", "y_s", "zero", "b4"], ["y"], name="quant_out", signed=0)
    nodes = [helper.make_node("Quant", ["x", "x_s", "zero", "b8"], ["xq"], name="quant_in", signed=1),
             helper.make_node("BipolarQuant", ["w", "w_s"], ["wq"], name="bipolar_w"),
             helper.make_node("Conv", ["xq", "wq"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"), out]
    graph = helper.make_graph(nodes, "bnn", [tensor_value("x", [1, 3, 6, 6])], [tensor_value("y", [1, 4, 6, 6])],
                              initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = IR_VERSION
    return model


def test_bipolar_weights_are_plus_minus_one():
    x = RNG.standard_normal((1, 3, 6, 6)).astype(np.float32)
    quantized, float_out = build_int(bipolar_conv_model(), x)
    conv = quantized.graph.nodes["conv"]
    w_int = quantized.graph.constants[conv.inputs[1]]
    assert set(np.unique(w_int)) == {-1, 1} and quantized.lowered.layers[0].weight_bits == 2
    assert quantized.lowered.layers[0].weight_scales == (0.5, 0.25, 0.125, 1.0)
    # power-of-two scales: the float model's sums are exact, so the integer model matches it (ties aside)
    assert np.abs(quantized.run({"x": x})["y"] - float_out["y"]).max() <= 0.5


def test_bipolar_activations_are_refused_by_name():
    graph = import_model(bipolar_conv_model(activation_bipolar=True))
    with pytest.raises(UnsupportedModelError, match="'bipolar_out': 1-bit .* of an activation is not supported"):
        absorb_quantization(graph)
