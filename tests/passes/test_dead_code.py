import numpy as np
from onnx import helper

from hlsgen.passes import eliminate_dead_nodes
from tests.passes.helpers import apply_pass, onnx_graph, ops


def test_removes_a_branch_that_reaches_no_output():
    graph = onnx_graph(
        [
            helper.make_node("Add", ["x", "c"], ["y"]),
            helper.make_node("Mul", ["x", "c"], ["unused"]),
            helper.make_node("Sub", ["unused", "c"], ["also_unused"], name="dead_sub"),
        ],
        {"x": (1, 4)},
        ["y"],
        {"c": np.ones(4)},
    )
    assert apply_pass(graph, eliminate_dead_nodes)
    assert ops(graph) == ["Add"]


def test_keeps_a_graph_whose_nodes_are_all_live():
    graph = onnx_graph(
        [helper.make_node("Mul", ["x", "c"], ["m"]), helper.make_node("Add", ["m", "x"], ["y"])],
        {"x": (1, 4)},
        ["y", "m"],
        {"c": np.ones(4)},
    )
    assert not apply_pass(graph, eliminate_dead_nodes)
    assert ops(graph) == ["Mul", "Add"]
