import pytest
from onnx import helper

from hlsgen.passes import move_maxpool_before_activation
from tests.passes.helpers import apply_pass, onnx_graph, ops

POOL = helper.make_node("MaxPool", ["a"], ["y"], name="pool", kernel_shape=[2, 2], strides=[2, 2])


def activation_then(activation, pool=POOL, outputs=("y",), extra_nodes=()):
    """x -> Add(x, x) -> `activation` -> a -> `pool` -> y."""
    return onnx_graph(
        [helper.make_node("Add", ["x", "x"], ["s"]), activation, pool, *extra_nodes],
        {"x": (1, 2, 6, 6)},
        list(outputs),
    )


@pytest.mark.parametrize(
    "activation",
    [
        helper.make_node("Relu", ["s"], ["a"], name="act"),
        helper.make_node("LeakyRelu", ["s"], ["a"], name="act", alpha=0.2),
        helper.make_node("Sigmoid", ["s"], ["a"], name="act"),
        helper.make_node("HardSigmoid", ["s"], ["a"], name="act"),
    ],
    ids=["relu", "leaky_relu", "sigmoid", "hard_sigmoid"],
)
def test_pool_moves_before_a_monotone_activation(activation):
    graph = activation_then(activation)
    assert apply_pass(graph, move_maxpool_before_activation)
    assert ops(graph) == ["Add", "MaxPool", activation.op_type]
    assert graph.nodes["act"].outputs == ("y",)
    assert graph.shape(graph.nodes["act"].inputs[0]) == (1, 2, 3, 3)


@pytest.mark.parametrize(
    "graph",
    [
        activation_then(helper.make_node("LeakyRelu", ["s"], ["a"], alpha=-0.5)),
        activation_then(helper.make_node("HardSwish", ["s"], ["a"])),
        activation_then(
            helper.make_node("Relu", ["s"], ["a"]), outputs=("y", "z"), extra_nodes=[helper.make_node("Sigmoid", ["a"], ["z"])]
        ),
        activation_then(
            helper.make_node("Relu", ["s"], ["a"]),
            pool=helper.make_node("MaxPool", ["a"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        ),
    ],
    ids=["decreasing_leaky_relu", "non_monotone", "activation_read_elsewhere", "pool_keeps_size"],
)
def test_pool_stays_after(graph):
    assert not apply_pass(graph, move_maxpool_before_activation)
    assert graph.producer("y").op == "MaxPool"
