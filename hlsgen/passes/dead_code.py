"""Dead node elimination."""
from __future__ import annotations

from ..ir import Graph
from .pipeline import graph_pass


@graph_pass
def eliminate_dead_nodes(graph: Graph) -> bool:
    """Remove nodes none of whose outputs reach a graph output."""
    needed = set(graph.outputs)
    dead = []
    for node in reversed(list(graph.topological())):
        if needed.isdisjoint(node.outputs):
            dead.append(node.name)
        else:
            needed.update(node.inputs)
    for name in dead:
        graph.remove_node(name)
    return bool(dead)
