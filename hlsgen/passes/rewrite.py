"""Queries and edits that several passes share: who reads a tensor, bypassing a no-op node,
dropping a node nobody reads any more, recognising a per-channel constant, keeping a pre-quantized weight's
integers through a rewrite."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..ir import Graph, Node


def is_graph_output(graph: Graph, tensor: str) -> bool:
    return tensor in graph.outputs


def sole_consumer(graph: Graph, tensor: str) -> Node | None:
    """The one node reading `tensor`, when exactly one node does and it is not also a graph output."""
    if is_graph_output(graph, tensor):
        return None
    readers = graph.consumers(tensor)
    return readers[0] if len(readers) == 1 else None


def optional_input(node: Node, index: int) -> str:
    """The name of input `index`, or "" when it is omitted."""
    return node.inputs[index] if index < len(node.inputs) else ""


def bypass(graph: Graph, node: Node) -> bool:
    """Remove `node`, whose first output equals its first input, and rewire its readers to that input.

    Returns False (and leaves the graph alone) when that is impossible without renaming a graph
    input or output.
    """
    source, result = node.inputs[0], node.outputs[0]
    if not is_graph_output(graph, result):
        graph.remove_node(node.name)
        graph.rename_tensor(result, source)
        return True
    # The output name is part of the model's interface, so the producer writes it instead.
    producer = graph.producer(source)
    if producer is None or is_graph_output(graph, source) or len(graph.consumers(source)) > 1:
        return False
    graph.remove_node(node.name)
    outputs = tuple(result if t == source else t for t in producer.outputs)
    graph.replace_node(producer.name, producer.with_(outputs=outputs))
    return True


def remove_if_unused(graph: Graph, node: Node) -> None:
    """Drop `node` when no node and no graph output reads any of its outputs."""
    if not any(is_graph_output(graph, t) or graph.consumers(t) for t in node.outputs):
        graph.remove_node(node.name)


def per_channel_vector(value: np.ndarray, out_shape: tuple[int, ...]) -> np.ndarray | None:
    """The vector along axis 1 that `value` amounts to when broadcast to `out_shape`.

    None when broadcasting `value` would change `out_shape` or `value` varies along any other axis.
    """
    if len(out_shape) < 2 or np.ndim(value) > len(out_shape):
        return None
    try:
        if np.broadcast_shapes(np.shape(value), out_shape) != tuple(out_shape):
            return None
    except ValueError:
        return None
    full = np.broadcast_to(value, out_shape)
    vector = full[(0, slice(None)) + (0,) * (len(out_shape) - 2)]
    along_channels = vector.reshape((1, -1) + (1,) * (len(out_shape) - 2))
    if not np.array_equal(full, np.broadcast_to(along_channels, out_shape)):
        return None
    return vector


def carry_weight_quant(graph: Graph, source: str, derived: str, factors, axis: int, transpose: bool = False) -> None:
    """Keep a pre-quantized weight's integers in `derived` = `source` (transposed) * `factors`, the factors
    per output channel (`axis` of the derived weight) or one for all: a negative factor flips its channel's
    signs, |factor| scales its scale, so the model's bit width survives BatchNorm folding and Gemm
    transposition. A zero or non-finite factor leaves `derived` without integers (the quantizer requantizes it)."""
    kept = graph.quant.get(source)
    if not isinstance(kept, tuple):
        return
    ints, wq = kept
    ints = ints.T if transpose else ints
    factors = np.broadcast_to(np.asarray(factors, np.float64), (ints.shape[axis],))
    scales = np.asarray(wq.scales, np.float64)
    scales = scales[:1] if len(set(wq.scales)) == 1 else scales  # per tensor
    if scales.size not in (1, factors.size) or not np.all(np.isfinite(factors) & (factors != 0)):
        return
    shape = [1] * ints.ndim
    shape[axis] = -1
    scales = np.broadcast_to(scales, factors.shape) * np.abs(factors)
    graph.quant[derived] = (ints * np.sign(factors).astype(np.int64).reshape(shape),
                            replace(wq, scales=tuple(float(s) for s in scales)))


def copy_onto(graph: Graph, node: Node, source: str, suffix: str) -> str:
    """Add a copy of the one-map node `node` reading `source` (its constant inputs shared) into a fresh tensor
    shaped like `source`, keeping `node`'s ONNX origin (messages name the user's node); return that tensor."""
    out = graph.fresh_name(f"{node.outputs[0]}_{suffix}")
    graph.tensors[out] = replace(graph.tensors[source], name=out)
    name = graph.fresh_name(f"{node.name}_{suffix}")
    graph.add_node(node.with_(name=name, inputs=(source, *node.inputs[1:]), outputs=(out,)))
    if graph.origin(node.name):
        graph.origins[name] = graph.origins[node.name]
    return out
