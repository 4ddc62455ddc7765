"""The integer ops: integers in, integers out. Together with `arith` they are the specification
that the HLS C++ and the RTL must equal bit for bit (docs/numerics.md states them in prose).

Scale-preserving ops (MaxPool, GlobalMaxPool, Reshape, Transpose, Concat, Pad, Resize) run their float kernels
unchanged on integer tensors; the ops here are the ones whose arithmetic changes.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..ops.conv import ConvAttrs, conv
from ..ops.pool import PoolAttrs, pool_windows
from ..ops.registry import kernel
from ..ops.resize import interpolation_matrix
from .arith import requantize, rshift_round, saturate

# Products of accumulated integers are computed in float64 (BLAS-fast) and are exact while below 2^53;
# accumulator widths are bounded far below that (see `accumulator_bits`).
EXACT_FLOAT_LIMIT = 1 << 53


@dataclass(frozen=True)
class Requant:
    """acc -> saturate(rshift_round(acc * multiplier[c], shift[c]) + zero_point, lo, hi).

    Per output channel (length-1 tuples broadcast). `neg_multiplier`, when set, replaces `multiplier`
    where acc < 0 (a fused LeakyRelu). lo/hi include the clamp of a fused Relu/Relu6/Clip.
    """

    multiplier: tuple[int, ...]
    shift: tuple[int, ...]
    zero_point: int
    lo: int
    hi: int
    neg_multiplier: tuple[int, ...] | None = None

    def apply(self, acc: np.ndarray, channel_axis: int) -> np.ndarray:
        shape = [1] * acc.ndim
        shape[channel_axis] = -1
        m = np.asarray(self.multiplier, np.int64).reshape(shape)
        s = np.asarray(self.shift, np.int64).reshape(shape)
        if self.neg_multiplier is not None:
            m = np.where(acc < 0, np.asarray(self.neg_multiplier, np.int64).reshape(shape), m)
        return requantize(acc, m, s, self.zero_point, self.lo, self.hi)


@dataclass(frozen=True)
class QConvAttrs:
    conv: ConvAttrs  # geometry only (activation None): the activation lives in `requant`
    input_zero_point: int
    acc_bits: int
    requant: Requant
    weight_bits: int = 8  # the weights' width as quantization chose it (the hardware stores them at it)


@dataclass(frozen=True)
class QDenseAttrs:
    input_zero_point: int
    acc_bits: int
    requant: Requant
    weight_bits: int = 8  # the weights' width as quantization chose it (the hardware stores them at it)


@dataclass(frozen=True)
class QAddAttrs:
    """y = saturate(rshift_round((a - za) * ma + (b - zb) * mb, shift) + zero_point, lo, hi)."""

    a_zero_point: int
    b_zero_point: int
    a_multiplier: int
    b_multiplier: int
    shift: int
    zero_point: int
    lo: int
    hi: int


@dataclass(frozen=True)
class QMulAttrs:
    """y = saturate(rshift_round((a - za) * (b - zb) * multiplier, shift) + zero_point, lo, hi).

    b is a's shape, or one value per channel ([N, C, 1, 1]) that every pixel of its channel reads.
    """

    a_zero_point: int
    b_zero_point: int
    multiplier: int
    shift: int
    zero_point: int
    lo: int
    hi: int


@dataclass(frozen=True)
class QAveragePoolAttrs:
    """Window sums of (x - input_zero_point), then per divisor count c:
    saturate(rshift_round(sum * M_c, s_c) + zero_point, lo, hi).

    `pool` is None for a global pool. `divisors` lists (count, M_c, s_c) for each window element count.
    """

    pool: PoolAttrs | None
    input_zero_point: int
    divisors: tuple[tuple[int, int, int], ...]
    zero_point: int
    lo: int
    hi: int


@dataclass(frozen=True)
class QRequantAttrs:
    """y = saturate(rshift_round((x - input_zero_point) * multiplier, shift) + zero_point, lo, hi)."""

    input_zero_point: int
    multiplier: int
    shift: int
    zero_point: int
    lo: int
    hi: int


@dataclass(frozen=True)
class QResampleAttrs:
    """A Resize whose weights change from pixel to pixel (linear with align_corners or by a fraction): per
    spatial axis, output pixel o reads source pixels i and i + 1 with integer weights den - r and r
    (hlsgen.ops.resize.interpolation_source of `steps`), or source pixel i alone with weight 1 (`pick`: nearest
    by a fraction); acc = the sum over the taps of their weights' product times (x - input_zero_point), then
    `requant` (its multiplier holds 1 / the dens' product; a pick's is the identity)."""

    scales: tuple[int | Fraction, ...]  # out / in per spatial axis
    transform: str
    steps: tuple[tuple[int, int, int], ...]  # per spatial axis: (num, off, den)
    requant: QRequantAttrs
    pick: bool = False


@dataclass(frozen=True)
class QLutAttrs:
    """y = table[x - input_min]: any elementwise function of a narrow integer, tabulated."""

    input_min: int
    table: tuple[int, ...]


def _exact_int(y: np.ndarray) -> np.ndarray:
    if np.abs(y).max(initial=0) >= EXACT_FLOAT_LIMIT:
        raise OverflowError("integer accumulation left the exactly representable range")
    return np.rint(y).astype(np.int64)


@kernel("QConv", QConvAttrs)
def qconv(a: QConvAttrs, x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """acc = conv(x - zx, w) + b (zero padding of x - zx); y = requant(acc) per output channel."""
    centred = np.asarray(x, np.float64) - a.input_zero_point
    acc = _exact_int(conv(a.conv, centred, np.asarray(w, np.float64)))
    if b is not None:
        acc = acc + np.asarray(b, np.int64).reshape((1, -1) + (1,) * (acc.ndim - 2))
    return a.requant.apply(acc, channel_axis=1)


@kernel("QDense", QDenseAttrs)
def qdense(a: QDenseAttrs, x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """acc = flatten(x - zx) @ w + b; y = requant(acc) per output column."""
    centred = np.asarray(x, np.float64).reshape(x.shape[0], -1) - a.input_zero_point
    acc = _exact_int(centred @ np.asarray(w, np.float64))
    if b is not None:
        acc = acc + np.asarray(b, np.int64)
    return a.requant.apply(acc, channel_axis=1)


@kernel("QAdd", QAddAttrs)
def qadd(a: QAddAttrs, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Sum of two tensors on their own scales, brought to the output scale with one shared shift."""
    total = (np.asarray(x, np.int64) - a.a_zero_point) * a.a_multiplier
    total = total + (np.asarray(y, np.int64) - a.b_zero_point) * a.b_multiplier
    return saturate(rshift_round(total, a.shift) + a.zero_point, a.lo, a.hi)


@kernel("QMul", QMulAttrs)
def qmul(a: QMulAttrs, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Product of two tensors on their own scales (y broadcast per channel), requantized to the output scale."""
    product = (np.asarray(x, np.int64) - a.a_zero_point) * (np.asarray(y, np.int64) - a.b_zero_point)
    return requantize(product, a.multiplier, a.shift, a.zero_point, a.lo, a.hi)


@kernel("QAveragePool", QAveragePoolAttrs)
def qaverage_pool(a: QAveragePoolAttrs, x: np.ndarray) -> np.ndarray:
    centred = np.asarray(x, np.int64) - a.input_zero_point
    if a.pool is None:
        axes = tuple(range(2, x.ndim))
        sums = centred.sum(axis=axes, keepdims=True)
        counts = np.full(sums.shape, int(np.prod(x.shape[2:])), np.int64)
    else:
        n = len(a.pool.kernel_shape)
        axes = tuple(range(-n, 0))
        sums = pool_windows(a.pool, centred, 0, 0).sum(axis=axes)
        inside = np.ones(x.shape[x.ndim - n :], np.int64)
        counts = pool_windows(a.pool, inside, 1 if a.pool.count_include_pad else 0, 0).sum(axis=axes)
        counts = np.broadcast_to(counts, sums.shape)
    multiplier = np.zeros(sums.shape, np.int64)
    shift = np.zeros(sums.shape, np.int64)
    for count, m, s in a.divisors:
        multiplier[counts == count] = m
        shift[counts == count] = s
    return saturate(rshift_round(sums * multiplier, shift) + a.zero_point, a.lo, a.hi)


@kernel("QResample", QResampleAttrs)
def qresample(a: QResampleAttrs, x: np.ndarray) -> np.ndarray:
    r = a.requant
    acc = np.asarray(x, np.int64) - r.input_zero_point
    for axis, (steps, scale) in enumerate(zip(a.steps, a.scales)):
        size = acc.shape[2 + axis]
        weights = interpolation_matrix(steps, size, int(size * scale), a.pick)
        acc = np.moveaxis(np.tensordot(acc, weights, axes=([2 + axis], [1])), -1, 2 + axis)
    return requantize(acc, r.multiplier, r.shift, r.zero_point, r.lo, r.hi)


@kernel("QRequant", QRequantAttrs)
def qrequant(a: QRequantAttrs, x: np.ndarray) -> np.ndarray:
    return requantize(np.asarray(x, np.int64) - a.input_zero_point, a.multiplier, a.shift, a.zero_point, a.lo, a.hi)


@kernel("QLut", QLutAttrs)
def qlut(a: QLutAttrs, x: np.ndarray) -> np.ndarray:
    return np.asarray(a.table, np.int64)[np.asarray(x, np.int64) - a.input_min]
