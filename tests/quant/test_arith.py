"""The integer primitives on hand-computed cases: these pin the numerics every backend must equal."""
import numpy as np
import pytest

from hlsgen.quant.arith import qrange, quantize_multiplier, quantize_to_grid, requantize, rshift_round, signed_bits_for


@pytest.mark.parametrize(
    "value, shift, expected",
    [(5, 1, 3), (4, 1, 2), (3, 1, 2), (-3, 1, -1), (-5, 1, -2), (-6, 2, -1), (-7, 2, -2), (7, 0, 7), (1 << 40, 40, 1)],
)
def test_rshift_round_is_round_half_up(value, shift, expected):
    assert rshift_round(np.int64(value), shift) == expected


def test_rshift_round_per_channel_shifts():
    got = rshift_round(np.array([[10, 10, 10]]), np.array([0, 1, 2]))
    assert got.tolist() == [[10, 5, 3]]


def test_requantize_scales_offsets_and_saturates():
    acc = np.array([-1000, -3, 0, 3, 1000])
    # multiplier 3 / 2^2 = 0.75: -2.25 -> -2, 2.25 -> 2; zero point 10; range [0, 20]
    assert requantize(acc, 3, 2, 10, 0, 20).tolist() == [0, 8, 10, 12, 20]


@pytest.mark.parametrize("real", [1.0, 0.5, 0.75, 0.0123, 3.7, 1e-9, 0.999999999, 2.0 ** -20])
def test_quantize_multiplier_is_16_bit_and_accurate(real):
    m, s = quantize_multiplier(real)
    assert 0 < m < 1 << 16
    assert 0 <= s <= 62
    if real > 2.0 ** -40:
        assert 1 << 15 <= m
        assert abs(m / 2**s - real) <= real * 2.0 ** -15


def test_quantize_multiplier_hand_cases():
    assert quantize_multiplier(0.25) == (32768, 17)
    assert quantize_multiplier(1.0) == (32768, 15)
    assert quantize_multiplier(0.75) == (49152, 16)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("inf"), float("nan"), 1e6])
def test_quantize_multiplier_rejects_bad_scales(bad):
    with pytest.raises(ValueError):
        quantize_multiplier(bad)


def test_ranges_and_grid():
    assert qrange(8, True) == (-128, 127)
    assert qrange(4, False) == (0, 15)
    # half to even on the host: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2; saturates at the range
    assert quantize_to_grid(np.array([0.5, 1.5, 2.5, 300.0, -9.0]), 1.0, 0, 8, False).tolist() == [0, 2, 2, 255, 0]


@pytest.mark.parametrize("bound, bits", [(0, 2), (1, 2), (2, 3), (127, 8), (128, 9), (2**20, 22)])
def test_signed_bits_for(bound, bits):
    assert signed_bits_for(bound) == bits


def test_quantize_to_grid_saturates_infinities_and_values_past_int64():
    """Found by input fuzzing: the cast to int64 came before the clip, so +inf (and 1e30) wrapped to INT64_MIN
    and landed on the grid's lowest value."""
    x = np.array([np.inf, -np.inf, 1e30, -1e30, 3.0])
    assert quantize_to_grid(x, 0.5, 0, 8, True).tolist() == [127, -128, 127, -128, 6]
