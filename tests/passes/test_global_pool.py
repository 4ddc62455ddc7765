import pytest
from onnx import helper

from hlsgen.passes import globalize_pools
from tests.passes.helpers import apply_pass, onnx_graph, ops


def pool_graph(op, shape, **attrs):
    """x -> Relu -> op -> y."""
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node(op, ["r"], ["y"], name="pool", **attrs)]
    return onnx_graph(nodes, {"x": shape}, ["y"])


@pytest.mark.parametrize("op, shape, attrs", [
    ("AveragePool", (1, 4, 7, 7), {"kernel_shape": [7, 7]}),  # MobileNet's head
    ("AveragePool", (2, 4, 5, 5), {"kernel_shape": [5, 5], "strides": [5, 5]}),
    ("AveragePool", (1, 4, 3, 5), {"kernel_shape": [3, 5]}),  # not square
    ("AveragePool", (1, 4, 4, 4), {"kernel_shape": [5, 5], "pads": [1, 1, 0, 0]}),  # padding not counted
    ("AveragePool", (1, 4, 6), {"kernel_shape": [6]}),
    ("MaxPool", (1, 4, 6, 6), {"kernel_shape": [6, 6]}),
    ("MaxPool", (1, 4, 3, 3), {"kernel_shape": [4, 4], "pads": [1, 1, 1, 1], "strides": [4, 4]}),  # padding never wins
])
def test_a_pool_over_the_whole_map_becomes_global(op, shape, attrs):
    graph = pool_graph(op, shape, **attrs)
    assert apply_pass(graph, globalize_pools)
    assert ops(graph) == ["Relu", f"Global{op}"]


@pytest.mark.parametrize("op, shape, attrs", [
    ("AveragePool", (1, 4, 6, 6), {"kernel_shape": [3, 3], "strides": [3, 3]}),  # several windows
    ("AveragePool", (1, 4, 4, 4), {"kernel_shape": [5, 5], "pads": [1, 1, 0, 0], "count_include_pad": 1}),
    ("MaxPool", (1, 4, 5, 5), {"kernel_shape": [3, 3], "dilations": [2, 2]}),  # skips every other element
    ("MaxPool", (1, 4, 5, 5), {"kernel_shape": [4, 4], "strides": [4, 4]}),  # one window missing the last row
    ("MaxPool", (1, 4, 3, 3), {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [4, 4]}),  # misses the last row
])
def test_other_pools_stay(op, shape, attrs):
    graph = pool_graph(op, shape, **attrs)
    assert not apply_pass(graph, globalize_pools)
    assert ops(graph) == ["Relu", op]
