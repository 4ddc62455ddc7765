"""Requantization fitted to a pre-quantized layer's own thresholds: checked on every reachable accumulator."""
import numpy as np
import pytest

from hlsgen.quant.arith import quantize_multiplier
from hlsgen.quant.int_ops import Requant
from hlsgen.quant.thresholds import fit_thresholds

RNG = np.random.default_rng(3)


def misplaced(beta, ratio, reach, b, requant, c):
    """Accumulators in [-reach, reach] whose integer output differs from the real one, clamp(round((acc +
    beta) * ratio) + z) (round half up, as the integer model rounds: ties aside, QONNX's rounding too)."""
    acc = np.arange(-reach, reach + 1, dtype=np.int64)
    real = np.clip(np.floor((acc + beta) * ratio + 0.5) + requant.zero_point, requant.lo, requant.hi)
    got = Requant(requant.multiplier[c:c + 1], requant.shift[c:c + 1], requant.zero_point, requant.lo,
                  requant.hi).apply(acc + b, 0)
    return int((got != real).sum())


@pytest.mark.parametrize("bits,zero_point,lo", [(3, 0, 0), (2, 0, 0), (4, -8, -8), (4, 0, 0)])
def test_fitted_thresholds_misplace_fewer_accumulators(bits, zero_point, lo):
    channels = 200
    hi = lo + (1 << bits) - 1
    beta = RNG.uniform(-300, 300, channels)
    ratio = RNG.uniform(0.01, 0.3, channels)  # 3 to 100 accumulator steps per output level
    reach = RNG.integers(50, 3000, channels)
    pairs = [quantize_multiplier(r) for r in ratio]
    requant = Requant(tuple(m for m, _ in pairs), tuple(s for _, s in pairs), zero_point, lo, hi)
    b_int = np.rint(beta).astype(np.int64)
    fitted_b, fitted = fit_thresholds(beta, b_int, ratio, reach, requant)
    before = [misplaced(beta[c], ratio[c], reach[c], b_int[c], requant, c) for c in range(channels)]
    after = [misplaced(beta[c], ratio[c], reach[c], fitted_b[c], fitted, c) for c in range(channels)]
    assert all(a <= b for a, b in zip(after, before))
    assert sum(after) * 3 <= sum(before)
    # measured: 4 to 6 times fewer misplaced accumulators; about twice as many channels exact (2-bit: all)
    assert sum(a == 0 for a in after) > 1.9 * sum(b == 0 for b in before)
    assert fitted.shift == requant.shift and max(fitted.multiplier) < 1 << 16


def test_wide_outputs_and_clamped_biases_are_left_alone():
    beta, ratio, reach = np.array([10.4, 5e6]), np.array([0.1, 0.1]), np.array([100, 100])
    pairs = [quantize_multiplier(r) for r in ratio]
    requant = Requant(tuple(m for m, _ in pairs), tuple(s for _, s in pairs), 0, 0, 7)
    b_int = np.array([10, 1000])  # channel 1's bias was clamped (it saturates every output anyway)
    fitted_b, fitted = fit_thresholds(beta, b_int, ratio, reach, requant)
    assert fitted_b[1] == 1000 and fitted.multiplier[1] == requant.multiplier[1]
    wide = Requant(requant.multiplier, requant.shift, 0, -128, 127)
    assert fit_thresholds(beta, b_int, ratio, reach, wide) == (b_int, wide)
