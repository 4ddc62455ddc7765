"""Elementwise arithmetic with a constant as a per-channel affine."""
from __future__ import annotations

import numpy as np

from ..ir import Graph, Node
from ..ops.registry import NoAttrs
from .pipeline import graph_pass
from .rewrite import per_channel_vector


@graph_pass
def constant_arithmetic_as_affine(graph: Graph) -> bool:
    """Make an Add, Sub, Mul or Div of a feature map and a per-channel (or scalar) constant a ChannelAffine.

    A bias-like Add straight after a Conv or Dense folds into its bias first (fuse_bias); elsewhere (after a
    pool or an activation) hlsgen has no integer elementwise op with a constant, but fold_batchnorm folds a
    ChannelAffine into a Conv/Dense before it, or the quantizer runs it as a depthwise 1x1 convolution."""
    changed = False
    for name in list(graph.nodes):
        node = graph.nodes.get(name)
        if node is None or node.op not in ("Add", "Sub", "Mul", "Div") or len(node.inputs) != 2:
            continue
        affine = _scale_and_shift(graph, node)
        if affine is None:
            continue
        data, (scale, shift) = affine
        dtype = graph.tensors[data].dtype
        inputs = (data, graph.add_constant(graph.fresh_name(f"{node.name}_scale"), scale.astype(dtype)),
                  graph.add_constant(graph.fresh_name(f"{node.name}_shift"), shift.astype(dtype)))
        graph.replace_node(node.name, Node(node.name, "ChannelAffine", inputs, node.outputs, NoAttrs()))
        changed = True
    return changed


def _scale_and_shift(graph: Graph, node: Node) -> tuple[str, tuple[np.ndarray, np.ndarray]] | None:
    """The map input and the per-channel y = x * scale + shift the node computes; None for other forms."""
    a, b = node.inputs
    if graph.is_constant(a) == graph.is_constant(b):
        return None
    data, constant = (b, a) if graph.is_constant(a) else (a, b)
    info, out = graph.tensors[data], graph.tensors[node.outputs[0]]
    # a map [N, C, ...] whose shape and dtype the constant neither broadcasts nor promotes
    if len(info.shape) < 3 or (out.shape, out.dtype) != (info.shape, info.dtype):
        return None
    vector = per_channel_vector(graph.constants[constant], info.shape)
    if vector is None:
        return None
    v = vector.astype(np.float64)
    ones, zeros = np.ones_like(v), np.zeros_like(v)
    if node.op == "Add":
        return data, (ones, v)
    if node.op == "Sub":
        return data, (ones, -v) if data == a else (-ones, v)
    if node.op == "Mul":
        return data, (v, zeros)
    if data == a and np.all(v != 0):  # x / c; c / x is no affine
        return data, (1.0 / v, zeros)
    return None
