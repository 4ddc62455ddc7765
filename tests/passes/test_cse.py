import numpy as np
from onnx import helper

from hlsgen.passes import eliminate_common_subexpressions
from tests.passes.helpers import apply_pass, onnx_graph, ops

RNG = np.random.default_rng(0)
W = RNG.standard_normal((3, 2, 3, 3))


def two_convs(w2: str = "w"):
    return onnx_graph(
        [
            helper.make_node("Conv", ["x", "w"], ["a"], name="conv_a", pads=[1, 1, 1, 1]),
            helper.make_node("Conv", ["x", w2], ["b"], name="conv_b", pads=[1, 1, 1, 1]),
            helper.make_node("Add", ["a", "b"], ["y"]),
        ],
        {"x": (1, 2, 6, 6)},
        ["y"],
        {"w": W, "w_copy": W.copy(), "w_other": W + 1.0},
    )


def test_merges_identical_convs():
    graph = two_convs()
    assert apply_pass(graph, eliminate_common_subexpressions)
    assert ops(graph) == ["Conv", "Add"]
    assert graph.nodes["Add_y"].inputs == ("a", "a")


def test_compares_constant_inputs_by_value():
    graph = two_convs(w2="w_copy")
    assert apply_pass(graph, eliminate_common_subexpressions)
    assert ops(graph) == ["Conv", "Add"]


def test_keeps_convs_with_different_weights():
    graph = two_convs(w2="w_other")
    assert not apply_pass(graph, eliminate_common_subexpressions)
    assert ops(graph) == ["Conv", "Conv", "Add"]


def test_keeps_nodes_with_different_attributes():
    graph = onnx_graph(
        [
            helper.make_node("LeakyRelu", ["x"], ["a"], alpha=0.1),
            helper.make_node("LeakyRelu", ["x"], ["b"], alpha=0.2),
            helper.make_node("Add", ["a", "b"], ["y"]),
        ],
        {"x": (1, 4)},
        ["y"],
    )
    assert not apply_pass(graph, eliminate_common_subexpressions)
    assert ops(graph) == ["LeakyRelu", "LeakyRelu", "Add"]


def test_merging_keeps_graph_output_names():
    # Both Adds compute x + c: the one producing graph output "y" must survive.
    graph = onnx_graph(
        [
            helper.make_node("Add", ["x", "c"], ["t"], name="inner"),
            helper.make_node("Mul", ["t", "c"], ["z"]),
            helper.make_node("Add", ["x", "c"], ["y"], name="outer"),
        ],
        {"x": (1, 4)},
        ["z", "y"],
        {"c": np.full(4, 3.0)},
    )
    assert apply_pass(graph, eliminate_common_subexpressions)
    assert sorted(graph.nodes) == ["Mul_z", "outer"]
    assert graph.nodes["Mul_z"].inputs[0] == "y"


def test_two_graph_outputs_computed_alike_both_stay():
    graph = onnx_graph(
        [helper.make_node("Add", ["x", "c"], ["y1"]), helper.make_node("Add", ["x", "c"], ["y2"])],
        {"x": (1, 4)},
        ["y1", "y2"],
        {"c": np.full(4, 3.0)},
    )
    assert not apply_pass(graph, eliminate_common_subexpressions)
    assert ops(graph) == ["Add", "Add"]
