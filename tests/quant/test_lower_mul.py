"""A Mul of two maps lowers to QMul (hlsgen.quant.lower): the map first, a per-channel gate second, whichever
order the model writes them in; the gate's multiplier holds scale_a * scale_b / scale_y."""
import numpy as np
import pytest
from onnx import helper

from hlsgen.errors import HlsgenError
from hlsgen.reference import run_graph
from tests.builders import make_model, tensor_value
from tests.hw.models import _quantize
from tests.rtl.squeeze_excite import squeeze_excite_model


@pytest.mark.parametrize("gate_first", [False, True])
def test_the_gate_product_is_a_qmul_of_the_map_and_the_gate(gate_first):
    graph = _quantize(squeeze_excite_model(gate_first))
    (node,) = [n for n in graph.nodes.values() if n.op == "QMul"]
    assert "Mul" not in {n.op for n in graph.nodes.values()}
    assert graph.shape(node.inputs[0]) == graph.shape(node.outputs[0]) == (1, 16, 8, 8)
    assert graph.shape(node.inputs[1]) == (1, 16, 1, 1)
    qa, qb, qy = (graph.quant[t] for t in (*node.inputs, node.outputs[0]))
    a = node.attrs
    assert (a.a_zero_point, a.b_zero_point, a.zero_point) == (qa.zero_point, qb.zero_point, qy.zero_point)
    assert a.multiplier / 2**a.shift == pytest.approx(qa.scale * qb.scale / qy.scale, rel=2**-15)


def test_the_integer_product_follows_the_float_one():
    graph = _quantize(squeeze_excite_model())
    (node,) = [n for n in graph.nodes.values() if n.op == "QMul"]
    qx = graph.quant["x"]
    x = np.random.default_rng(1).integers(qx.qmin, qx.qmax + 1, (4, 8, 8, 8))
    values = run_graph(graph, {"x": x}, keep_all=True)
    real = lambda t: (values[t] - graph.quant[t].zero_point) * graph.quant[t].scale  # noqa: E731
    a, b = node.inputs
    step = graph.quant[node.outputs[0]].scale
    assert np.abs(real(node.outputs[0]) - real(a) * real(b)).max() <= step  # half a step of rounding, and the gate's


def product_model(gate_shape):
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"), helper.make_node("Relu", ["g"], ["s"], name="gate"),
             helper.make_node("Mul", ["r", "s"], ["m"], name="product"),
             helper.make_node("Conv", ["m", "w"], ["y"], name="head")]
    w = np.ones((2, 4, 1, 1), np.float32)
    return make_model(nodes, [tensor_value("x", [1, 4, 3, 3]), tensor_value("g", gate_shape)],
                      [tensor_value("y", None)], {"w": w})


def test_a_product_of_equal_shapes_lowers_and_a_row_broadcast_does_not():
    assert any(n.op == "QMul" for n in _quantize(product_model([1, 4, 3, 3])).nodes.values())
    with pytest.raises(HlsgenError, match="product"):
        _quantize(product_model([1, 4, 1, 3]))


def test_a_relu_reading_the_product_alone_saturates_inside_the_qmul():
    model = product_model([1, 4, 1, 1])
    graph = model.graph
    mul = next(n for n in graph.node if n.name == "product")
    mul.output[0] = "m0"
    graph.node.insert(list(graph.node).index(mul) + 1, helper.make_node("Relu", ["m0"], ["m"], name="clamp"))
    quantized = _quantize(model)
    (node,) = [n for n in quantized.nodes.values() if n.op == "QMul"]
    assert node.outputs == ("m",) and "clamp" not in quantized.nodes
    assert node.attrs.lo == max(quantized.quant["m"].zero_point, quantized.quant["m"].qmin)
