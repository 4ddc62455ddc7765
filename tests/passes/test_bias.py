from dataclasses import replace

import numpy as np
import pytest
from onnx import helper

from hlsgen.ops.common import Activation
from hlsgen.passes import fuse_bias, fuse_dense
from tests.passes.helpers import apply_pass, onnx_graph, ops

RNG = np.random.default_rng(0)
INITS = {
    "w": RNG.standard_normal((3, 2, 3, 3)),
    "b": RNG.standard_normal(3),
    "per_channel": RNG.standard_normal((1, 3, 1, 1)),
    "per_channel_3d": RNG.standard_normal((3, 1, 1)),
    "scalar": np.float32(0.25),
    "per_pixel": RNG.standard_normal((1, 3, 3, 3)),
}


def conv_add(conv_inputs=("x", "w", "b"), add_inputs=("c", "per_channel"), outputs=("y",), extra_nodes=()):
    return onnx_graph(
        [
            helper.make_node("Conv", list(conv_inputs), ["c"], name="conv"),
            helper.make_node("Add", list(add_inputs), ["y"]),
            *extra_nodes,
        ],
        {"x": (1, 2, 5, 5)},
        list(outputs),
        INITS,
    )


@pytest.mark.parametrize(
    "graph",
    [
        conv_add(),
        conv_add(conv_inputs=("x", "w")),
        conv_add(add_inputs=("per_channel_3d", "c")),
        conv_add(add_inputs=("c", "scalar")),
    ],
    ids=["with_bias", "without_bias", "constant_first", "scalar"],
)
def test_per_channel_add_after_conv_becomes_its_bias(graph):
    assert apply_pass(graph, fuse_bias)
    assert ops(graph) == ["Conv"]
    assert graph.nodes["conv"].outputs == ("y",)


def test_add_after_dense_becomes_its_bias():
    graph = onnx_graph(
        [helper.make_node("MatMul", ["x", "w"], ["m"], name="fc"), helper.make_node("Add", ["m", "b"], ["y"])],
        {"x": (2, 4)},
        ["y"],
        {"w": RNG.standard_normal((4, 3)), "b": RNG.standard_normal(3)},
    )
    assert apply_pass(graph, fuse_dense)
    assert apply_pass(graph, fuse_bias)
    assert ops(graph) == ["Dense"]


def test_add_varying_over_pixels_is_not_a_bias():
    graph = conv_add(add_inputs=("c", "per_pixel"))
    assert not apply_pass(graph, fuse_bias)


def test_conv_output_read_elsewhere_is_not_fused():
    graph = conv_add(outputs=("y", "z"), extra_nodes=[helper.make_node("Relu", ["c"], ["z"])])
    assert not apply_pass(graph, fuse_bias)


def test_conv_with_activation_is_not_fused():
    graph = conv_add()
    conv = graph.nodes["conv"]
    graph.replace_node("conv", conv.with_(attrs=replace(conv.attrs, activation=Activation("relu"))))
    assert not apply_pass(graph, fuse_bias)
    assert ops(graph) == ["Conv", "Add"]
