import numpy as np
from onnx import helper

from hlsgen.passes import cancel_transposes_reshapes, fuse_dense
from tests.passes.helpers import apply_pass, onnx_graph, ops


def transposes(perm1, perm2, outputs=("y",), extra_nodes=()):
    """x -> Relu -> Transpose(perm1) -> Transpose(perm2) -> y."""
    return onnx_graph(
        [
            helper.make_node("Relu", ["x"], ["r"], name="relu"),
            helper.make_node("Transpose", ["r"], ["t"], name="first", perm=list(perm1)),
            helper.make_node("Transpose", ["t"], ["y"], name="second", perm=list(perm2)),
            *extra_nodes,
        ],
        {"x": (1, 2, 3, 4)},
        list(outputs),
    )


def test_two_transposes_compose_into_one():
    graph = transposes((0, 2, 3, 1), (1, 0, 3, 2))
    assert apply_pass(graph, cancel_transposes_reshapes)
    assert ops(graph) == ["Relu", "Transpose"]
    assert graph.nodes["second"].inputs == ("r",)


def test_inverse_transposes_cancel():
    graph = transposes((0, 2, 3, 1), (0, 3, 1, 2))
    assert apply_pass(graph, cancel_transposes_reshapes)
    assert [(n.name, n.outputs) for n in graph.topological()] == [("relu", ("y",))]


def test_transpose_read_elsewhere_stays_for_its_other_reader():
    graph = transposes(
        (0, 2, 3, 1),
        (0, 3, 1, 2),
        outputs=("u", "z"),
        extra_nodes=[helper.make_node("Relu", ["t"], ["z"]), helper.make_node("Sigmoid", ["y"], ["u"])],
    )
    assert apply_pass(graph, cancel_transposes_reshapes)
    assert sorted(ops(graph)) == ["Relu", "Relu", "Sigmoid", "Transpose"]
    assert graph.producer("u").inputs == ("r",)


def test_two_reshapes_compose_into_one():
    graph = onnx_graph(
        [
            helper.make_node("Relu", ["x"], ["r"]),
            helper.make_node("Reshape", ["r", "s1"], ["a"]),
            helper.make_node("Reshape", ["a", "s2"], ["y"], name="second"),
        ],
        {"x": (1, 2, 3, 4)},
        ["y"],
        {"s1": np.array([1, 24], np.int64), "s2": np.array([1, 6, 4], np.int64)},
    )
    assert apply_pass(graph, cancel_transposes_reshapes)
    assert ops(graph) == ["Relu", "Reshape"]
    assert graph.nodes["second"].inputs == ("r",)


def flatten_then_dense(extra_nodes=(), outputs=("y",)):
    graph = onnx_graph(
        [
            helper.make_node("Relu", ["x"], ["r"]),
            helper.make_node("Flatten", ["r"], ["f"]),
            helper.make_node("MatMul", ["f", "w"], ["y"], name="fc"),
            *extra_nodes,
        ],
        {"x": (1, 2, 3, 4)},
        list(outputs),
        {"w": np.random.default_rng(0).standard_normal((24, 5))},
    )
    assert fuse_dense(graph)
    return graph


def test_flatten_before_dense_is_dropped():
    graph = flatten_then_dense()
    assert apply_pass(graph, cancel_transposes_reshapes)
    assert ops(graph) == ["Relu", "Dense"]
    assert graph.nodes["fc"].inputs[0] == "r"


def test_flatten_with_another_reader_is_kept():
    graph = flatten_then_dense(extra_nodes=[helper.make_node("Sigmoid", ["f"], ["z"])], outputs=("y", "z"))
    assert not apply_pass(graph, cancel_transposes_reshapes)
    assert ops(graph) == ["Relu", "Reshape", "Dense", "Sigmoid"]


def test_flatten_that_is_a_graph_output_is_kept():
    graph = flatten_then_dense(outputs=("y", "f"))
    assert not apply_pass(graph, cancel_transposes_reshapes)
    assert ops(graph) == ["Relu", "Reshape", "Dense"]
