"""Per-node cost figures for reports: parameter count and multiply-accumulates."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .ir import Graph, Node


@dataclass(frozen=True)
class NodeCost:
    name: str
    op: str
    output_shape: tuple[int, ...]
    params: int
    macs: int


def _conv_macs(graph: Graph, node: Node) -> int:
    w_shape = graph.shape(node.inputs[1])  # M, C/group, *K
    out = graph.shape(node.outputs[0])
    return int(np.prod(out, dtype=np.int64)) * int(np.prod(w_shape[1:], dtype=np.int64))


def _dense_macs(graph: Graph, node: Node) -> int:
    k, m = graph.shape(node.inputs[1])
    batch = graph.shape(node.inputs[0])[0]
    return batch * k * m


def _matmul_macs(graph: Graph, node: Node) -> int:
    a = graph.shape(node.inputs[0])
    out = graph.shape(node.outputs[0])
    k = a[-1] if node.op == "MatMul" or not node.attrs.trans_a else a[0]
    return int(np.prod(out, dtype=np.int64)) * int(k)


_MACS = {"Conv": _conv_macs, "Dense": _dense_macs, "Gemm": _matmul_macs, "MatMul": _matmul_macs}


def node_cost(graph: Graph, node: Node) -> NodeCost:
    params = sum(graph.constants[t].size for t in node.inputs if t in graph.constants)
    macs = _MACS[node.op](graph, node) if node.op in _MACS else 0
    return NodeCost(node.name, op_label(node), graph.shape(node.outputs[0]), int(params), int(macs))


def op_label(node: Node) -> str:
    """The op name, with a fused activation shown as `Conv+relu`."""
    activation = getattr(node.attrs, "activation", None)
    return f"{node.op}+{activation}" if activation is not None else node.op


def graph_costs(graph: Graph) -> list[NodeCost]:
    return [node_cost(graph, node) for node in graph.topological()]
