"""Removal of nodes that pass their input through unchanged."""
from __future__ import annotations

from ..ir import Graph, Node
from .pipeline import graph_pass
from .rewrite import bypass


@graph_pass
def remove_identities(graph: Graph) -> bool:
    """Remove Identity, Dropout, Casts to the same type, Reshapes to the same shape and identity Transposes."""
    changed = False
    for name in list(graph.nodes):
        # Re-read the node: bypassing an earlier one may have rewired it.
        node = graph.nodes[name]
        if _is_identity(graph, node) and bypass(graph, node):
            changed = True
    return changed


def _is_identity(graph: Graph, node: Node) -> bool:
    if node.op in ("Identity", "Dropout"):
        return True
    if node.op == "Reshape":
        return graph.shape(node.inputs[0]) == graph.shape(node.outputs[0])
    if node.op == "Cast":
        return graph.tensors[node.inputs[0]].dtype == node.attrs.to
    if node.op == "Transpose":
        return tuple(node.attrs.perm) == tuple(range(len(node.attrs.perm)))
    return False
