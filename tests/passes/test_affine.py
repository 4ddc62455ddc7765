"""Add, Sub, Mul and Div of a map and a constant become a ChannelAffine (found by hlsgen fuzz: a constant
after a Conv's ReLU or a pool was refused with exit 8, ci seeds 7, 27, 34, 39, 45, 85)."""
import numpy as np
import onnx
import pytest
from onnx import helper

from hlsgen.build import BuildOptions, build
from hlsgen.passes import constant_arithmetic_as_affine
from tests.builders import make_model, tensor_value
from tests.passes.helpers import apply_pass, onnx_graph, ops

PER_CHANNEL = np.array([0.5, 1.5, 0.75], np.float32).reshape(3, 1, 1)


@pytest.mark.parametrize("op,constant_first", [("Add", False), ("Add", True), ("Sub", False), ("Sub", True),
                                               ("Mul", True), ("Div", False)])
def test_constant_arithmetic_becomes_an_affine(op, constant_first):
    inputs = ["k", "r"] if constant_first else ["r", "k"]
    graph = onnx_graph([helper.make_node("Relu", ["x"], ["r"]), helper.make_node(op, inputs, ["y"], name="op")],
                       {"x": (1, 3, 4, 5)}, ["y"], {"k": PER_CHANNEL})
    assert apply_pass(graph, constant_arithmetic_as_affine)
    assert ops(graph) == ["Relu", "ChannelAffine"]


@pytest.mark.parametrize("constant", [np.float32(2.0), np.random.default_rng(0).uniform(1, 2, (1, 3, 4, 5)).astype(np.float32)])
def test_a_scalar_is_an_affine_but_not_an_elementwise_tensor(constant):
    graph = onnx_graph([helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Mul", ["r", "k"], ["y"])],
                       {"x": (1, 3, 4, 5)}, ["y"], {"k": constant})
    assert apply_pass(graph, constant_arithmetic_as_affine) == (constant.size == 1)


def test_a_constant_divided_by_a_map_stays():
    graph = onnx_graph([helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Div", ["k", "r"], ["y"])],
                       {"x": (1, 3, 4, 5)}, ["y"], {"k": PER_CHANNEL})
    assert not constant_arithmetic_as_affine(graph)


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div"])
def test_constant_after_a_relu_and_a_pool_is_bit_exact_in_csim(tmp_path, monkeypatch, op):
    """The shrunk reproducers' form: Conv -> Relu -> op(constant) and MaxPool -> op(constant)."""
    monkeypatch.setenv("HLSGEN_CSIM_PORTABLE", "1")
    rng = np.random.default_rng(3)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node(op, ["r", "k"], ["a"], name="first"),
             helper.make_node("MaxPool", ["a"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node(op, ["p", "k"], ["y"], name="second")]
    model = make_model(nodes, [tensor_value("x", [1, 2, 6, 6])], [tensor_value("y", None)],
                       {"w": (rng.standard_normal((3, 2, 3, 3)) * 0.5).astype(np.float32), "k": PER_CHANNEL})
    onnx.save(model, tmp_path / "model.onnx")
    np.savez(tmp_path / "calib.npz", x=rng.standard_normal((10, 2, 6, 6)).astype(np.float32))
    result = build(BuildOptions(tmp_path / "model.onnx", "systolic8x8", tmp_path / "out", tmp_path / "calib.npz",
                                verify=("csim",)))
    assert result.verified["csim"].startswith("270 output integers")
