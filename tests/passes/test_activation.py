import numpy as np
import pytest
from onnx import helper

from hlsgen.ops.common import Activation
from hlsgen.passes import fuse_activation, fuse_dense
from tests.passes.helpers import apply_pass, onnx_graph, ops

RNG = np.random.default_rng(0)
INITS = {"w": RNG.standard_normal((3, 2, 3, 3)), "lo": np.float32(0.0), "hi": np.float32(6.0)}


def conv_then(activation, outputs=("y",), extra_nodes=()):
    return onnx_graph(
        [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"), activation, *extra_nodes],
        {"x": (1, 2, 5, 5)},
        list(outputs),
        INITS,
    )


@pytest.mark.parametrize(
    "activation, fused",
    [
        (helper.make_node("Relu", ["c"], ["y"]), Activation("relu")),
        (helper.make_node("Clip", ["c", "lo", "hi"], ["y"]), Activation("clip", lo=0.0, hi=6.0)),
        (helper.make_node("Clip", ["c", "", "hi"], ["y"]), Activation("clip", lo=-np.inf, hi=6.0)),
        (helper.make_node("LeakyRelu", ["c"], ["y"], alpha=0.25), Activation("leaky_relu", alpha=0.25)),
    ],
    ids=["relu", "relu6", "clip_max_only", "leaky_relu"],
)
def test_activation_after_conv_is_fused(activation, fused):
    graph = conv_then(activation)
    assert apply_pass(graph, fuse_activation)
    assert ops(graph) == ["Conv"]
    assert graph.nodes["conv"].attrs.activation == fused
    assert graph.nodes["conv"].outputs == ("y",)


def test_activation_after_dense_is_fused():
    graph = onnx_graph(
        [helper.make_node("Gemm", ["x", "w"], ["d"], name="fc"), helper.make_node("Relu", ["d"], ["y"])],
        {"x": (2, 4)},
        ["y"],
        {"w": RNG.standard_normal((4, 3))},
    )
    assert apply_pass(graph, fuse_dense)
    assert apply_pass(graph, fuse_activation)
    assert ops(graph) == ["Dense"]


def test_conv_output_read_elsewhere_is_not_fused():
    graph = conv_then(
        helper.make_node("Relu", ["c"], ["y"]), outputs=("y", "z"), extra_nodes=[helper.make_node("Sigmoid", ["c"], ["z"])]
    )
    assert not apply_pass(graph, fuse_activation)


def test_second_activation_is_not_fused():
    graph = conv_then(helper.make_node("Relu", ["c"], ["r"]), extra_nodes=[helper.make_node("Clip", ["r", "lo", "hi"], ["y"])])
    assert apply_pass(graph, fuse_activation)
    assert not apply_pass(graph, fuse_activation)
    assert ops(graph) == ["Conv", "Clip"]


def test_other_activations_are_not_fused():
    graph = conv_then(helper.make_node("Sigmoid", ["c"], ["y"]))
    assert not apply_pass(graph, fuse_activation)
