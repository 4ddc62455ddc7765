"""Channel shuffles and channel halves (hlsgen/passes/channel_gather.py): any exporter's chain of
Reshape/Transpose/Slice/Gather that only picks channels becomes one Gather, which the next dense layer takes
into its weights (through activations, pools and depthwise convolutions when it is a permutation); what no
reader takes stays one Gather. Each rewrite computes what the graph did (apply_pass, onnxruntime)."""
import numpy as np
import pytest
from onnx import helper

from hlsgen.passes import channel_moves_as_gathers, fold_channel_gathers, optimize
from hlsgen.reference import run_graph
from tests.builders import make_model, run_ort, tensor_value
from tests.passes.helpers import apply_pass, onnx_graph, ops
from tests.rtl.shuffle import channel_shuffle, shuffle_unit

RNG = np.random.default_rng(26)


def _check_against_ort(nodes, inits, shape, graph) -> None:
    model = make_model(nodes, [tensor_value("x", list(shape))], [tensor_value("y", None)],
                       {k: v.astype(np.float32) if v.dtype == np.float64 else v for k, v in inits.items()})
    x = RNG.standard_normal(shape).astype(np.float32)
    want = run_ort(model, {"x": x})["y"]
    assert np.abs(run_graph(graph, {"x": x})["y"] - want).max() < 1e-4 * np.abs(want).max()


def test_a_channel_shuffle_becomes_one_gather_of_channels():
    nodes, inits = channel_shuffle("x", "s", (1, 6, 3, 4), 2, "shuffle")
    nodes.append(helper.make_node("Relu", ["s"], ["y"], name="relu"))
    graph = onnx_graph(nodes, {"x": (1, 6, 3, 4)}, ["y"], inits)
    assert apply_pass(graph, channel_moves_as_gathers)
    graph.prune_tensors()
    gather = next(n for n in graph.nodes.values() if n.op == "Gather")
    assert gather.inputs == ("x",) and gather.attrs.indices == (0, 3, 1, 4, 2, 5)
    assert not apply_pass(graph, channel_moves_as_gathers)  # a fixpoint


def test_a_shuffle_goes_into_the_weights_of_the_conv_reading_it_through_channelwise_layers():
    nodes, inits = channel_shuffle("x", "s", (1, 8, 5, 5), 4, "shuffle")
    nodes += [helper.make_node("Relu", ["s"], ["r"], name="relu"),
              helper.make_node("Conv", ["r", "dw", "dwb"], ["d"], group=8, pads=[1, 1, 1, 1], name="dw"),
              helper.make_node("MaxPool", ["d"], ["p"], kernel_shape=[2, 2], strides=[2, 2], name="pool"),
              helper.make_node("Conv", ["p", "w", "b"], ["y"], name="pw")]
    inits |= {"dw": RNG.standard_normal((8, 1, 3, 3)), "dwb": RNG.standard_normal(8),
              "w": RNG.standard_normal((5, 8, 1, 1)), "b": RNG.standard_normal(5)}
    graph = onnx_graph(nodes, {"x": (1, 8, 5, 5)}, ["y"], inits)
    assert apply_pass(graph, channel_moves_as_gathers)
    for _ in range(3):  # a step past a layer each time
        assert apply_pass(graph, fold_channel_gathers)
    optimize(graph, verify_each=True)
    assert ops(graph) == ["Relu", "Conv", "MaxPool", "Conv"]
    _check_against_ort(nodes, inits, (1, 8, 5, 5), graph)


def test_two_shufflenet_units_keep_one_gather_each_of_the_halves_they_pass_on():
    """The half a unit passes on untouched cannot go into weights (a Concat reads it): one Gather per unit;
    the half its branch reads and the last shuffle go into the 1x1 convs' weights."""
    c, size = 16, 6
    first, inits = shuffle_unit("u1", "x", "s1", c, size, RNG)
    second, more = shuffle_unit("u2", "s1", "s2", c, size, RNG)
    nodes = first + second + [helper.make_node("Conv", ["s2", "head"], ["y"], name="head")]
    inits |= more | {"head": RNG.standard_normal((4, c, 1, 1))}
    graph = onnx_graph(nodes, {"x": (1, c, size, size)}, ["y"], inits)
    optimize(graph, verify_each=True)
    assert sorted(ops(graph)) == ["Concat"] * 2 + ["Conv"] * 7 + ["Gather"] * 2
    _check_against_ort(nodes, inits, (1, c, size, size), graph)


def test_a_shuffle_that_splits_its_halves_with_gathers_on_a_batch_axis_folds_too():
    """PaddlePaddle's and MegEngine's ShuffleNetV2: reshape(n*c/2, 2, h*w), transpose(1, 0, 2),
    reshape(2, -1, c/2, h, w), then x[0] and x[1]."""
    c, h, w = 8, 3, 3
    inits = {"s3": np.array([c // 2, 2, h * w], np.int64), "s5": np.array([2, -1, c // 2, h, w], np.int64),
             "i0": np.array(0, np.int64), "i1": np.array(1, np.int64),
             "wa": RNG.standard_normal((3, c // 2, 1, 1)), "wb": RNG.standard_normal((3, c // 2, 1, 1))}
    nodes = [helper.make_node("Reshape", ["x", "s3"], ["r3"], name="r3"),
             helper.make_node("Transpose", ["r3"], ["t"], perm=[1, 0, 2], name="t"),
             helper.make_node("Reshape", ["t", "s5"], ["r5"], name="r5"),
             helper.make_node("Gather", ["r5", "i0"], ["h0"], axis=0, name="h0"),
             helper.make_node("Gather", ["r5", "i1"], ["h1"], axis=0, name="h1"),
             helper.make_node("Conv", ["h0", "wa"], ["a"], name="ca"),
             helper.make_node("Conv", ["h1", "wb"], ["b"], name="cb"),
             helper.make_node("Add", ["a", "b"], ["y"], name="add")]
    graph = onnx_graph(nodes, {"x": (1, c, h, w)}, ["y"], inits)
    optimize(graph, verify_each=True)
    assert sorted(ops(graph)) == ["Add", "Conv", "Conv"]
    assert all(n.inputs[0] == "x" for n in graph.nodes.values() if n.op == "Conv")
    _check_against_ort(nodes, inits, (1, c, h, w), graph)


@pytest.mark.parametrize("picks", [[2, 0, 1], [1]])
def test_a_conv_does_not_multiply_many_zeros_for_a_few_picked_channels(picks):
    """Three picks of 12 channels into a 3x3 Conv of 8 outputs would cost 9 * 8 * 9 zero MACs a pixel for
    36 MACs of copying: the Gather stays."""
    nodes = [helper.make_node("Gather", ["x", "i"], ["g"], axis=1, name="pick"),
             helper.make_node("Conv", ["g", "w"], ["y"], pads=[1, 1, 1, 1], name="conv")]
    inits = {"i": np.array(picks, np.int64), "w": RNG.standard_normal((8, len(picks), 3, 3))}
    graph = onnx_graph(nodes, {"x": (1, 12, 4, 4)}, ["y"], inits)
    assert not apply_pass(graph, fold_channel_gathers)
    assert ops(graph) == ["Gather", "Conv"]
