"""Bias fusion."""
from __future__ import annotations

import numpy as np

from ..ir import Graph, Node
from .pipeline import graph_pass
from .rewrite import optional_input, per_channel_vector, sole_consumer


@graph_pass
def fuse_bias(graph: Graph) -> bool:
    """Fold an Add of a per-channel constant after a Conv or Dense into that node's bias."""
    changed = False
    for name in list(graph.nodes):
        node = graph.nodes.get(name)
        if node is not None and node.op == "Add" and _fuse_into_producer(graph, node):
            changed = True
    return changed


def _fuse_into_producer(graph: Graph, add: Node) -> bool:
    for data, addend in (add.inputs, add.inputs[::-1]):
        if graph.is_constant(addend) and not graph.is_constant(data):
            break
    else:
        return False
    producer = graph.producer(data)
    # A fused activation comes after the bias, so the Add cannot move in front of it.
    if producer is None or producer.op not in ("Conv", "Dense") or producer.attrs.activation is not None:
        return False
    if sole_consumer(graph, data) is not add:
        return False
    bias = optional_input(producer, 2)
    if bias and not graph.is_constant(bias):
        return False
    data_info, sum_info = graph.tensors[data], graph.tensors[add.outputs[0]]
    # The Add must neither broadcast the data to a bigger shape nor promote its dtype.
    if (sum_info.shape, sum_info.dtype) != (data_info.shape, data_info.dtype):
        return False
    vector = per_channel_vector(graph.constants[addend], data_info.shape)
    if vector is None:
        return False
    dtype = data_info.dtype
    old = graph.constants[bias].astype(np.float64) if bias else 0.0
    new_bias = graph.add_constant(graph.fresh_name(f"{producer.name}_bias"), (old + vector).astype(dtype))
    inputs = producer.inputs[:2] + (new_bias,)
    graph.remove_node(add.name)
    graph.replace_node(producer.name, producer.with_(inputs=inputs, outputs=add.outputs))
    return True
