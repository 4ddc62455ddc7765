"""The IR verifier: acyclic, each tensor produced once, every input defined. (That the declared shapes are
the computed ones needs the reference executor: hlsgen.reference.verify_graph.)"""
from __future__ import annotations

import networkx as nx

from ..errors import GraphInvariantError
from .graph import Graph


def verify(graph: Graph) -> None:
    """Raise GraphInvariantError on the first broken invariant."""
    defined = set(graph.inputs) | set(graph.constants)
    for t in defined:
        if t not in graph.tensors:
            raise GraphInvariantError(f"tensor {t!r} has no TensorInfo")
    overlap = set(graph.inputs) & set(graph.constants)
    if overlap:
        raise GraphInvariantError(f"tensors {sorted(overlap)} are both graph inputs and constants")
    produced: dict[str, str] = {}
    for node in graph.nodes.values():
        for out in node.outputs:
            if out in produced or out in defined:
                raise GraphInvariantError(f"tensor {out!r} is produced more than once (by {node.name!r})")
            if out not in graph.tensors:
                raise GraphInvariantError(f"output {out!r} of {node.name!r} has no TensorInfo")
            produced[out] = node.name
    available = defined | set(produced) | {""}
    for node in graph.nodes.values():
        missing = [t for t in node.inputs if t not in available]
        if missing:
            raise GraphInvariantError(f"node {node.name!r} reads undefined tensor(s) {missing}")
    for out in graph.outputs:
        if out not in available:
            raise GraphInvariantError(f"graph output {out!r} is never produced")
    if not nx.is_directed_acyclic_graph(graph.to_networkx()):
        raise GraphInvariantError(f"graph {graph.name!r} has a cycle")
