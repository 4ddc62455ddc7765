"""Per-output-channel bounds of a Conv/Dense: how far its accumulator can reach, and the weight scales
and biases of channels that would otherwise widen every other channel's accumulator (pruned or near-dead
channels of exported models)."""
from __future__ import annotations

import numpy as np

from .int_ops import Requant
from .params import TensorQuant, WeightQuant


def channel_reach(w_int: np.ndarray, w_axis: int, qx: TensorQuant) -> np.ndarray:
    """Per output channel, the largest |sum w * (x - zx)| over every input in range (accumulator units)."""
    x_extent = max(abs(qx.qmin - qx.zero_point), abs(qx.qmax - qx.zero_point))
    channels = w_int.shape[w_axis]
    return np.abs(np.moveaxis(w_int, w_axis, 0)).reshape(channels, -1).sum(axis=1).astype(np.int64) * x_extent


def _output_span(qy: TensorQuant) -> float:
    """The real magnitude past which every output of `qy` saturates."""
    return (max(qy.qmax - qy.zero_point, qy.zero_point - qy.qmin) + 1) * qy.scale


def bound_channel_scales(w_int: np.ndarray, wq: WeightQuant, w_axis: int, qx: TensorQuant,
                         qy: TensorQuant) -> tuple[np.ndarray, WeightQuant]:
    """Coarsen the weight scale of channels whose accumulator would resolve far below their output's grid.

    An exported layer can carry a pruned (all-zero) channel with an arbitrary scale or a near-dead channel
    with a scale of 1e-9: its bias, at accumulator precision, then needs 40+ bits and widens the
    accumulator of every channel. A channel needs no more accumulator range to reach its output's
    saturation than the layer's widest channel needs for its weights (`cap`, at least 2^16 output steps);
    a finer channel gets a proportionally larger scale, which leaves its accumulator step at most
    1/2^16 of the output's step, and keeps every ordinary channel as it is.
    """
    reach = channel_reach(w_int, w_axis, qx)
    cap = max(float(reach.max(initial=0)), float(round(_output_span(qy) / qy.scale)) * (1 << 16))
    scales = np.asarray(wq.scales, np.float64)
    needed = _output_span(qy) / (qx.scale * scales)  # accumulator units to reach saturation
    factor = np.where(needed > cap, needed / cap, 1.0)
    if not np.any(factor > 1.0):
        return w_int, wq
    levels = (1 << (wq.bits - 1)) - 1
    shape = [1] * w_int.ndim
    shape[w_axis] = -1
    coarse = np.clip(np.rint(w_int / factor.reshape(shape)), -levels, levels).astype(np.int64)
    return coarse, WeightQuant(tuple(float(s) for s in scales * factor), wq.bits)


def clamp_bias(b_int: np.ndarray, reach: np.ndarray, requant: Requant, qy: TensorQuant) -> np.ndarray:
    """Integer biases, each clamped where a larger one could not change its channel's output.

    With |sum w * x| <= reach, a bias beyond reach + (the accumulator that saturates the output) saturates
    every output of the channel, and so does the clamped one: the result is the same integer, bit for bit.
    """
    extent = max(qy.qmax - qy.zero_point, qy.zero_point - qy.qmin) + 1
    mult = np.asarray(requant.multiplier, np.float64)
    shift = np.asarray(requant.shift, np.float64)
    saturating = np.ceil(extent * np.exp2(shift) / np.maximum(mult, 1)) + 1
    upper = reach + saturating
    lower = upper
    if requant.neg_multiplier is not None:  # negative accumulators scale by the second multiplier
        neg = np.asarray(requant.neg_multiplier, np.float64)
        lower = np.where(neg > 0, reach + np.ceil(extent * np.exp2(shift) / np.maximum(neg, 1)) + 1, np.inf)
    clamped = np.clip(b_int, -lower, upper)
    return clamped.astype(np.int64)
