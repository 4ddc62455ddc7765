"""Integer arithmetic written once: every rounding, shift and saturation of the integer model.

All values are numpy int64 (wide enough for every intermediate: accumulators stay below 2^40 and
multipliers below 2^16, so products stay below 2^56). The C++ and RTL generators implement exactly these.
"""
from __future__ import annotations

import math

import numpy as np

from ..ir.quant import qrange

MULTIPLIER_BITS = 16  # requantization multipliers are unsigned, in [2^15, 2^16) unless the scale is tiny
MAX_SHIFT = 62


def rshift_round(value: np.ndarray, shift) -> np.ndarray:
    """Arithmetic right shift with round-half-up: floor((v + 2^(s-1)) / 2^s); s = 0 returns v.

    `shift` may be a scalar or an array broadcasting against `value` (per-channel shifts).
    """
    value = np.asarray(value, dtype=np.int64)
    shift = np.asarray(shift, dtype=np.int64)
    half = np.where(shift > 0, np.left_shift(np.int64(1), np.maximum(shift - 1, 0)), 0)
    return np.right_shift(value + half, shift)


def saturate(value: np.ndarray, lo: int, hi: int) -> np.ndarray:
    return np.clip(np.asarray(value, dtype=np.int64), lo, hi)


def requantize(acc: np.ndarray, multiplier, shift, zero_point: int, lo: int, hi: int) -> np.ndarray:
    """y = saturate(rshift_round(acc * multiplier, shift) + zero_point, lo, hi)."""
    scaled = rshift_round(np.asarray(acc, dtype=np.int64) * np.asarray(multiplier, dtype=np.int64), shift)
    return saturate(scaled + zero_point, lo, hi)


def quantize_multiplier(real: float) -> tuple[int, int]:
    """(M, s) with M / 2^s closest to `real` (> 0), M < 2^MULTIPLIER_BITS, s <= MAX_SHIFT."""
    if not math.isfinite(real) or real <= 0:
        raise ValueError(f"requantization scale must be positive and finite, got {real}")
    mantissa, exponent = math.frexp(real)  # real = mantissa * 2^exponent, mantissa in [0.5, 1)
    shift = MULTIPLIER_BITS - exponent
    multiplier = round(mantissa * (1 << MULTIPLIER_BITS))
    if multiplier == 1 << MULTIPLIER_BITS:  # rounding carried into a new bit
        multiplier //= 2
        shift -= 1
    if shift > MAX_SHIFT:  # tiny scale: lose mantissa bits rather than shift further
        multiplier = round(real * (1 << MAX_SHIFT))
        shift = MAX_SHIFT
    if shift < 0:  # a scale above 2^16 means the calibration ranges are broken
        raise ValueError(f"requantization scale {real} is too large")
    return int(multiplier), int(shift)


def quantize_to_grid(x: np.ndarray, scale: float, zero_point: int, bits: int, signed: bool) -> np.ndarray:
    """Host-side quantization of real values: saturate(round_half_even(x / scale) + zero_point)."""
    lo, hi = qrange(bits, signed)
    # clipped while still float: an infinity or a value past int64 would wrap to INT64_MIN when cast first,
    # so +inf would land on the grid's lowest value
    return np.clip(np.rint(np.asarray(x, dtype=np.float64) / scale) + zero_point, lo, hi).astype(np.int64)


def quantize_linear(x: np.ndarray, scale: float, zero_point: int, bits: int, signed: bool) -> np.ndarray:
    """ONNX QuantizeLinear on a float32 tensor: saturate(round_half_even(x / scale) + zero_point), the division
    in float32 (as onnxruntime computes it): the input quantization of a model that quantizes its own input."""
    lo, hi = qrange(bits, signed)
    with np.errstate(all="ignore"):
        quotient = np.asarray(x, dtype=np.float32) / np.float32(scale)
    return np.clip(np.rint(quotient).astype(np.float64) + zero_point, lo, hi).astype(np.int64)


def dequantize(q: np.ndarray, scale, zero_point) -> np.ndarray:
    """Host-side: real = scale * (q - zero_point), float32."""
    return ((np.asarray(q, dtype=np.float64) - zero_point) * scale).astype(np.float32)


def signed_bits_for(max_abs: int) -> int:
    """The fewest bits of a signed integer that holds every value in [-max_abs, max_abs]."""
    return max(int(max_abs).bit_length() + 1, 2)
