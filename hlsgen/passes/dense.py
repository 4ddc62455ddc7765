"""Gemm / MatMul to Dense."""
from __future__ import annotations

import numpy as np

from .. import ops  # noqa: F401  (registers Dense, whose attributes the pass builds)
from ..ir import Graph, Node
from ..ops.registry import OPS
from .pipeline import graph_pass
from .rewrite import carry_weight_quant, optional_input, per_channel_vector


@graph_pass
def fuse_dense(graph: Graph) -> bool:
    """Turn Gemm and MatMul of an activation by a constant weight into Dense (weight [K, M], bias [M])."""
    changed = False
    for node in list(graph.nodes.values()):
        if node.op == "Gemm":
            dense = _gemm_as_dense(graph, node)
        elif node.op == "MatMul":
            dense = _matmul_as_dense(graph, node)
        else:
            continue
        if dense is not None:
            graph.replace_node(node.name, dense)
            changed = True
    return changed


def _gemm_as_dense(graph: Graph, gemm: Node) -> Node | None:
    """Y = alpha * A @ B' + beta * C becomes Dense(A, alpha * B', beta * C) when B and C are constants
    and beta * C is the same row for every batch entry."""
    a, b, c = gemm.inputs[0], gemm.inputs[1], optional_input(gemm, 2)
    attrs = gemm.attrs
    if attrs.trans_a or graph.is_constant(a) or len(graph.shape(a)) != 2:
        return None
    if not graph.is_constant(b) or (c and not graph.is_constant(c)):
        return None
    bias = None
    if c:
        bias = per_channel_vector(attrs.beta * graph.constants[c].astype(np.float64), graph.shape(gemm.outputs[0]))
        if bias is None:
            return None
    weight = graph.constants[b]
    dtype = weight.dtype
    weight = (weight.T if attrs.trans_b else weight).astype(np.float64) * attrs.alpha
    inputs = [a, graph.add_constant(graph.fresh_name(f"{gemm.name}_weight"), weight.astype(dtype))]
    carry_weight_quant(graph, b, inputs[1], attrs.alpha, 1, transpose=attrs.trans_b)
    if bias is not None:
        inputs.append(graph.add_constant(graph.fresh_name(f"{gemm.name}_bias"), bias.astype(dtype)))
    return Node(gemm.name, "Dense", tuple(inputs), gemm.outputs, OPS["Dense"].attrs(activation=None))


def _matmul_as_dense(graph: Graph, matmul: Node) -> Node | None:
    """A [N, K] @ B [K, M] with a constant B is a Dense without bias."""
    a, b = matmul.inputs
    if graph.is_constant(a) or len(graph.shape(a)) != 2:
        return None
    if not graph.is_constant(b) or graph.constants[b].ndim != 2:
        return None
    return Node(matmul.name, "Dense", (a, b), matmul.outputs, OPS["Dense"].attrs(activation=None))
