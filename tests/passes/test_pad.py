import numpy as np
import pytest
from onnx import helper

from hlsgen.passes import fold_pad
from tests.passes.helpers import apply_pass, onnx_graph, ops

W = np.random.default_rng(0).standard_normal((3, 2, 3, 3))


def pad_then(reader, pads=(0, 0, 1, 2, 0, 0, 2, 1), value=0.0, mode="constant"):
    """x -> Pad -> p -> `reader` -> y."""
    inits = {"w": W, "pads": np.array(pads, np.int64), "value": np.float32(value)}
    return onnx_graph(
        [helper.make_node("Pad", ["x", "pads", "value"], ["p"], mode=mode), reader],
        {"x": (1, 2, 6, 6)},
        ["y"],
        inits,
    )


CONV = helper.make_node("Conv", ["p", "w"], ["y"], name="conv", pads=[1, 0, 0, 1])
AVG = helper.make_node("AveragePool", ["p"], ["y"], name="pool", kernel_shape=[3, 3])
AVG_INCLUDING_PAD = helper.make_node(
    "AveragePool", ["p"], ["y"], name="pool", kernel_shape=[3, 3], pads=[1, 0, 0, 0], count_include_pad=1
)
MAX = helper.make_node("MaxPool", ["p"], ["y"], name="pool", kernel_shape=[3, 3], strides=[2, 2])


def test_zero_pad_merges_into_conv():
    graph = pad_then(CONV)
    assert apply_pass(graph, fold_pad)
    assert ops(graph) == ["Conv"]
    assert graph.nodes["conv"].attrs.pads == (2, 2, 2, 2)


@pytest.mark.parametrize("pool", [AVG, AVG_INCLUDING_PAD], ids=["no_pads", "count_include_pad"])
def test_zero_pad_merges_into_average_pool_counting_the_padding(pool):
    graph = pad_then(pool)
    assert apply_pass(graph, fold_pad)
    assert ops(graph) == ["AveragePool"]
    assert graph.nodes["pool"].attrs.count_include_pad


def test_minus_infinity_pad_merges_into_max_pool():
    graph = pad_then(MAX, value=-np.inf)
    assert apply_pass(graph, fold_pad)
    assert ops(graph) == ["MaxPool"]
    assert graph.nodes["pool"].attrs.pads == (1, 2, 2, 1)


@pytest.mark.parametrize(
    "graph",
    [
        pad_then(CONV, value=1.0),
        pad_then(CONV, mode="reflect"),
        pad_then(AVG, pads=(0, 1, 1, 1, 0, 0, 1, 1)),  # pads the channels too
        pad_then(MAX),  # zeros can win a max
        pad_then(
            helper.make_node("AveragePool", ["p"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
            pads=(0, 0, 1, 0, 0, 0, 0, 0),
        ),
        pad_then(AVG, pads=(0, 0, 3, 0, 0, 0, 0, 0)),  # the pool's pads would reach the kernel size
        pad_then(helper.make_node("AveragePool", ["p"], ["y"], kernel_shape=[3, 3], ceil_mode=1, strides=[2, 2])),
        pad_then(helper.make_node("Sigmoid", ["p"], ["y"])),  # no padding of its own
    ],
    ids=["nonzero_value", "reflect", "channel_axis", "max_with_zeros", "avg_excluding_pad", "too_wide", "ceil_mode",
         "elementwise_reader"],
)
def test_pad_is_kept(graph):
    assert not apply_pass(graph, fold_pad)
    assert ops(graph)[0] == "Pad"


def test_pad_read_by_two_nodes_is_kept():
    graph = onnx_graph(
        [
            helper.make_node("Pad", ["x", "pads"], ["p"]),
            helper.make_node("Conv", ["p", "w"], ["a"]),
            helper.make_node("Conv", ["p", "w"], ["b"], strides=[2, 2]),
        ],
        {"x": (1, 2, 6, 6)},
        ["a", "b"],
        {"w": W, "pads": np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64)},
    )
    assert not apply_pass(graph, fold_pad)
