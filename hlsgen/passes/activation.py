"""Activation fusion into Conv and Dense."""
from __future__ import annotations

from dataclasses import replace

from ..ir import Graph, Node
from ..ops.common import Activation
from .pipeline import graph_pass
from .rewrite import sole_consumer


@graph_pass
def fuse_activation(graph: Graph) -> bool:
    """Fuse a Relu, Clip (e.g. Relu6) or LeakyRelu into the Conv or Dense before it."""
    changed = False
    for name in list(graph.nodes):
        node = graph.nodes.get(name)
        activation = _as_fused_activation(node) if node is not None else None
        if activation is None:
            continue
        producer = graph.producer(node.inputs[0])
        if producer is None or producer.op not in ("Conv", "Dense") or producer.attrs.activation is not None:
            continue
        if sole_consumer(graph, node.inputs[0]) is not node:
            continue
        fused = producer.with_(attrs=replace(producer.attrs, activation=activation), outputs=node.outputs)
        graph.remove_node(node.name)
        graph.replace_node(producer.name, fused)
        changed = True
    return changed


def _as_fused_activation(node: Node) -> Activation | None:
    if node.op == "Relu":
        return Activation("relu")
    if node.op == "Clip":
        return Activation("clip", lo=float(node.attrs.lo), hi=float(node.attrs.hi))
    if node.op == "LeakyRelu":
        return Activation("leaky_relu", alpha=float(node.attrs.alpha))
    return None
