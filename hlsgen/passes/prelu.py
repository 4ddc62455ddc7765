"""PRelu in the ops the integer model has."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..ir import Graph, Node
from ..ops.activation import LeakyReluAttrs
from ..ops.registry import NoAttrs
from .pipeline import graph_pass
from .rewrite import per_channel_vector


@graph_pass
def prelu_as_relus(graph: Graph) -> bool:
    """Rewrite the PRelu of a feature map with constant slopes in ops the integer model has.

    One slope for every channel is a LeakyRelu; per-channel slopes are relu(x) + (-slope) * relu(-x), a
    residual Add of two Relus and two ChannelAffines (depthwise 1x1 convolutions), since the integer model
    has no per-channel multiplier for negative values."""
    changed = False
    for name in list(graph.nodes):
        node = graph.nodes.get(name)
        if node is None or node.op != "PRelu" or not graph.is_constant(node.inputs[1]):
            continue
        x, (y,) = node.inputs[0], node.outputs
        info = graph.tensors[x]
        slope = per_channel_vector(graph.constants[node.inputs[1]], info.shape)
        if slope is None or len(info.shape) < 3 or graph.tensors[y].shape != info.shape:
            continue
        if np.all(slope == slope[0]):
            graph.replace_node(name, Node(name, "LeakyRelu", (x,), (y,), LeakyReluAttrs(float(slope[0]))))
            changed = True
            continue

        def tensor(stem: str) -> str:
            fresh = graph.fresh_name(f"{y}_{stem}")
            graph.tensors[fresh] = replace(info, name=fresh)
            return fresh

        def affine(stem: str, source: str, scale: np.ndarray) -> Node:
            consts = (graph.add_constant(graph.fresh_name(f"{name}_{stem}_scale"), scale.astype(info.dtype)),
                      graph.add_constant(graph.fresh_name(f"{name}_{stem}_shift"), np.zeros_like(scale, info.dtype)))
            return Node(graph.fresh_name(f"{name}_{stem}"), "ChannelAffine", (source, *consts), (tensor(stem),), NoAttrs())

        negated = affine("negate", x, -np.ones_like(slope))
        negative_part = Node(graph.fresh_name(f"{name}_relu_negative"), "Relu", negated.outputs, (tensor("relu_neg"),),
                             NoAttrs())
        scaled = affine("slope", negative_part.outputs[0], -slope.astype(np.float64))
        positive_part = Node(graph.fresh_name(f"{name}_relu"), "Relu", (x,), (tensor("relu"),), NoAttrs())
        graph.replace_node(name, Node(name, "Add", (positive_part.outputs[0], scaled.outputs[0]), (y,), NoAttrs()))
        for new in (negated, negative_part, scaled, positive_part):
            graph.add_node(new)
        changed = True
    return changed
