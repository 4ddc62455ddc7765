"""Matrix products: ONNX Gemm and MatMul, and the internal Dense layer that passes build from them."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import Node
from .common import Activation, apply_activation
from .registry import NoAttrs, kernel, onnx_importer


@dataclass(frozen=True)
class GemmAttrs:
    alpha: float = 1.0
    beta: float = 1.0
    trans_a: bool = False
    trans_b: bool = False


@dataclass(frozen=True)
class DenseAttrs:
    activation: Activation | None = None


@kernel("Gemm", GemmAttrs)
def gemm(a: GemmAttrs, x: np.ndarray, w: np.ndarray, c: np.ndarray | None = None) -> np.ndarray:
    """y = alpha * op(A) @ op(B) + beta * C, op transposing when trans_*; C broadcasts to [M, N]."""
    y = a.alpha * ((x.T if a.trans_a else x) @ (w.T if a.trans_b else w))
    if c is not None:
        y = y + a.beta * c
    return y.astype(x.dtype)


@kernel("MatMul")
def matmul(_: NoAttrs, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """numpy matmul: 1-D operands are promoted and the added axis dropped; leading axes broadcast."""
    return np.matmul(x, w)


@kernel("Dense", DenseAttrs)
def dense(a: DenseAttrs, x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """y = act(x' @ w + b), x' being x flattened row-major to [N, K]; w: [K, M], b: [M]."""
    # Flattening here lets a pass absorb a Flatten that feeds the layer.
    y = x.reshape(x.shape[0], -1) @ w
    if b is not None:
        y = y + b
    return apply_activation(a.activation, y.astype(x.dtype))


@onnx_importer("Gemm")
def import_gemm(node, ctx) -> list[Node]:
    # Opset < 7 also has `broadcast`; numpy broadcasting of C covers both of its settings.
    attrs = ctx.attrs(node)
    gemm_attrs = GemmAttrs(
        float(attrs.get("alpha", 1.0)),
        float(attrs.get("beta", 1.0)),
        bool(attrs.get("transA", 0)),
        bool(attrs.get("transB", 0)),
    )
    return [Node(ctx.node_name(node), "Gemm", tuple(node.input), (node.output[0],), gemm_attrs)]


@onnx_importer("MatMul")
def import_matmul(node, ctx) -> list[Node]:
    return [Node(ctx.node_name(node), "MatMul", tuple(node.input[:2]), (node.output[0],), NoAttrs())]
