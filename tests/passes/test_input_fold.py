"""The host's fold of a thin input (hlsgen.passes.input_fold): a first convolution over the input's 2 x 2 pixel
blocks (stride 2) or its own windows (im2col, any stride) moved into channels computes the same integers, for
every kernel and padding; what does not qualify is left alone."""
import numpy as np
import pytest
from onnx import helper

from hlsgen.ir import InputFold
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
    assert folded is not None and folded.input_folds == {"x": InputFold((channels, 12, 16), (2, 2), (2, 2))}
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


@pytest.mark.parametrize("channels, kernel, pads, stride", [(3, 3, [1, 1, 1, 1], 2), (1, 5, [2, 2, 2, 2], 1),
                                                            (3, 4, [1, 2, 2, 1], 2), (2, 3, [0, 0, 0, 0], 3)])
def test_the_stem_over_its_own_windows_computes_the_same_integers(channels, kernel, pads, stride):
    graph = _stem(channels, (13, 16), kernel, pads, stride)
    folded = fold_input(graph, 16, "windows")
    fold = folded.input_folds["x"]
    zero_point = graph.nodes["stem"].attrs.input_zero_point
    assert fold == InputFold((channels, 13, 16), (kernel, kernel), (stride, stride), tuple(pads), zero_point)
    stem = folded.nodes["stem"].attrs.conv
    assert (tuple(stem.kernel_shape), tuple(stem.strides), tuple(stem.pads)) == ((1, 1), (1, 1), (0, 0, 0, 0))
    assert folded.shape("x") == (1, channels * kernel * kernel, *graph.shape(graph.nodes["stem"].outputs[0])[2:])
    x = np.random.default_rng(2).integers(0, 256, (1, channels, 13, 16))
    assert np.array_equal(run_graph(folded, {"x": x})["y"], run_graph(graph, {"x": x})["y"])


def test_a_fold_of_blocks_is_space_to_depth_and_its_windows_read_the_fill_off_the_image():
    x = np.arange(2 * 4 * 6).reshape(1, 2, 4, 6)
    assert np.array_equal(InputFold((2, 4, 6), (2, 2), (2, 2)).apply(x), space_to_depth(BlockAttrs(2), x))
    windows = InputFold((2, 4, 6), (3, 3), (1, 2), (1, 1, 1, 0), fill=-7).apply(x)
    assert windows.shape == (1, 18, 4, 3)
    # channel (ky * 3 + kx) * 2 + c of pixel (y, x) is channel c of pixel (y + ky - 1, 2x + kx - 1)
    assert windows[0, (0 * 3 + 0) * 2 + 1, 0, 0] == -7 and windows[0, (1 * 3 + 1) * 2 + 1, 0, 0] == x[0, 1, 0, 0]
    assert windows[0, (2 * 3 + 2) * 2 + 0, 3, 2] == -7 and windows[0, (2 * 3 + 1) * 2, 2, 2] == x[0, 0, 3, 4]


def test_no_windows_for_a_pointwise_stem_or_as_many_channels_as_lanes():
    assert fold_input(_stem(3, (12, 16), 1, [0, 0, 0, 0], 1), 16, "windows") is None
    assert fold_input(_stem(16, (12, 16), 3, [1, 1, 1, 1], 1), 16, "windows") is None
