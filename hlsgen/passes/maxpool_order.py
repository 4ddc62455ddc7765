"""Running MaxPool before a monotone activation."""
from __future__ import annotations

from ..ir import Graph, Node
from ..reference.float_executor import annotate_shapes
from .pipeline import graph_pass
from .rewrite import sole_consumer


@graph_pass
def move_maxpool_before_activation(graph: Graph) -> bool:
    """Swap a monotone activation and the MaxPool after it, so the activation runs on the smaller tensor.

    max(f(x)) == f(max(x)) for every non-decreasing f, so the result is unchanged.
    """
    changed = False
    for name in list(graph.nodes):
        activation = graph.nodes.get(name)
        if activation is None or not _is_non_decreasing(activation):
            continue
        pool = sole_consumer(graph, activation.outputs[0])
        if pool is None or pool.op != "MaxPool":
            continue
        if graph.tensors[pool.outputs[0]].size >= graph.tensors[activation.outputs[0]].size:
            continue  # the pool does not shrink the tensor, so nothing is saved
        pooled = graph.fresh_name(f"{activation.inputs[0]}_pooled")
        early_pool = pool.with_(inputs=(activation.inputs[0],), outputs=(pooled,))
        graph.replace_node(pool.name, early_pool)
        graph.replace_node(activation.name, activation.with_(inputs=(pooled,), outputs=pool.outputs))
        annotate_shapes(graph, [early_pool])
        changed = True
    return changed


def _is_non_decreasing(node: Node) -> bool:
    if node.op in ("Relu", "Clip", "Sigmoid"):
        return True
    if node.op in ("LeakyRelu", "HardSigmoid"):
        return node.attrs.alpha >= 0
    return False
