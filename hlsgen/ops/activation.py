"""Elementwise activations: Relu, Sigmoid, HardSwish, Clip, LeakyRelu, HardSigmoid, PRelu, Elu, Selu, Tanh,
Softplus, Softsign, Erf, Mish, Gelu, and SiLU (x * Sigmoid(x): no ONNX op, hlsgen.passes.gated fuses exporters' form)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..ir import Node
from .registry import NoAttrs, UnsupportedAttribute, kernel, onnx_importer
from .shape import reshaped


@dataclass(frozen=True)
class ClipAttrs:
    # Exact Python ints for integer tensors (an int64 bound need not survive a trip through float).
    lo: float = -math.inf
    hi: float = math.inf


@dataclass(frozen=True)
class LeakyReluAttrs:
    alpha: float = 0.01


@dataclass(frozen=True)
class HardSigmoidAttrs:
    alpha: float = 0.2
    beta: float = 0.5


@dataclass(frozen=True)
class EluAttrs:
    alpha: float = 1.0


@dataclass(frozen=True)
class GeluAttrs:
    approximate: str = "none"  # "none": x * Phi(x) with erf; "tanh": the tanh approximation


# ONNX's Selu defaults: the self-normalizing constants, as float32 values.
SELU_ALPHA, SELU_GAMMA = 1.67326319217681884765625, 1.05070102214813232421875


@dataclass(frozen=True)
class SeluAttrs:
    alpha: float = SELU_ALPHA
    gamma: float = SELU_GAMMA


# ---- kernels -------------------------------------------------------------------------------
@kernel("Relu")
def relu(_: NoAttrs, x: np.ndarray) -> np.ndarray:
    """max(x, 0)."""
    return np.maximum(x, 0)


@kernel("Sigmoid")
def sigmoid(_: NoAttrs, x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x))."""
    # exp(-|x|) never overflows, and the x < 0 branch keeps tiny results accurate.
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


@kernel("HardSwish")
def hard_swish(_: NoAttrs, x: np.ndarray) -> np.ndarray:
    """x * max(0, min(1, x/6 + 1/2))."""
    return x * np.minimum(np.maximum(x * (1 / 6) + 0.5, 0), 1)


@kernel("Clip", ClipAttrs)
def clip(a: ClipAttrs, x: np.ndarray) -> np.ndarray:
    """min(max(x, lo), hi); when lo > hi every element becomes hi, as ONNX specifies."""
    return np.minimum(np.maximum(x, _bound(a.lo, x.dtype)), _bound(a.hi, x.dtype))


def _bound(value: float, dtype: np.dtype) -> np.ndarray:
    """A clip bound in x's dtype; for integers an infinite or out-of-range bound saturates to the dtype's range."""
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        value = min(max(value, info.min), info.max)
    return np.asarray(value).astype(dtype)


@kernel("LeakyRelu", LeakyReluAttrs)
def leaky_relu(a: LeakyReluAttrs, x: np.ndarray) -> np.ndarray:
    """x for x >= 0, alpha * x below."""
    return np.where(x >= 0, x, x * a.alpha)


@kernel("HardSigmoid", HardSigmoidAttrs)
def hard_sigmoid(a: HardSigmoidAttrs, x: np.ndarray) -> np.ndarray:
    """max(0, min(1, alpha * x + beta))."""
    return np.minimum(np.maximum(x * a.alpha + a.beta, 0), 1)


@kernel("PRelu")
def prelu(_: NoAttrs, x: np.ndarray, slope: np.ndarray) -> np.ndarray:
    """x for x >= 0, slope * x below; slope broadcasts to x."""
    return np.where(x >= 0, x, x * slope)


@kernel("Elu", EluAttrs)
def elu(a: EluAttrs, x: np.ndarray) -> np.ndarray:
    """x for x > 0, alpha * (exp(x) - 1) below."""
    return np.where(x > 0, x, _exp_minus_one(x) * np.asarray(a.alpha, x.dtype))


@kernel("Selu", SeluAttrs)
def selu(a: SeluAttrs, x: np.ndarray) -> np.ndarray:
    """gamma * x for x > 0, gamma * alpha * (exp(x) - 1) below."""
    gamma = np.asarray(a.gamma, x.dtype)
    return np.where(x > 0, x * gamma, _exp_minus_one(x) * np.asarray(a.alpha, x.dtype) * gamma)


@kernel("Tanh")
def tanh(_: NoAttrs, x: np.ndarray) -> np.ndarray:
    """tanh(x)."""
    return np.tanh(x)


@kernel("Softplus")
def softplus(_: NoAttrs, x: np.ndarray) -> np.ndarray:
    """log(1 + exp(x)), without overflow."""
    return np.logaddexp(np.zeros((), x.dtype), x)


@kernel("Softsign")
def softsign(_: NoAttrs, x: np.ndarray) -> np.ndarray:
    """x / (1 + |x|)."""
    return x / (1 + np.abs(x))


@kernel("SiLU")
def silu(_: NoAttrs, x: np.ndarray) -> np.ndarray:
    """x * Sigmoid(x) (Swish; exported as Sigmoid and Mul)."""
    return x * sigmoid(NoAttrs(), x)


@kernel("Mish")
def mish(_: NoAttrs, x: np.ndarray) -> np.ndarray:
    """x * tanh(Softplus(x))."""
    return x * np.tanh(softplus(NoAttrs(), x))


_ERF = np.frompyfunc(math.erf, 1, 1)


@kernel("Erf")
def erf(_: NoAttrs, x: np.ndarray) -> np.ndarray:
    """The error function (elementwise)."""
    return _ERF(np.asarray(x, np.float64)).astype(x.dtype)


@kernel("Gelu", GeluAttrs)
def gelu(a: GeluAttrs, x: np.ndarray) -> np.ndarray:
    """x * Phi(x) = 0.5 * x * (1 + erf(x / sqrt 2)); approximate "tanh":
    0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3)))."""
    wide = np.asarray(x, np.float64)
    if a.approximate == "tanh":
        inner = np.tanh(math.sqrt(2 / math.pi) * (wide + 0.044715 * wide ** 3))
    else:
        inner = _ERF(wide / math.sqrt(2)).astype(np.float64)
    return (0.5 * wide * (1 + inner)).astype(x.dtype)


def _exp_minus_one(x: np.ndarray) -> np.ndarray:
    # Only the x <= 0 branch is kept: clamping first keeps exp from overflowing on the other one.
    return np.expm1(np.minimum(x, 0))


# ---- importers -----------------------------------------------------------------------------
def _single(node, ctx, op: str, attrs) -> list[Node]:
    return [Node(ctx.node_name(node), op, (node.input[0],), (node.output[0],), attrs)]


@onnx_importer("Relu", "Sigmoid", "HardSwish", "Tanh", "Softplus", "Softsign", "Mish", "Erf")
def import_plain(node, ctx) -> list[Node]:
    return _single(node, ctx, node.op_type, NoAttrs())


@onnx_importer("LeakyRelu")
def import_leaky_relu(node, ctx) -> list[Node]:
    return _single(node, ctx, "LeakyRelu", LeakyReluAttrs(float(ctx.attrs(node).get("alpha", 0.01))))


@onnx_importer("HardSigmoid")
def import_hard_sigmoid(node, ctx) -> list[Node]:
    attrs = ctx.attrs(node)
    hs_attrs = HardSigmoidAttrs(float(attrs.get("alpha", 0.2)), float(attrs.get("beta", 0.5)))
    return _single(node, ctx, "HardSigmoid", hs_attrs)


@onnx_importer("Gelu")
def import_gelu(node, ctx) -> list[Node]:
    approximate = str(ctx.attrs(node).get("approximate", "none"))
    if approximate not in ("none", "tanh"):
        raise UnsupportedAttribute(f"approximate={approximate!r} (ONNX defines 'none' and 'tanh')")
    return _single(node, ctx, "Gelu", GeluAttrs(approximate))


@onnx_importer("Elu")
def import_elu(node, ctx) -> list[Node]:
    return _single(node, ctx, "Elu", EluAttrs(float(ctx.attrs(node).get("alpha", 1.0))))


@onnx_importer("Selu")
def import_selu(node, ctx) -> list[Node]:
    attrs = ctx.attrs(node)
    selu_attrs = SeluAttrs(float(attrs.get("alpha", SELU_ALPHA)), float(attrs.get("gamma", SELU_GAMMA)))
    return _single(node, ctx, "Selu", selu_attrs)


# Clip before opset 11 defaults to the float range, not to infinity (it maps ±inf to ±FLT_MAX).
_FLT_MAX = float(np.finfo(np.float32).max)


@onnx_importer("Clip")
def import_clip(node, ctx) -> list[Node]:
    if ctx.opset < 11:
        attrs = ctx.attrs(node)
        lo, hi = float(attrs.get("min", -_FLT_MAX)), float(attrs.get("max", _FLT_MAX))
        return _single(node, ctx, "Clip", ClipAttrs(lo, hi))
    dtype = np.dtype(ctx.graph.tensors[node.input[0]].dtype)
    if np.issubdtype(dtype, np.integer):
        lo, hi = int(np.iinfo(dtype).min), int(np.iinfo(dtype).max)
    else:
        lo, hi = -math.inf, math.inf
    given_lo = ctx.require_constant(node, 1, "min")
    given_hi = ctx.require_constant(node, 2, "max")
    # .item() keeps integers exact Python ints.
    lo = lo if given_lo is None else given_lo.item()
    hi = hi if given_hi is None else given_hi.item()
    return _single(node, ctx, "Clip", ClipAttrs(lo, hi))


@onnx_importer("PRelu")
def import_prelu(node, ctx) -> list[Node]:
    x, slope = node.input[:2]
    x_shape, s_shape = ctx.shape(x), ctx.shape(slope)
    extra: list[Node] = []
    # Old PyTorch exports give a per-channel slope as [C]; ONNX broadcasting would align it with the last
    # axis, which fails whenever C differs from the width. Only then is it read as per-channel (axis 1).
    if len(x_shape) > 2 and len(s_shape) == 1 and s_shape[0] == x_shape[1] and s_shape[0] not in (1, x_shape[-1]):
        slope, extra = reshaped(ctx, node, slope, s_shape + (1,) * (len(x_shape) - 2))
        ctx.notices.append(f"PRelu {node.name or node.output[0]!r}: slope of shape {list(s_shape)} applied per channel")
    return extra + [Node(ctx.node_name(node), "PRelu", (x, slope), (node.output[0],), NoAttrs())]
