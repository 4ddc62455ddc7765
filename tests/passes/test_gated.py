"""fuse_gated_activations: SiLU, HardSwish, Mish and GELU as exporters write them become one elementwise op
(a lookup table on the vector unit); the graph computes what it did (apply_pass), and a gate whose inner
tensor something else reads, or whose constants are not the function's, stays as it is."""
import math

import numpy as np
import pytest
from onnx import helper

from hlsgen.passes import fuse_gated_activations, optimize
from hlsgen.reference import run_graph
from tests.builders import assert_close_to_ort, make_model, run_ort, tensor_value
from tests.passes.helpers import apply_pass, onnx_graph, ops

SHAPE = (1, 4, 5, 5)
W = np.random.default_rng(0).standard_normal((4, 4, 1, 1))


def _conv_then(nodes, outputs=("y",), inits=None):
    return onnx_graph([helper.make_node("Conv", ["x", "w"], ["c"], name="conv"), *nodes], {"x": SHAPE}, list(outputs),
                      {"w": W, **(inits or {})})


SILU = [helper.make_node("Sigmoid", ["c"], ["s"], name="sig"), helper.make_node("Mul", ["c", "s"], ["y"], name="mul")]
SILU_SWAPPED = [SILU[0], helper.make_node("Mul", ["s", "c"], ["y"], name="mul")]
HARD_SWISH = [helper.make_node("HardSigmoid", ["c"], ["s"], name="hsig", alpha=1 / 6, beta=0.5),
              helper.make_node("Mul", ["c", "s"], ["y"], name="mul")]
MISH = [helper.make_node("Softplus", ["c"], ["p"], name="softplus"), helper.make_node("Tanh", ["p"], ["t"], name="tanh"),
        helper.make_node("Mul", ["c", "t"], ["y"], name="mul")]
GELU_INITS = {"sqrt2": np.float32(math.sqrt(2)), "one": np.float32(1), "half": np.float32(0.5),
              "inv_sqrt2": np.float32(1 / math.sqrt(2))}


def _gelu(scaled="div", half_first=False):
    """PyTorch's nn.GELU before opset 20: Div -> Erf -> Add 1 -> Mul x -> Mul 0.5 (or 0.5 x first)."""
    scale = (helper.make_node("Div", ["c", "sqrt2"], ["d"], name="div") if scaled == "div"
             else helper.make_node("Mul", ["c", "inv_sqrt2"], ["d"], name="div"))
    nodes = [scale, helper.make_node("Erf", ["d"], ["e"], name="erf"), helper.make_node("Add", ["e", "one"], ["a"], name="add")]
    if half_first:
        return nodes + [helper.make_node("Mul", ["c", "half"], ["h"], name="half"),
                        helper.make_node("Mul", ["h", "a"], ["y"], name="mul")]
    return nodes + [helper.make_node("Mul", ["c", "a"], ["m"], name="mx"),
                    helper.make_node("Mul", ["m", "half"], ["y"], name="mul")]


@pytest.mark.parametrize("nodes, op", [(SILU, "SiLU"), (SILU_SWAPPED, "SiLU"), (HARD_SWISH, "HardSwish"), (MISH, "Mish"),
                                       (_gelu(), "Gelu"), (_gelu("mul"), "Gelu"), (_gelu(half_first=True), "Gelu")],
                         ids=["silu", "silu_swapped", "hardswish", "mish", "gelu", "gelu_mul", "gelu_half_first"])
def test_an_exported_gate_becomes_one_activation(nodes, op):
    graph = _conv_then(nodes, inits=GELU_INITS)
    assert apply_pass(graph, fuse_gated_activations)
    assert ops(graph) == ["Conv", op]
    (fused,) = [n for n in graph.nodes.values() if n.op == op]
    assert fused.inputs == ("c",) and fused.outputs == ("y",) and fused.name == "mul"


def test_a_gate_whose_sigmoid_is_also_an_output_stays():
    graph = _conv_then(SILU, outputs=("y", "s"))
    assert not apply_pass(graph, fuse_gated_activations)
    assert ops(graph) == ["Conv", "Sigmoid", "Mul"]


def test_a_gate_of_another_tensor_stays():
    """Mul(c, Sigmoid(r)) with r != c is an attention-style product, not SiLU."""
    graph = _conv_then([helper.make_node("Relu", ["c"], ["r"]), helper.make_node("Sigmoid", ["r"], ["s"]),
                        helper.make_node("Mul", ["c", "s"], ["y"])])
    assert not apply_pass(graph, fuse_gated_activations)


def test_a_hard_sigmoid_gate_with_other_constants_stays():
    graph = _conv_then([helper.make_node("HardSigmoid", ["c"], ["s"], alpha=0.2, beta=0.5),
                        helper.make_node("Mul", ["c", "s"], ["y"])])
    assert not apply_pass(graph, fuse_gated_activations)


def test_a_gelu_with_the_wrong_constant_stays():
    inits = GELU_INITS | {"sqrt2": np.float32(1.5)}
    graph = _conv_then(_gelu(), inits=inits)
    assert not apply_pass(graph, fuse_gated_activations)


@pytest.mark.parametrize("nodes", [SILU, MISH, _gelu()], ids=["silu", "mish", "gelu"])
def test_the_optimized_graph_follows_onnxruntime(nodes):
    """The whole pipeline (the fused op's float kernel) against onnxruntime on the exported form."""
    model = make_model([helper.make_node("Conv", ["x", "w"], ["c"], name="conv"), *nodes], [tensor_value("x", SHAPE)],
                       [tensor_value("y", None)], {"w": W.astype(np.float32)} | GELU_INITS)
    feeds = {"x": (np.random.default_rng(1).standard_normal(SHAPE) * 3).astype(np.float32)}
    graph = assert_close_to_ort(model, feeds)
    optimize(graph)
    assert "Mul" not in ops(graph)
    want = run_ort(model, feeds)["y"]
    got = run_graph(graph, feeds)["y"]
    assert np.abs(got - want).max() <= 1e-4 * np.abs(want).max()
