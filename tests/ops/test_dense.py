import numpy as np
import pytest
from onnx import helper

from hlsgen.ops.common import Activation
from hlsgen.ops.dense import DenseAttrs, dense
from tests.builders import assert_close_to_ort, make_model, tensor_value

RNG = np.random.default_rng(5)


def _rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize(
    "attrs, c_shape",
    [
        ({}, (4,)),
        ({}, None),
        ({}, ()),
        ({}, (1,)),
        ({}, (3, 1)),
        ({}, (3, 4)),
        ({"alpha": 0.5}, (4,)),
        ({"beta": -2.0}, (3, 4)),
        ({"transA": 1}, (4,)),
        ({"transB": 1}, (4,)),
        ({"alpha": 0.25, "beta": 0.35, "transA": 1, "transB": 1}, (1, 4)),
    ],
)
def test_gemm_matches_onnxruntime(attrs, c_shape):
    a_shape = (5, 3) if attrs.get("transA") else (3, 5)
    b = _rand(4, 5) if attrs.get("transB") else _rand(5, 4)
    inits = {"b": b}
    inputs = ["a", "b"]
    if c_shape is not None:
        inits["c"] = _rand(*c_shape)
        inputs.append("c")
    node = helper.make_node("Gemm", inputs, ["y"], **attrs)
    model = make_model([node], [tensor_value("a", a_shape)], [tensor_value("y", None)], inits)
    assert_close_to_ort(model)


def test_gemm_with_weights_as_graph_inputs():
    node = helper.make_node("Gemm", ["a", "b", "c"], ["y"], transB=1)
    inputs = [tensor_value("a", [2, 6]), tensor_value("b", [3, 6]), tensor_value("c", [3])]
    assert_close_to_ort(make_model([node], inputs, [tensor_value("y", None)]))


@pytest.mark.parametrize(
    "a_shape, b_shape",
    [
        ((4,), (4,)),
        ((4,), (2, 4, 3)),
        ((3, 4), (4,)),
        ((3, 4), (4, 5)),
        ((2, 3, 4), (2, 4, 5)),
        ((2, 1, 3, 4), (5, 4, 2)),
        ((2, 3, 3, 4), (4,)),
    ],
)
def test_matmul_matches_onnxruntime(a_shape, b_shape):
    node = helper.make_node("MatMul", ["a", "b"], ["y"])
    inputs = [tensor_value("a", a_shape), tensor_value("b", b_shape)]
    graph = assert_close_to_ort(make_model([node], inputs, [tensor_value("y", None)]))
    assert graph.tensors["y"].shape == np.matmul(np.zeros(a_shape), np.zeros(b_shape)).shape


def test_matmul_with_constant_weight():
    node = helper.make_node("MatMul", ["a", "w"], ["y"])
    model = make_model([node], [tensor_value("a", [1, 7])], [tensor_value("y", None)], {"w": _rand(7, 3)})
    assert_close_to_ort(model)


def test_dense_flattens_then_adds_bias_then_activates():
    x, w, b = _rand(2, 3, 2, 2), _rand(12, 5), _rand(5)
    attrs = DenseAttrs(Activation("leaky_relu", alpha=0.1))
    z = x.reshape(2, 12) @ w + b
    expected = np.where(z >= 0, z, 0.1 * z)
    got = dense(attrs, x, w, b)
    assert got.dtype == np.float32 and got.shape == (2, 5)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_dense_without_bias_or_activation():
    x, w = _rand(3, 4), _rand(4, 2)
    np.testing.assert_allclose(dense(DenseAttrs(), x, w), x @ w, rtol=1e-6)


def test_dense_clip_activation():
    x, w, b = _rand(4, 6), _rand(6, 3), _rand(3)
    got = dense(DenseAttrs(Activation("clip", lo=0.0, hi=0.5)), x, w, b)
    np.testing.assert_allclose(got, np.clip(x @ w + b, 0.0, 0.5), rtol=1e-6)
