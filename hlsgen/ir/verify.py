"""The IR verifier: acyclic, each tensor produced once, every input defined, shapes consistent."""
from __future__ import annotations

import networkx as nx
import numpy as np

from ..errors import GraphInvariantError
from .graph import Graph


def verify(graph: Graph, check_shapes: bool = True) -> None:
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
    if check_shapes:
        _verify_shapes(graph)


def _verify_shapes(graph: Graph) -> None:
    """Evaluate the graph on zeros and compare every tensor's shape with its TensorInfo."""
    from ..reference import run_graph

    feeds = {n: np.zeros(graph.tensors[n].shape, graph.tensors[n].dtype) for n in graph.inputs}
    with np.errstate(all="ignore"):
        values = run_graph(graph, feeds, keep_all=True)
    for name, value in values.items():
        declared = graph.tensors[name].shape
        if tuple(value.shape) != declared:
            raise GraphInvariantError(f"tensor {name!r} is declared {declared} but computes to {value.shape}")
