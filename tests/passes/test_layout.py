import numpy as np
import onnx
import pytest
from onnx import helper

from hlsgen.build import BuildOptions, build
from hlsgen.passes import activation_before_flatten, cancel_transposes_reshapes, fuse_dense
from tests.builders import make_model, tensor_value
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


# ---- an activation after a Flatten (found by hlsgen fuzz, seeds 14 and 15 of the ci profile) ----
def pool_flatten_selu(pads=(2, 5, 0, 0), reader=("Selu", {})):
    """The shrunk reproducer: a 6x6/6 MaxPool with asymmetric pads on a 7x7 map (output 1x2), a Flatten, a
    Selu: the C-sim read the flattened map as a vector of 2 channels and gave 0 for element [1]."""
    op, attrs = reader
    return make_model([helper.make_node("MaxPool", ["x"], ["p"], name="pool", kernel_shape=[6, 6], strides=[6, 6],
                                        pads=list(pads)),
                       helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
                       helper.make_node(op, ["f"], ["y"], name="act", **attrs)],
                      [tensor_value("x", [1, 1, 7, 7])], [tensor_value("y", None)])


def test_activation_moves_before_the_flatten():
    graph = onnx_graph([helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Flatten", ["r"], ["f"]),
                        helper.make_node("Selu", ["f"], ["s"], name="selu"),
                        helper.make_node("MatMul", ["s", "w"], ["y"], name="fc")],
                       {"x": (1, 2, 3, 4)}, ["y"], {"w": np.random.default_rng(0).standard_normal((24, 5))})
    assert apply_pass(graph, activation_before_flatten)
    assert ops(graph) == ["Relu", "Selu", "Reshape", "MatMul"]
    assert graph.shape(graph.nodes["selu"].outputs[0]) == (1, 2, 3, 4)
    assert not activation_before_flatten(graph)


def test_activation_after_a_flatten_read_elsewhere_stays():
    graph = flatten_then_dense(extra_nodes=[helper.make_node("Sigmoid", ["f"], ["z"])], outputs=("y", "z"))
    assert not apply_pass(graph, activation_before_flatten)


@pytest.mark.parametrize("reader", [("Selu", {}), ("HardSigmoid", {"alpha": 0.25}), ("Sigmoid", {})])
def test_activation_after_a_flatten_is_bit_exact_in_csim(tmp_path, reader, monkeypatch):
    monkeypatch.setenv("HLSGEN_CSIM_PORTABLE", "1")
    model = tmp_path / "model.onnx"
    onnx.save(pool_flatten_selu(reader=reader), model)
    calib = tmp_path / "calib.npz"
    np.savez(calib, x=np.random.default_rng(1).standard_normal((12, 1, 7, 7)).astype(np.float32))
    result = build(BuildOptions(model, "systolic8x8", tmp_path / "out", calib, verify=("csim",)))
    assert result.verified["csim"].startswith("24 output integers")
