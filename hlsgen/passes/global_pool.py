"""A MaxPool or AveragePool whose one window covers the whole input map is a global pool (MobileNet and
Keras exports: a 7x7 AveragePool on a 7x7 map); as one, it maps to the global-pool unit, whatever its kernel."""
from __future__ import annotations

from ..ir import Graph, Node
from ..ops.registry import NoAttrs
from .pipeline import graph_pass

GLOBAL = {"MaxPool": "GlobalMaxPool", "AveragePool": "GlobalAveragePool"}


@graph_pass
def globalize_pools(graph: Graph) -> bool:
    """Rewrite a whole-map MaxPool/AveragePool (output 1 x ... x 1) to GlobalMaxPool/GlobalAveragePool."""
    changed = False
    for node in list(graph.nodes.values()):
        if node.op in GLOBAL and _covers_whole_map(graph, node):
            graph.replace_node(node.name, Node(node.name, GLOBAL[node.op], node.inputs, node.outputs, NoAttrs()))
            changed = True
    return changed


def _covers_whole_map(graph: Graph, node: Node) -> bool:
    """One output window that reads every input element once, and an average that divides by their count."""
    a = node.attrs
    sizes = graph.shape(node.inputs[0])[2:]
    n = len(sizes)
    if any(d != 1 for d in graph.shape(node.outputs[0])[2:]):
        return False
    if any(d != 1 and k != 1 for k, d in zip(a.kernel_shape, a.dilations)):
        return False  # a dilated window skips elements
    if node.op == "AveragePool" and a.count_include_pad and any(a.pads):
        return False  # the divisor counts the padding
    return all(k - a.pads[i] >= size for i, (k, size) in enumerate(zip(a.kernel_shape, sizes))) and n > 0
