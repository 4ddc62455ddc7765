"""A depthwise Conv reading the model's input reads it through an identity copy (hlsgen.quant.lower): the
accelerator's depthwise window memory are filled by the writer, which the input stream does not pass. The copy
changes no integer, and the RTL then has every layer (before, it refused such a model)."""
import numpy as np
from onnx import helper

from hlsgen.hw import load_target, map_model
from hlsgen.reference import run_graph
from tests.builders import make_model, tensor_value
from tests.hw.models import _quantize
from tests.rtl.program_of import rtl_program


def depthwise_first():
    rng = np.random.default_rng(3)
    inits = {"wd": rng.standard_normal((4, 1, 3, 3)).astype(np.float32), "wp": rng.standard_normal((6, 4, 1, 1)).astype(np.float32)}
    nodes = [helper.make_node("Conv", ["x", "wd"], ["d"], name="dw", group=4, pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["d"], ["r"], name="relu"),
             helper.make_node("Conv", ["r", "wp"], ["y"], name="pw"),
             helper.make_node("Conv", ["x", "wp"], ["z"], name="pw_of_input")]  # a second, ordinary reader
    return make_model(nodes, [tensor_value("x", [1, 4, 6, 6])], [tensor_value("y", None), tensor_value("z", None)],
                      inits)


def test_the_depthwise_layer_reads_an_identity_copy_of_the_input():
    graph = _quantize(depthwise_first())
    (copy,) = [n for n in graph.nodes.values() if n.op == "QRequant" and n.inputs == ("x",)]
    a = copy.attrs
    assert (a.multiplier, a.shift, a.input_zero_point) == (1, 0, a.zero_point)
    assert graph.quant[copy.outputs[0]] == graph.quant["x"]
    readers = {n.name: n.inputs[0] for n in graph.nodes.values() if n.op == "QConv"}
    assert readers["dw"] == copy.outputs[0] and readers["pw_of_input"] == "x"
    x = np.random.default_rng(0).integers(graph.quant["x"].qmin, graph.quant["x"].qmax + 1, (2, 4, 6, 6))
    values = run_graph(graph, {"x": x}, keep_all=True)
    assert np.array_equal(values[copy.outputs[0]], x)


def test_the_rtl_takes_a_model_whose_first_layer_is_depthwise():
    graph = _quantize(depthwise_first())
    mapping = map_model(graph, load_target("systolic8x8"))
    assert any(row.nodes == (n,) for row in mapping.layers for n in graph.nodes if n.endswith("window_copy"))
    rtl_program(graph, load_target("systolic8x8"))  # no refusal
