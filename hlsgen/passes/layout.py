"""Transpose and Reshape simplification."""
from __future__ import annotations

from dataclasses import replace

from ..ir import Graph, Node
from .pipeline import graph_pass
from .rewrite import bypass, is_graph_output, remove_if_unused


@graph_pass
def cancel_transposes_reshapes(graph: Graph) -> bool:
    """Compose back-to-back Transposes and Reshapes; drop a flattening Reshape that only feeds Dense."""
    changed = False
    for name in [n.name for n in graph.topological()]:
        # Re-read the node: composing an earlier pair may have rewired or removed it.
        node = graph.nodes.get(name)
        if node is None:
            continue
        if node.op == "Transpose":
            changed |= _compose_transposes(graph, node)
        elif node.op == "Reshape":
            changed |= _compose_reshapes(graph, node) or _drop_flatten_before_dense(graph, node)
    return changed


def _compose_transposes(graph: Graph, second: Node) -> bool:
    first = graph.producer(second.inputs[0])
    if first is None or first.op != "Transpose":
        return False
    # Output axis i is axis second.perm[i] of the middle tensor, which is input axis first.perm[second.perm[i]].
    perm = tuple(first.attrs.perm[i] for i in second.attrs.perm)
    composed = second.with_(inputs=first.inputs[:1], attrs=replace(second.attrs, perm=perm))
    graph.replace_node(second.name, composed)
    remove_if_unused(graph, first)
    if perm == tuple(range(len(perm))):
        bypass(graph, composed)
    return True


def _compose_reshapes(graph: Graph, second: Node) -> bool:
    first = graph.producer(second.inputs[0])
    if first is None or first.op != "Reshape":
        return False
    # A Reshape's target shape is static, so only the input it reads changes.
    composed = second.with_(inputs=first.inputs[:1])
    graph.replace_node(second.name, composed)
    remove_if_unused(graph, first)
    if graph.shape(composed.inputs[0]) == graph.shape(composed.outputs[0]):
        bypass(graph, composed)
    return True


def _drop_flatten_before_dense(graph: Graph, reshape: Node) -> bool:
    """[N, ...] -> [N, prod(...)] in front of Dense nodes only: Dense flattens its input itself."""
    source, flat = reshape.inputs[0], reshape.outputs[0]
    in_shape, out_shape = graph.shape(source), graph.shape(flat)
    if len(in_shape) < 3 or out_shape != (in_shape[0], graph.tensors[source].size // in_shape[0]):
        return False
    readers = graph.consumers(flat)
    if is_graph_output(graph, flat) or not readers:
        return False
    if any(r.op != "Dense" or r.inputs[0] != flat or flat in r.inputs[1:] for r in readers):
        return False
    for r in readers:
        graph.replace_node(r.name, r.with_(inputs=(source,) + r.inputs[1:]))
    graph.remove_node(reshape.name)
    return True
