"""The host's fold of a thin input (hlsgen.passes.input_fold): a stride-2 first convolution over the input's 2 x 2
pixel blocks moved into channels computes the same integers, for every kernel and padding; what does not
qualify is left alone."""
import numpy as np
import pytest
from onnx import helper

from hlsgen.ops.shape import BlockAttrs, space_to_depth
from hlsgen.passes.input_fold import fold_input
from hlsgen.reference import run_graph
from tests.builders import make_model, tensor_value
from tests.hw.models import _quantize


def _stem(channels: int, size: tuple[int, int], kernel: int, pads: list[int], stride: int = 2):
    rng = np.random.default_rng(kernel * 10 + sum(pads))
    inits = {"w": rng.standard_normal((8, channels, kernel, kernel)).astype(np.float32) * 0.3,
             "w2": rng.standard_normal((4, 8, 1, 1)).astype(np.float32) * 0.3}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="stem", pads=pads, strides=[stride, stride]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Conv", ["r", "w2"], ["y"], name="head")]
    return _quantize(make_model(nodes, [tensor_value("x", [1, channels, *size])], [tensor_value("y", None)], inits))


@pytest.mark.parametrize("channels, kernel, pads", [(3, 3, [1, 1, 1, 1]), (3, 3, [0, 0, 1, 1]), (1, 5, [2, 2, 2, 2]),
                                                    (4, 7, [3, 3, 3, 3]), (2, 2, [0, 0, 0, 0]), (3, 4, [1, 2, 2, 1])])
def test_the_folded_stem_computes_the_same_integers(channels, kernel, pads):
    graph = _stem(channels, (12, 16), kernel, pads)
    folded = fold_input(graph, 16)
    assert folded is not None and folded.input_folds == {"x": 2}
    assert folded.shape("x") == (1, 4 * channels, 6, 8)
    stem = folded.nodes["stem"].attrs.conv
    assert tuple(stem.strides) == (1, 1) and all(p >= 0 for p in stem.pads)
    x = np.random.default_rng(1).integers(0, 256, (1, channels, 12, 16))
    assert np.array_equal(run_graph(folded, {"x": x})["y"], run_graph(graph, {"x": x})["y"])
    blocks = space_to_depth(BlockAttrs(2), x)  # the executor takes the folded array as well
    assert np.array_equal(run_graph(folded, {"x": blocks})["y"], run_graph(graph, {"x": x})["y"])
    assert "x" not in graph.input_folds and graph.shape("x") == (1, channels, 12, 16)  # the original is kept


@pytest.mark.parametrize("channels, size, stride", [(5, (12, 16), 2), (3, (13, 16), 2), (3, (12, 16), 1)])
def test_no_fold_for_wide_inputs_odd_sizes_or_stride_one(channels, size, stride):
    assert fold_input(_stem(channels, size, 3, [1, 1, 1, 1], stride), 16) is None
