"""Constant folding."""
from __future__ import annotations

import numpy as np

from .. import ops  # noqa: F401  (registers the kernels `evaluate` runs)
from ..ir import Graph
from ..ops.registry import evaluate
from .pipeline import graph_pass
from .rewrite import is_graph_output


@graph_pass
def fold_constants(graph: Graph) -> bool:
    """Evaluate nodes whose inputs are all constants and keep their results as constants.

    Producers of graph outputs are left in place: every graph output stays computed by a node.
    """
    changed = False
    for node in list(graph.topological()):
        given = [t for t in node.inputs if t]
        if not given or not all(graph.is_constant(t) for t in given):
            continue
        if any(is_graph_output(graph, t) for t in node.outputs):
            continue
        values = evaluate(node, [graph.constants[t] if t else None for t in node.inputs])
        graph.remove_node(node.name)
        for name, value in zip(node.outputs, values):
            graph.add_constant(name, np.asarray(value))
        changed = True
    return changed
