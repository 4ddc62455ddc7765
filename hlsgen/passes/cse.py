"""Common subexpression elimination."""
from __future__ import annotations

import hashlib
from typing import Hashable

from ..ir import Graph, Node
from .pipeline import graph_pass
from .rewrite import is_graph_output


@graph_pass
def eliminate_common_subexpressions(graph: Graph) -> bool:
    """Merge nodes that apply the same op with equal attributes to the same inputs."""
    fingerprints: dict[str, Hashable] = {}
    seen: dict[Hashable, Node] = {}
    changed = False
    for name in [n.name for n in graph.topological()]:
        # Re-read the node: merging an earlier node may have rewired its inputs.
        node = graph.nodes[name]
        key = _key(graph, node, fingerprints)
        if key is None:
            continue
        kept = seen.setdefault(key, node)
        if kept is node:
            continue
        survivor = _merge(graph, kept, node)
        if survivor is not None:
            seen[key] = survivor
            changed = True
    return changed


def _key(graph: Graph, node: Node, fingerprints: dict[str, Hashable]) -> Hashable | None:
    """What makes two nodes compute the same thing; None when the attributes cannot be compared."""
    try:
        hash(node.attrs)
    except TypeError:
        return None
    inputs = tuple(_input_key(graph, t, fingerprints) for t in node.inputs)
    return node.op, node.attrs, inputs, len(node.outputs)


def _input_key(graph: Graph, tensor: str, fingerprints: dict[str, Hashable]) -> Hashable:
    if not graph.is_constant(tensor):
        return tensor
    # Constants compare by value, so equal weights stored under two names still match.
    if tensor not in fingerprints:
        value = graph.constants[tensor]
        digest = hashlib.sha256(value.tobytes()).hexdigest()
        fingerprints[tensor] = ("constant", str(value.dtype), value.shape, digest)
    return fingerprints[tensor]


def _merge(graph: Graph, kept: Node, duplicate: Node) -> Node | None:
    """Remove one of two equivalent nodes and point the readers of its outputs at the other's.

    Graph output names must survive, so the node producing one is the one kept; when both do,
    neither can go. Returns the surviving node, or None when nothing was merged.
    """
    if any(is_graph_output(graph, t) for t in duplicate.outputs):
        if any(is_graph_output(graph, t) for t in kept.outputs):
            return None
        kept, duplicate = duplicate, kept
    graph.remove_node(duplicate.name)
    for old, new in zip(duplicate.outputs, kept.outputs):
        graph.rename_tensor(old, new)
    return kept
