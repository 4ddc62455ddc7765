"""Pixel blocks and channels traded around a Conv, at no cost on the accelerator.

A Conv whose output a DepthToSpace rearranges (ESPCN's sub-pixel upsampling) is one Conv per block offset,
each computing the channels that land on that offset, woven by an Interleave (the vector unit's copy per
phase, as a ConvTranspose's). A Conv that reads pixel blocks moved into channels (a SpaceToDepth, or a
YOLOv5 Focus stem: four stride-2 Slices concatenated) is one strided Conv over the original pixels, its
kernel b times as large: output (oy, ox) of kernel tap (ky, kx) on block offset (dy, dx) reads pixel
(oy * s * b + ky * b + dy - p * b, ...), the same multiply-accumulates and no move at all."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..ir import Graph, Node, TensorInfo
from ..ops.shape import InterleaveAttrs
from .pipeline import graph_pass
from .rewrite import copy_onto, optional_input, sole_consumer

# elementwise ops of one input that commute with moving pixels and channels around
UNARY = ("Relu", "Sigmoid", "HardSwish", "Clip", "LeakyRelu", "HardSigmoid", "Elu", "Selu", "Tanh", "Softplus",
         "Softsign", "SiLU", "Mish", "Erf", "Gelu")


@graph_pass
def activation_before_depth_to_space(graph: Graph) -> bool:
    """Swap an elementwise activation that alone reads a DepthToSpace's output to before it."""
    changed = False
    for node in [n for n in graph.nodes.values() if n.op in UNARY]:
        move = graph.producer(node.inputs[0])
        if move is None or move.op != "DepthToSpace" or sole_consumer(graph, node.inputs[0]) is not node \
                or node.inputs[0] in graph.outputs or any(t and not graph.is_constant(t) for t in node.inputs[1:]):
            continue
        inner = graph.fresh_name(f"{node.outputs[0]}_blocks")
        graph.tensors[inner] = replace(graph.tensors[move.inputs[0]], name=inner)
        graph.replace_node(node.name, node.with_(inputs=(move.inputs[0], *node.inputs[1:]), outputs=(inner,)))
        graph.replace_node(move.name, move.with_(inputs=(inner,), outputs=node.outputs))
        changed = True
    return changed


@graph_pass
def depth_to_space_as_phases(graph: Graph) -> bool:
    """Split the Conv before a DepthToSpace into one Conv per block offset, woven by an Interleave.

    Elementwise activations between the Conv and the DepthToSpace go onto every phase. A DepthToSpace that is a model output stays: the host permutes the output as it reads it (one map of few
    channels would fill the activation memory, where the phases' maps stream out as they are)."""
    changed = False
    for node in [n for n in graph.nodes.values() if n.op == "DepthToSpace"]:
        if node.outputs[0] in graph.outputs:
            continue
        conv, activations, reader = graph.producer(node.inputs[0]), [], node
        while conv is not None and conv.op in UNARY and not any(t and not graph.is_constant(t) for t in conv.inputs[1:]) \
                and sole_consumer(graph, conv.outputs[0]) is reader and conv.outputs[0] not in graph.outputs:
            activations.insert(0, conv)  # elementwise ops between the Conv and the DepthToSpace: onto every phase
            conv, reader = graph.producer(conv.inputs[0]), conv
        if conv is None or conv.op != "Conv" or conv.attrs.group != 1 or len(conv.attrs.kernel_shape) != 2 \
                or sole_consumer(graph, conv.outputs[0]) is not reader or conv.outputs[0] in graph.outputs:
            continue
        weight, bias = conv.inputs[1], optional_input(conv, 2)
        if not graph.is_constant(weight) or (bias and not graph.is_constant(bias)):
            continue
        _split(graph, node, conv, activations)
        changed = True
    return changed


def _split(graph: Graph, node: Node, conv: Node, activations: list[Node]) -> None:
    b, mode = node.attrs.blocksize, node.attrs.mode
    w, bias = graph.constants[conv.inputs[1]], optional_input(conv, 2)
    channels = w.shape[0] // (b * b)
    y = graph.tensors[node.outputs[0]]
    phases = []
    for dy, dx in np.ndindex(b, b):
        offset = dy * b + dx
        rows = np.arange(channels) * b * b + offset if mode == "CRD" else offset * channels + np.arange(channels)
        stem = f"{conv.name}_phase{dy}{dx}"
        inputs = [conv.inputs[0], graph.add_constant(graph.fresh_name(f"{stem}_weight"), w[rows])]
        if bias:
            inputs.append(graph.add_constant(graph.fresh_name(f"{stem}_bias"), graph.constants[bias][rows]))
        out = graph.fresh_name(f"{node.outputs[0]}_phase{dy}{dx}")
        graph.tensors[out] = TensorInfo(out, (y.shape[0], channels, y.shape[2] // b, y.shape[3] // b), y.dtype)
        name = graph.fresh_name(stem)
        graph.add_node(Node(name, "Conv", tuple(inputs), (out,), conv.attrs))
        if graph.origin(conv.name):
            graph.origins[name] = graph.origins[conv.name]
        for act in activations:
            out = copy_onto(graph, act, out, f"phase{dy}{dx}")
        phases.append(out)
    for act in activations:
        graph.remove_node(act.name)
    graph.remove_node(conv.name)
    graph.replace_node(node.name, Node(node.name, "Interleave", tuple(phases), node.outputs,
                                       InterleaveAttrs((b, b), tuple(y.shape[2:]))))


@graph_pass
def merge_slices(graph: Graph) -> bool:
    """One Slice for a Slice of a Slice.

    An exporter's x[..., ::2, ::2] is a Slice per axis, the first one often shared by two."""
    changed = False
    for node in [n for n in graph.nodes.values() if n.op == "Slice"]:
        inner = graph.producer(node.inputs[0])
        if inner is None or inner.op != "Slice":
            continue
        a, b = inner.attrs, node.attrs
        starts = tuple(s1 + s2 * t1 for s1, s2, t1 in zip(a.starts, b.starts, a.steps))
        merged = replace(b, starts=starts, steps=tuple(t1 * t2 for t1, t2 in zip(a.steps, b.steps)))
        if sole_consumer(graph, node.inputs[0]) is node and node.inputs[0] not in graph.outputs:
            graph.remove_node(inner.name)
        graph.replace_node(node.name, node.with_(inputs=inner.inputs, attrs=merged))
        changed = True
    return changed


@graph_pass
def space_to_depth_into_conv(graph: Graph) -> bool:
    """Fold a SpaceToDepth, or a Concat of stride-b Slices of every block offset, into the Conv reading it."""
    changed = False
    for conv in [n for n in graph.nodes.values() if n.op == "Conv"]:
        found = _blocks(graph, conv.inputs[0])
        a = conv.attrs
        if found is None or a.group != 1 or len(a.kernel_shape) != 2 or any(d != 1 for d in a.dilations) \
                or not graph.is_constant(conv.inputs[1]) or sole_consumer(graph, conv.inputs[0]) is not conv \
                or conv.inputs[0] in graph.outputs:
            continue
        source, b, offsets = found
        w = graph.constants[conv.inputs[1]]
        m, cb, kh, kw = w.shape
        c = cb // (b * b)
        folded = np.zeros((m, c, kh * b, kw * b), w.dtype)
        for block, (dy, dx) in enumerate(offsets):
            folded[:, :, dy::b, dx::b] = w[:, block * c:(block + 1) * c]
        geometry = replace(a, kernel_shape=(kh * b, kw * b), strides=tuple(s * b for s in a.strides),
                           pads=tuple(p * b for p in a.pads))
        weight = graph.add_constant(graph.fresh_name(f"{conv.name}_weight"), folded)
        graph.replace_node(conv.name, conv.with_(inputs=(source, weight, *conv.inputs[2:]), attrs=geometry))
        changed = True
    return changed


def _blocks(graph: Graph, tensor: str) -> tuple[str, int, list[tuple[int, int]]] | None:
    """(x, b, the block offset of every channel block) when `tensor` is x's pixel blocks moved into channels:
    a SpaceToDepth (offsets in row-major order) or a Concat over channels of Slices of x each taking every
    b-th row and column from one offset; None otherwise."""
    node = graph.producer(tensor)
    if node is None:
        return None
    if node.op == "SpaceToDepth":
        b = node.attrs.blocksize
        return node.inputs[0], b, list(np.ndindex(b, b))
    if node.op != "Concat" or node.attrs.axis != 1:
        return None
    slices = [graph.producer(t) for t in node.inputs]
    if any(s is None or s.op != "Slice" for s in slices) or len({s.inputs[0] for s in slices}) != 1:
        return None
    x = slices[0].inputs[0]
    shape = graph.shape(x)
    b = slices[0].attrs.steps[-1]
    offsets = []
    for s in slices:
        a = s.attrs
        if len(shape) != 4 or a.steps != (1, 1, b, b) or a.starts[:2] != (0, 0) or a.shape[:2] != tuple(shape[:2]) \
                or shape[2] % b or shape[3] % b or a.shape[2:] != (shape[2] // b, shape[3] // b) \
                or len(graph.consumers(s.outputs[0])) != 1:
            return None
        offsets.append(tuple(a.starts[2:]))
    if b < 2 or sorted(offsets) != sorted(np.ndindex(b, b)):
        return None
    return x, b, offsets
