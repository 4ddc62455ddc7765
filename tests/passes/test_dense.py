import numpy as np
import pytest
from onnx import helper

from hlsgen.passes import fuse_dense
from tests.passes.helpers import apply_pass, onnx_graph, ops

RNG = np.random.default_rng(0)
W = RNG.standard_normal((4, 3))


def gemm(c=None, x_shape=(2, 4), **attrs):
    inits = {"w": W.T if attrs.get("transB") else W}
    inputs = ["x", "w"]
    if c is not None:
        inits["c"] = c
        inputs.append("c")
    return onnx_graph([helper.make_node("Gemm", inputs, ["y"], name="fc", **attrs)], {"x": x_shape}, ["y"], inits)


@pytest.mark.parametrize(
    "graph",
    [
        gemm(),
        gemm(c=RNG.standard_normal(3), alpha=0.5, beta=2.0, transB=1),
        gemm(c=RNG.standard_normal((1, 3)), beta=-1.0),
        gemm(c=np.float32(1.5)),
        gemm(c=RNG.standard_normal((1, 3)), x_shape=(1, 4)),
    ],
    ids=["no_bias", "alpha_beta_transB", "row_bias", "scalar_bias", "batch_one"],
)
def test_gemm_with_constant_weight_becomes_dense(graph):
    has_c = len(graph.nodes["fc"].inputs) == 3
    assert apply_pass(graph, fuse_dense)
    dense = graph.nodes["fc"]
    assert dense.op == "Dense" and dense.attrs.activation is None
    assert graph.shape(dense.inputs[1]) == (4, 3)
    assert len(dense.inputs) == (3 if has_c else 2)


def test_gemm_not_folded():
    # C differs between batch rows, A is transposed, or B is computed at run time.
    per_row_bias = gemm(c=RNG.standard_normal((2, 3)))
    transposed_a = onnx_graph(
        [helper.make_node("Gemm", ["x", "w"], ["y"], transA=1)], {"x": (4, 2)}, ["y"], {"w": W}
    )
    computed_b = onnx_graph([helper.make_node("Gemm", ["x", "w"], ["y"])], {"x": (2, 4), "w": (4, 3)}, ["y"])
    for graph in (per_row_bias, transposed_a, computed_b):
        assert not apply_pass(graph, fuse_dense)
        assert ops(graph) == ["Gemm"]


def test_matmul_with_constant_weight_becomes_dense():
    graph = onnx_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], {"x": (2, 4)}, ["y"], {"w": W})
    assert apply_pass(graph, fuse_dense)
    assert graph.nodes["mm"].op == "Dense"
    assert graph.nodes["mm"].inputs == ("x", "w")


def test_matmul_not_folded():
    batched = onnx_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], {"x": (2, 5, 4)}, ["y"], {"w": W})
    computed = onnx_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], {"x": (2, 4), "w": (4, 3)}, ["y"])
    for graph in (batched, computed):
        assert not apply_pass(graph, fuse_dense)
        assert ops(graph) == ["MatMul"]
