import numpy as np
from onnx import helper

from hlsgen.passes import remove_identities
from tests.passes.helpers import apply_pass, onnx_graph, ops

SHAPE = np.array([1, 3, 4, 4], np.int64)


def relu_then(node, outputs=("y",), extra_nodes=()):
    """x -> Relu -> r -> `node` -> y."""
    return onnx_graph(
        [helper.make_node("Relu", ["x"], ["r"], name="relu"), node, *extra_nodes],
        {"x": (1, 3, 4, 4)},
        list(outputs),
        {"shape": SHAPE},
    )


def test_removes_identity_and_dropout():
    graph = onnx_graph(
        [
            helper.make_node("Identity", ["x"], ["a"]),
            helper.make_node("Dropout", ["a"], ["b"]),
            helper.make_node("Relu", ["b"], ["y"]),
        ],
        {"x": (1, 3)},
        ["y"],
    )
    assert apply_pass(graph, remove_identities)
    assert ops(graph) == ["Relu"]
    assert graph.nodes["Relu_y"].inputs == ("x",)


def test_removes_reshape_to_the_same_shape_and_identity_transpose():
    for node in (
        helper.make_node("Reshape", ["r", "shape"], ["y"]),
        helper.make_node("Transpose", ["r"], ["y"], perm=[0, 1, 2, 3]),
    ):
        graph = relu_then(node)
        assert apply_pass(graph, remove_identities)
        # y is a graph output, so the Relu now writes it.
        assert [(n.name, n.outputs) for n in graph.topological()] == [("relu", ("y",))]


def test_keeps_real_reshapes_and_transposes():
    for node in (
        helper.make_node("Reshape", ["r", "flat"], ["y"]),
        helper.make_node("Transpose", ["r"], ["y"], perm=[0, 2, 3, 1]),
    ):
        graph = onnx_graph(
            [helper.make_node("Relu", ["x"], ["r"]), node], {"x": (1, 3, 4, 4)}, ["y"], {"flat": np.array([1, 48])}
        )
        assert not apply_pass(graph, remove_identities)
        assert len(graph.nodes) == 2


def test_keeps_identity_between_a_graph_input_and_output():
    graph = onnx_graph([helper.make_node("Identity", ["x"], ["y"])], {"x": (1, 3)}, ["y"])
    assert not apply_pass(graph, remove_identities)
    assert ops(graph) == ["Identity"]


def test_keeps_identity_to_an_output_when_its_input_is_read_elsewhere():
    graph = relu_then(
        helper.make_node("Identity", ["r"], ["y"]),
        outputs=("y", "z"),
        extra_nodes=[helper.make_node("Sigmoid", ["r"], ["z"])],
    )
    assert not apply_pass(graph, remove_identities)
    assert ops(graph) == ["Relu", "Identity", "Sigmoid"]
