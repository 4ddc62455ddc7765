"""Requantization that reproduces a pre-quantized layer's own rounding exactly.

A model that quantizes a Conv/Dense output itself (Brevitas, FINN: Quant after the ReLU) defines each
output level by a threshold on the real pre-activation. On the integer accumulator those thresholds are
integers, T_q = ceil((q - z - 1/2) / r - beta) with r = accumulator scale / output scale and beta the real
bias in accumulator steps: this is why FINN can run such a layer as integer thresholds, exactly. The
requantizer `saturate(rshift_round((acc + b) * M, s) + z, lo, hi)` with b = round(beta) moves every
threshold by up to half an accumulator step, and at 2 or 3 bits that flips a level wherever a value
lands there. Here b and M are chosen to put as many reachable thresholds at T_q as an integer b and a
16-bit M can (all of them for most channels; every one would need a bias finer than the accumulator).
"""
from __future__ import annotations

import math

import numpy as np

from .arith import MULTIPLIER_BITS
from .int_ops import Requant

MAX_LEVELS = 16  # outputs up to 4 bits, where a level is many accumulator steps wide and a misplaced
# threshold costs the most; wider ones keep round(beta)


def fit_thresholds(beta: np.ndarray, b_int: np.ndarray, ratio: np.ndarray, reach: np.ndarray,
                   requant: Requant) -> tuple[np.ndarray, Requant]:
    """Per output channel, (b, M) whose integer thresholds equal the real ones over acc in [-reach, reach];
    a channel keeps its b_int and multiplier when no such pair exists (or its bias was clamped)."""
    if requant.neg_multiplier is not None or requant.hi - requant.lo >= MAX_LEVELS:
        return b_int, requant
    b_out = np.array(b_int, np.int64)
    multipliers = list(np.broadcast_to(np.asarray(requant.multiplier, np.int64), b_out.shape))
    shifts = np.broadcast_to(np.asarray(requant.shift, np.int64), b_out.shape)
    for c in range(len(b_out)):
        if b_out[c] != np.rint(beta[c]):  # a bias clamped where it cannot matter stays clamped
            continue
        found = _fit_channel(float(beta[c]), float(ratio[c]), int(reach[c]), int(multipliers[c]), int(shifts[c]),
                             requant)
        if found is not None:
            b_out[c], multipliers[c] = found
    return b_out, Requant(tuple(int(m) for m in multipliers), tuple(int(s) for s in shifts), requant.zero_point,
                         requant.lo, requant.hi, None)


def _fit_channel(beta: float, ratio: float, reach: int, m0: int, shift: int, rq: Requant) -> tuple[int, int] | None:
    """The (b, M) that puts the most reachable thresholds where the real ones are (all of them when it
    can), nearest (round(beta), m0) among equals; None when none beats round(beta) and m0."""
    half = (1 << (shift - 1)) if shift > 0 else 0
    choices = []
    for b in range(math.floor(beta) - 1, math.ceil(beta) + 2):
        above, below = [], []  # constraints M >= a, M <= a
        for q in range(rq.lo + 1, rq.hi + 1):
            # level q is reached where (acc + b) * M >= n; it must be reached from t on, within [-reach, reach]
            n = ((q - rq.zero_point) << shift) - half
            t = math.ceil((q - rq.zero_point - 0.5) / ratio - beta)
            if t > -reach:  # acc = t - 1 (or reach, when t lies beyond it) stays below level q
                _below(min(t - 1, reach) + b, n, above, below)
            if t <= reach:  # acc = t (or -reach, when t lies before it) reaches level q
                _at_least(max(t, -reach) + b, n, above, below)
        candidates = np.clip(np.array([m0, *above, *below], np.int64), 1, (1 << MULTIPLIER_BITS) - 1)
        met = ((candidates[:, None] >= np.array(above or [0], np.int64)[None, :]).sum(axis=1) * bool(above) +
               (candidates[:, None] <= np.array(below or [0], np.int64)[None, :]).sum(axis=1) * bool(below))
        for m, count in zip(candidates.tolist(), met.tolist()):
            choices.append((-count, abs(b - beta), abs(m - m0), b, m))
    best = min(choices)
    baseline = min(c for c in choices if c[3] == round(beta) and c[4] == m0)
    return None if best[0] == baseline[0] else best[3:]


def _at_least(k: int, n: int, above: list[int], below: list[int]) -> None:
    """The constraint on M of k * M >= n (one that no M meets: M >= 2^MULTIPLIER_BITS)."""
    if k > 0:
        above.append(-(-n // k))
    elif k < 0:
        below.append(n // k)
    elif n > 0:
        above.append(1 << MULTIPLIER_BITS)


def _below(k: int, n: int, above: list[int], below: list[int]) -> None:
    """The constraint on M of k * M < n."""
    if k > 0:
        below.append(-(-n // k) - 1)
    elif k < 0:
        above.append(n // k + 1)
    elif n <= 0:
        above.append(1 << MULTIPLIER_BITS)
