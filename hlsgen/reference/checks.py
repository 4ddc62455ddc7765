"""A graph is well formed (hlsgen.ir.verify) and computes the shapes it declares (evaluated on zeros)."""
from __future__ import annotations

import numpy as np

from ..errors import GraphInvariantError
from ..ir import Graph, verify
from .float_executor import run_graph


def verify_graph(graph: Graph) -> None:
    """Raise GraphInvariantError on the first broken invariant or shape."""
    verify(graph)
    feeds = {n: np.zeros(graph.tensors[n].shape, graph.tensors[n].dtype) for n in graph.inputs}
    with np.errstate(all="ignore"):
        values = run_graph(graph, feeds, keep_all=True)
    for name, value in values.items():
        declared = graph.tensors[name].shape
        if tuple(value.shape) != declared:
            raise GraphInvariantError(f"tensor {name!r} is declared {declared} but computes to {value.shape}")
