"""BatchNormalization folding."""
from __future__ import annotations

import numpy as np

from ..ir import Graph, Node
from ..ops.registry import NoAttrs
from .pipeline import graph_pass
from .rewrite import carry_weight_quant, optional_input, sole_consumer

# Where the output channels sit in each foldable producer's weight: Conv w is [M, C/g, *K], Dense w is [K, M].
_WEIGHT_CHANNEL_AXIS = {"Conv": 0, "Dense": 1}


@graph_pass
def fold_batchnorm(graph: Graph) -> bool:
    """Fold BatchNormalization into the Conv or Dense before it, or else make it a ChannelAffine.

    A ChannelAffine (from an earlier round) that now follows a foldable Conv or Dense is folded too.
    """
    changed = False
    for name in list(graph.nodes):
        node = graph.nodes.get(name)
        if node is None or node.op not in ("BatchNormalization", "ChannelAffine"):
            continue
        affine = _scale_and_shift(graph, node)
        if affine is None:
            continue
        if _fold_into_producer(graph, node, *affine):
            changed = True
        elif node.op == "BatchNormalization":
            _replace_with_channel_affine(graph, node, *affine)
            changed = True
    return changed


def _scale_and_shift(graph: Graph, node: Node) -> tuple[np.ndarray, np.ndarray] | None:
    """The per-channel y = x * scale + shift the node computes, in float64; None unless its parameters are constants."""
    params = node.inputs[1:]
    if not all(graph.is_constant(t) for t in params):
        return None
    values = [graph.constants[t].astype(np.float64) for t in params]
    if node.op == "ChannelAffine":
        scale, shift = values
        return scale, shift
    gamma, beta, mean, var = values
    scale = gamma / np.sqrt(var + node.attrs.epsilon)
    return scale, beta - mean * scale


def _fold_into_producer(graph: Graph, norm: Node, scale: np.ndarray, shift: np.ndarray) -> bool:
    producer = graph.producer(norm.inputs[0])
    if producer is None or producer.op not in _WEIGHT_CHANNEL_AXIS or producer.attrs.activation is not None:
        return False
    if sole_consumer(graph, norm.inputs[0]) is not norm:
        return False
    weight, bias = producer.inputs[1], optional_input(producer, 2)
    if not graph.is_constant(weight) or (bias and not graph.is_constant(bias)):
        return False
    w = graph.constants[weight]
    axis = _WEIGHT_CHANNEL_AXIS[producer.op]
    if scale.shape != (w.shape[axis],) or shift.shape != scale.shape:
        return False
    channel_shape = [1] * w.ndim
    channel_shape[axis] = -1
    new_w = (w * scale.reshape(channel_shape)).astype(w.dtype)
    old_b = graph.constants[bias].astype(np.float64) if bias else 0.0
    new_b = (old_b * scale + shift).astype(w.dtype)
    inputs = (
        producer.inputs[0],
        graph.add_constant(graph.fresh_name(f"{producer.name}_weight"), new_w),
        graph.add_constant(graph.fresh_name(f"{producer.name}_bias"), new_b),
    )
    carry_weight_quant(graph, weight, inputs[1], scale, axis)
    graph.remove_node(norm.name)
    graph.replace_node(producer.name, producer.with_(inputs=inputs, outputs=norm.outputs))
    return True


def _replace_with_channel_affine(graph: Graph, norm: Node, scale: np.ndarray, shift: np.ndarray) -> None:
    dtype = graph.tensors[norm.inputs[0]].dtype
    inputs = (
        norm.inputs[0],
        graph.add_constant(graph.fresh_name(f"{norm.name}_scale"), scale.astype(dtype)),
        graph.add_constant(graph.fresh_name(f"{norm.name}_shift"), shift.astype(dtype)),
    )
    graph.replace_node(norm.name, Node(norm.name, "ChannelAffine", inputs, norm.outputs, NoAttrs()))
