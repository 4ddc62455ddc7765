"""ConvTranspose as ordinary convolutions: the stride-phase decomposition.

Output pixel o of a transposed convolution (stride s, kernel k, begin padding p) sums x[i] * w[t] over
o + p = i * s + t. Its phase rho = o mod s reads only the taps t = b (mod s), b = (rho + p) mod s: the output
pixels of one phase are a stride-1 convolution of x with those taps, flipped. So a ConvTranspose is s_y * s_x
small Convs, one per phase, whose maps an Interleave weaves into the output; the array multiplies no inserted
zero, and every phase conv, requantizer and fused activation is the Conv the accelerator already runs.

Per-channel ops after the ConvTranspose (a BatchNormalization, a Relu) move before the Interleave, onto every
phase, where the Conv passes fold them."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import Graph, Node, TensorInfo
from ..ops.conv import ConvAttrs, ConvTransposeAttrs
from ..ops.shape import InterleaveAttrs
from .pipeline import graph_pass
from .rewrite import copy_onto

CHANNELWISE = ("BatchNormalization", "ChannelAffine", "Relu", "Clip", "LeakyRelu")


@dataclass(frozen=True)
class Phase:
    """One phase of one axis: the output pixels rho, rho + s, ... (`count` of them), a stride-1 conv with
    `taps` (kernel indices, in the conv's order; index `kernel` is a zero tap) and begin/end padding."""

    taps: tuple[int, ...]
    begin: int
    end: int
    count: int


def phases(size: int, out: int, kernel: int, stride: int, pad: int) -> list[Phase] | str:
    """The phases of one axis (input `size`, output `out`), or why it does not decompose."""
    result = []
    for rho in range(stride):
        count = -(-(out - rho) // stride)
        if count <= 0:
            return f"an output of {out} pixels has fewer than its stride {stride}"
        a, b = divmod(rho + pad, stride)
        taps = tuple(range(b, kernel, stride))[::-1]
        if not taps:  # a kernel below its stride: these outputs are the bias alone, a Conv of one zero tap
            result.append(Phase((kernel,) * max(1, size - count + 1), 0, max(0, count - size), count))
            continue
        begin = len(taps) - 1 - a
        end = count + a - size
        if begin < 0 or size + begin + max(end, 0) - len(taps) + 1 != count:
            return (f"its padding crops rows of the output that phase {rho} of stride {stride} would compute from "
                    "input rows no other output reads (not decomposed yet)")
        result.append(Phase(taps, begin, max(end, 0), count))
    return result


def conv_weights(w: np.ndarray, group: int) -> np.ndarray:
    """A ConvTranspose weight [C, M/g, *K] as a Conv's [M, C/g, *K] (the same taps, not flipped)."""
    c, mg = w.shape[:2]
    k = w.shape[2:]
    return w.reshape((group, c // group, mg) + k).swapaxes(1, 2).reshape((group * mg, c // group) + k)


def decomposition(graph: Graph, node: Node) -> list[list[Phase]] | str:
    """Every axis's phases, or why the node stays a ConvTranspose (the quantizer then names the reason)."""
    a: ConvTransposeAttrs = node.attrs
    if not graph.is_constant(node.inputs[1]) or (len(node.inputs) > 2 and node.inputs[2]
                                                 and not graph.is_constant(node.inputs[2])):
        return "its weights and bias are not constants"
    if any(d != 1 for d in a.dilations):
        return f"dilations {list(a.dilations)}: hlsgen decomposes transposed convolutions of dilation 1"
    size, out = graph.shape(node.inputs[0])[2:], graph.shape(node.outputs[0])[2:]
    axes = [phases(*args) for args in zip(size, out, a.kernel_shape, a.strides, a.pads)]
    return next((why for why in axes if isinstance(why, str)), axes)


@graph_pass
def decompose_conv_transpose(graph: Graph) -> bool:
    """Rewrite a ConvTranspose as one Conv per stride phase and an Interleave of their maps."""
    changed = False
    for node in [n for n in graph.nodes.values() if n.op == "ConvTranspose"]:
        axes = decomposition(graph, node)
        if isinstance(axes, str):
            continue
        _decompose(graph, node, axes)
        changed = True
    return changed


def _decompose(graph: Graph, node: Node, axes: list[list[Phase]]) -> None:
    a: ConvTransposeAttrs = node.attrs
    w = conv_weights(graph.constants[node.inputs[1]], a.group)
    w = np.pad(w, [(0, 0), (0, 0)] + [(0, 1)] * len(a.kernel_shape))  # index k of an axis: the zero tap
    # a pre-quantized weight's integers carry over when its scale is one for the tensor (the quantizer cannot tell
    # per-output scales from per-input ones: those weights are quantized again, from their dequantized values)
    kept = graph.quant.get(node.inputs[1])
    kept = kept if isinstance(kept, tuple) and len(set(kept[1].scales)) == 1 else None
    y = graph.tensors[node.outputs[0]]
    single = all(s == 1 for s in a.strides)  # one phase: the Conv writes the output itself
    if single:
        graph.remove_node(node.name)
    outputs = []
    for index in np.ndindex(*a.strides):
        chosen = [axes[i][rho] for i, rho in enumerate(index)]
        taps = np.ix_(*(p.taps for p in chosen))
        stem = f"{node.name}_phase{''.join(map(str, index))}"
        weight = graph.add_constant(graph.fresh_name(f"{stem}_weight"), np.ascontiguousarray(w[(...,) + taps]))
        if kept is not None:
            ints = np.pad(conv_weights(kept[0], a.group), [(0, 0), (0, 0)] + [(0, 1)] * len(a.kernel_shape))
            graph.quant[weight] = (ints[(...,) + taps], kept[1])
        out = y.name if single else graph.fresh_name(f"{node.outputs[0]}_phase{''.join(map(str, index))}")
        graph.tensors[out] = TensorInfo(out, y.shape[:2] + tuple(p.count for p in chosen), y.dtype)
        geometry = ConvAttrs(tuple(len(p.taps) for p in chosen), (1,) * len(chosen),
                             tuple(p.begin for p in chosen) + tuple(p.end for p in chosen), (1,) * len(chosen), a.group)
        name = node.name if single else graph.fresh_name(stem)
        graph.add_node(Node(name, "Conv", (node.inputs[0], weight, *node.inputs[2:3]), (out,), geometry))
        if graph.origin(node.name):
            graph.origins[name] = graph.origins[node.name]
        outputs.append(out)
    if not single:
        graph.replace_node(node.name, Node(node.name, "Interleave", tuple(outputs), node.outputs,
                                           InterleaveAttrs(tuple(a.strides), tuple(y.shape[2:]))))


@graph_pass
def channelwise_before_interleave(graph: Graph) -> bool:
    """Move a per-channel op that alone reads an Interleave's output onto every phase before it.

    BatchNormalization, ChannelAffine, Relu, Clip and LeakyRelu then fold into each phase's Conv."""
    changed = False
    for node in [n for n in graph.nodes.values() if n.op in CHANNELWISE]:
        weave = graph.producer(node.inputs[0])
        if weave is None or weave.op != "Interleave" or len(graph.consumers(weave.outputs[0])) != 1 \
                or weave.outputs[0] in graph.outputs or not all(graph.is_constant(t) for t in node.inputs[1:] if t):
            continue
        moved = [copy_onto(graph, node, phase, f"phase{i}") for i, phase in enumerate(weave.inputs)]
        graph.remove_node(node.name)
        graph.replace_node(weave.name, weave.with_(inputs=tuple(moved), outputs=node.outputs))
        changed = True
    return changed
