"""Pre-quantized models keep their scales, zero points, widths and integer weights."""
import numpy as np
from onnx import helper

from hlsgen.frontend import import_model
from hlsgen.passes import optimize
from hlsgen.quant import quantize
from hlsgen.quant.prequant import absorb_quantization
from hlsgen.reference import run_graph
from tests.builders import make_model, tensor_value
from tests.ops.test_quantize import brevitas_conv_model

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
