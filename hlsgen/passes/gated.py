"""Gated activations as exporters write them, back to one elementwise op (a lookup table on the vector unit):

- SiLU / Swish: `Mul(x, Sigmoid(x))` (PyTorch's nn.SiLU, YOLOv5/v8) -> SiLU(x)
- HardSwish: `Mul(x, HardSigmoid(x))` with alpha 1/6, beta 1/2 (MobileNetV3 exports) -> HardSwish(x)
- Mish: `Mul(x, Tanh(Softplus(x)))` -> Mish(x)
- GELU: `Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5)` (PyTorch before opset 20), the 0.5 on either product,
  `Div` by sqrt 2 or `Mul` by 1/sqrt 2 -> Gelu(x)

Each gate's inner nodes must read nothing but x and be read by nothing but the gate (no graph output).
"""
from __future__ import annotations

import math

import numpy as np

from ..ir import Graph, Node
from ..ops.activation import GeluAttrs
from ..ops.registry import NoAttrs
from .pipeline import graph_pass
from .rewrite import sole_consumer

HARD_SWISH = (1 / 6, 0.5)  # HardSigmoid's (alpha, beta) in x * HardSigmoid(x) = HardSwish(x)


@graph_pass
def fuse_gated_activations(graph: Graph) -> bool:
    """Rewrite SiLU, HardSwish, Mish and GELU from the elementwise products exporters write them as."""
    changed = False
    for name in list(graph.nodes):
        node = graph.nodes.get(name)
        if node is None or node.op != "Mul":
            continue
        fused = _gate(graph, node) or _gelu(graph, node)
        if fused is None:
            continue
        op, attrs, x, inner = fused
        for n in inner:
            graph.remove_node(n.name)
        graph.replace_node(node.name, Node(node.name, op, (x,), node.outputs, attrs))
        changed = True
    return changed


def _gate(graph: Graph, mul: Node) -> tuple[str, object, str, list[Node]] | None:
    """Mul(x, f(x)) for f in Sigmoid, HardSigmoid(1/6, 1/2), Tanh(Softplus)."""
    for x, gate in (mul.inputs, mul.inputs[::-1]):
        chain = _unary_chain(graph, gate, x)
        ops = [n.op for n in chain]
        if ops == ["Sigmoid"]:
            return "SiLU", NoAttrs(), x, chain
        if ops == ["HardSigmoid"] and np.allclose((chain[0].attrs.alpha, chain[0].attrs.beta), HARD_SWISH, rtol=1e-6):
            return "HardSwish", NoAttrs(), x, chain
        if ops == ["Softplus", "Tanh"]:
            return "Mish", NoAttrs(), x, chain
    return None


def _unary_chain(graph: Graph, tensor: str, source: str, depth: int = 2) -> list[Node]:
    """The nodes (first to last) of a chain of one-input ops from `source` to `tensor`, each read only by the next
    (the last only by the gate); [] when `tensor` is no such chain."""
    chain: list[Node] = []
    while tensor != source and len(chain) < depth:
        node = graph.producer(tensor)
        if node is None or len(node.inputs) != 1 or len(node.outputs) != 1 or sole_consumer(graph, tensor) is None:
            return []
        chain.insert(0, node)
        tensor = node.inputs[0]
    return chain if tensor == source else []


def _gelu(graph: Graph, mul: Node) -> tuple[str, object, str, list[Node]] | None:
    """x * 0.5 * (1 + erf(x / sqrt 2)) as two Muls, in either grouping."""
    factors, inner = _product(graph, mul)
    if factors is None or len(factors) != 3:
        return None
    half = [t for t in factors if _scalar(graph, t, 0.5)]
    rest = [t for t in factors if t not in half]
    if len(half) != 1 or len(rest) != 2:
        return None
    for x, one_plus in (rest, rest[::-1]):
        add = _sole_producer(graph, one_plus, "Add")
        if add is None:
            continue
        erf_out = [t for t in add.inputs if not _scalar(graph, t, 1.0)]
        if len(erf_out) != 1 or len(add.inputs) != 2:
            continue
        erf = _sole_producer(graph, erf_out[0], "Erf")
        scaled = erf and _sole_producer(graph, erf.inputs[0], "Div", "Mul")
        if scaled is None or scaled.inputs[0] != x:
            continue
        factor = math.sqrt(2) if scaled.op == "Div" else 1 / math.sqrt(2)
        if _scalar(graph, scaled.inputs[1], factor):
            return "Gelu", GeluAttrs("none"), x, inner + [add, erf, scaled]
    return None


def _product(graph: Graph, mul: Node) -> tuple[list[str] | None, list[Node]]:
    """The factors of `mul` with one inner Mul (read only by `mul`) opened: ([a, b, c], [inner Mul])."""
    for i, t in enumerate(mul.inputs):
        inner = _sole_producer(graph, t, "Mul")
        if inner is not None:
            return [*inner.inputs, mul.inputs[1 - i]], [inner]
    return None, []


def _sole_producer(graph: Graph, tensor: str, *ops: str) -> Node | None:
    node = graph.producer(tensor)
    if node is None or node.op not in ops or sole_consumer(graph, tensor) is None:
        return None
    return node


def _scalar(graph: Graph, tensor: str, value: float) -> bool:
    """`tensor` is a constant of one value, `value` to float32 precision."""
    constant = graph.constants.get(tensor)
    return constant is not None and constant.size == 1 and math.isclose(float(constant.ravel()[0]), value,
                                                                       rel_tol=1e-6)
