import numpy as np
from onnx import helper

from hlsgen.passes import fold_constants
from tests.passes.helpers import apply_pass, onnx_graph, ops

C = {"c1": np.full(4, 2.0), "c2": np.arange(4.0), "c3": np.ones(4)}


def test_folds_a_chain_of_constant_nodes():
    graph = onnx_graph(
        [
            helper.make_node("Mul", ["c1", "c2"], ["a"]),
            helper.make_node("Add", ["a", "c3"], ["b"]),
            helper.make_node("Add", ["x", "b"], ["y"]),
        ],
        {"x": (1, 4)},
        ["y"],
        C,
    )
    assert apply_pass(graph, fold_constants)
    assert ops(graph) == ["Add"]
    np.testing.assert_array_equal(graph.constants["b"], 2.0 * np.arange(4.0) + 1.0)


def test_keeps_the_producer_of_a_graph_output():
    graph = onnx_graph(
        [helper.make_node("Add", ["c1", "c2"], ["y"]), helper.make_node("Add", ["x", "x"], ["z"])],
        {"x": (1, 4)},
        ["y", "z"],
        C,
    )
    assert not apply_pass(graph, fold_constants)
    assert ops(graph) == ["Add", "Add"]


def test_ignores_nodes_reading_a_graph_input():
    graph = onnx_graph([helper.make_node("Add", ["x", "c1"], ["y"])], {"x": (1, 4)}, ["y"], C)
    assert not apply_pass(graph, fold_constants)
