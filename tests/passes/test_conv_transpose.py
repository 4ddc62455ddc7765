"""decompose_conv_transpose: a ConvTranspose becomes one stride-1 Conv per stride phase and an Interleave of
their maps, computing what it did (apply_pass) for every kernel, stride, padding, output padding and group
the phases cover; channelwise_before_interleave moves a BatchNormalization and a Relu onto the phases, where
they fold into the Convs; what does not decompose stays a ConvTranspose with the reason the quantizer gives."""
import numpy as np
import pytest
from onnx import helper

from hlsgen.passes import channelwise_before_interleave, decompose_conv_transpose, optimize
from hlsgen.passes.conv_transpose import decomposition, phases
from tests.passes.helpers import apply_pass, onnx_graph, ops

CASES = [  # kernel, strides, pads, output_padding, group
    ((2, 2), (2, 2), (0, 0, 0, 0), (0, 0), 1),
    ((3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1),
    ((4, 4), (2, 2), (1, 1, 1, 1), (0, 0), 1),
    ((3, 3), (2, 2), (1, 1, 1, 1), (0, 0), 8),
    ((5, 3), (3, 2), (2, 0, 1, 1), (2, 1), 2),
    ((4, 4), (4, 4), (0, 0, 0, 0), (0, 0), 1),
    ((3, 2), (2, 1), (1, 0, 1, 0), (1, 0), 1),
    ((1, 1), (2, 2), (0, 0, 0, 0), (1, 1), 1),  # a kernel below its stride: three phases are the bias alone
]


def _transposed(kernel, strides, pads, output_padding, group, after=(), extra=None):
    rng = np.random.default_rng(6)
    inits = {"w": rng.standard_normal((8, 8 // group, *kernel)), "b": rng.standard_normal(8), **(extra or {})}
    node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["t" if after else "y"], name="up", strides=list(strides),
                            pads=list(pads), output_padding=list(output_padding), group=group)
    return onnx_graph([node, *after], {"x": (1, 8, 5, 6)}, ["y"], inits)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_conv_transpose_becomes_phase_convs_woven_by_an_interleave(case):
    graph = _transposed(*case)
    assert apply_pass(graph, decompose_conv_transpose)
    strides = case[1]
    assert sorted(ops(graph)) == ["Conv"] * (strides[0] * strides[1]) + ["Interleave"]
    convs = [n for n in graph.nodes.values() if n.op == "Conv"]
    assert all(n.attrs.strides == (1, 1) and n.attrs.group == case[4] for n in convs)
    # the phases multiply every tap once: as many nonzero weights as the ConvTranspose, no inserted zero (but
    # the one zero tap of a phase no tap reaches)
    weights = [graph.constants[n.inputs[1]] for n in convs]
    assert sum(np.count_nonzero(w) for w in weights) == 8 * (8 // case[4]) * case[0][0] * case[0][1]
    assert sum(w.size for w in weights if np.count_nonzero(w)) == 8 * (8 // case[4]) * case[0][0] * case[0][1]
    assert graph.nodes["up"].op == "Interleave"


def test_a_stride_1_conv_transpose_is_one_conv_writing_the_output():
    graph = _transposed((3, 3), (1, 1), (1, 1, 1, 1), (0, 0), 1)
    assert apply_pass(graph, decompose_conv_transpose)
    assert ops(graph) == ["Conv"] and graph.nodes["up"].outputs == ("y",)


def test_batchnorm_and_relu_after_it_fold_into_every_phase():
    bn = helper.make_node("BatchNormalization", ["t", "scale", "bias", "mean", "var"], ["n"], name="bn")
    relu = helper.make_node("Relu", ["n"], ["y"], name="relu")
    stats = dict(zip(("scale", "bias", "mean", "var"), np.random.default_rng(7).uniform(0.5, 2, (4, 8))))
    graph = _transposed((4, 4), (2, 2), (1, 1, 1, 1), (0, 0), 1, after=(bn, relu), extra=stats)
    assert apply_pass(graph, decompose_conv_transpose)
    assert apply_pass(graph, channelwise_before_interleave)
    assert not any(n.op == "Interleave" for n in graph.consumers(graph.nodes["up"].outputs[0]))
    optimize(graph)
    assert sorted(ops(graph)) == ["Conv"] * 4 + ["Interleave"]
    assert all(n.attrs.activation is not None for n in graph.nodes.values() if n.op == "Conv")


@pytest.mark.parametrize("case, why", [
    (((3, 3), (2, 2), (0, 0, 0, 0), (0, 0), 1, (2, 2)), "dilation 1"),
    (((3, 3), (2, 2), (2, 0, 2, 0), (0, 0), 1, (1, 1)), "its padding crops rows"),
])
def test_what_does_not_decompose_stays_with_its_reason(case, why):
    *geometry, dilations = case
    rng = np.random.default_rng(8)
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="up", strides=list(geometry[1]),
                            pads=list(geometry[2]), output_padding=list(geometry[3]), dilations=list(dilations))
    graph = onnx_graph([node], {"x": (1, 4, 5, 5)}, ["y"], {"w": rng.standard_normal((4, 4, *geometry[0]))})
    assert not decompose_conv_transpose(graph)
    assert why in decomposition(graph, graph.nodes["up"])


def test_phases_of_one_axis():
    # kernel 4, stride 2, padding 1 (the usual 2x learned upsampling): two taps per phase, flipped
    first, second = phases(size=5, out=10, kernel=4, stride=2, pad=1)
    assert (first.taps, first.begin, first.end, first.count) == ((3, 1), 1, 0, 5)
    assert (second.taps, second.begin, second.end, second.count) == ((2, 0), 0, 1, 5)
