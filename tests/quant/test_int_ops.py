"""Each integer op against a hand computation or an independent loop."""
import numpy as np

from hlsgen.ops.conv import ConvAttrs
from hlsgen.ops.pool import PoolAttrs
from hlsgen.quant.arith import requantize
from hlsgen.quant.int_ops import (
    QAddAttrs, QAveragePoolAttrs, QConvAttrs, QDenseAttrs, QLutAttrs, QMulAttrs, QRequantAttrs, Requant, qadd,
    qaverage_pool, qconv, qdense, qlut, qmul, qrequant,
)

IDENTITY = Requant((1,), (0,), 0, -(1 << 40), 1 << 40)


def loop_conv(x, w, b, zx, pad):
    """Direct convolution with explicit loops: the definition in docs/numerics.md."""
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.zeros((n, c, h + 2 * pad, wd + 2 * pad), np.int64)
    xp[:, :, pad:pad + h, pad:pad + wd] = x.astype(np.int64) - zx
    out = np.zeros((n, m, h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1), np.int64)
    for o in range(m):
        for i in range(out.shape[2]):
            for j in range(out.shape[3]):
                out[:, o, i, j] = (xp[:, :, i:i + kh, j:j + kw] * w[o]).sum(axis=(1, 2, 3)) + b[o]
    return out


def test_qconv_accumulates_exactly_with_zero_padding_of_centred_input():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, (2, 3, 5, 5))
    w = rng.integers(-127, 128, (4, 3, 3, 3))
    b = rng.integers(-5000, 5000, 4)
    attrs = QConvAttrs(ConvAttrs((3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1), 7, 32, IDENTITY)
    assert np.array_equal(qconv(attrs, x, w, b), loop_conv(x, w, b, 7, 1))


def test_qconv_requantizes_per_channel_with_relu_clamp():
    x = np.ones((1, 1, 1, 1), np.int64) * 10
    w = np.array([[[[3]]], [[[-3]]]])
    requant = Requant((3, 1), (1, 0), 0, 0, 255)  # channel 0: 30 * 3 / 2 = 45; channel 1: -30 -> relu -> 0
    attrs = QConvAttrs(ConvAttrs((1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1), 0, 16, requant)
    assert qconv(attrs, x, w).ravel().tolist() == [45, 0]


def test_leaky_relu_uses_the_negative_multiplier_below_zero():
    requant = Requant((4,), (2,), 0, -128, 127, neg_multiplier=(1,))
    acc = np.array([[8, -8]])
    assert requant.apply(acc, channel_axis=0).tolist() == [[8, -2]]


def test_qdense_flattens_and_adds_bias():
    x = np.arange(8).reshape(1, 2, 2, 2)
    w = np.arange(16).reshape(8, 2) - 8
    b = np.array([100, -100])
    attrs = QDenseAttrs(1, 24, IDENTITY)
    expected = (x.reshape(1, 8) - 1) @ w + b
    assert np.array_equal(qdense(attrs, x, w, b), expected)


def test_qadd_aligns_two_scales_with_one_shift():
    # a at scale 0.5, b at scale 0.25, y at scale 0.5: y = a + b/2, shift 15: ma = 2^15, mb = 2^14
    attrs = QAddAttrs(0, 2, 1 << 15, 1 << 14, 15, 0, -128, 127)
    a = np.array([10, -10, 100])
    b = np.array([6, 3, 100])  # b - zb = 4, 1, 98
    assert qadd(attrs, a, b).tolist() == [12, -9, 127]  # 10+2, -10+0.5 -> -9.5 rounds half up to -9, saturated


def test_qmul_requantizes_the_product_of_centred_operands():
    attrs = QMulAttrs(3, -2, 1 << 14, 16, 1, -128, 127)  # y = (a - 3) * (b + 2) / 4 + 1
    a, b = np.array([5, 1, 100, 3]), np.array([0, 1, 20, 7])
    # 4/4 + 1; -6/4 = -1.5 rounds half up to -1, + 1; 97 * 22 / 4 saturates; 0 + 1
    assert qmul(attrs, a, b).tolist() == [2, 0, 127, 1]


def test_qmul_broadcasts_a_per_channel_gate_over_every_pixel():
    rng = np.random.default_rng(5)
    attrs = QMulAttrs(-4, 10, 40503, 21, -3, -128, 127)
    x, gate = rng.integers(-128, 128, (2, 3, 4, 5)), rng.integers(-128, 128, (2, 3, 1, 1))
    expected = requantize((x + 4) * (np.broadcast_to(gate, x.shape) - 10), 40503, 21, -3, -128, 127)
    assert np.array_equal(qmul(attrs, x, gate), expected)


def test_qaverage_pool_divides_by_counts_without_padding():
    pool = PoolAttrs((2, 2), (2, 2), (0, 0, 1, 1), (1, 1), False, False)
    x = np.arange(9).reshape(1, 1, 3, 3)
    # windows: [0,1,3,4] /4, [2,5] /2, [6,7] /2, [8] /1 ; multiplier 1/count with shift 16
    divisors = tuple((c, (1 << 16) // c, 16) for c in (1, 2, 4))
    attrs = QAveragePoolAttrs(pool, 0, divisors, 0, 0, 255)
    got = qaverage_pool(attrs, x)
    sums = np.array([[0 + 1 + 3 + 4, 2 + 5], [6 + 7, 8]])
    counts = np.array([[4, 2], [2, 1]])
    expected = requantize(sums, (1 << 16) // counts, 16, 0, 0, 255)
    assert np.array_equal(got[0, 0], expected)


def test_global_average_pool_keeps_axes():
    x = np.full((1, 2, 4, 4), 5)
    attrs = QAveragePoolAttrs(None, 1, ((16, 1 << 12, 16),), 3, -128, 127)  # (5-1)*16 / 16 + 3 = 7
    assert qaverage_pool(attrs, x).reshape(-1).tolist() == [7, 7]


def test_qrequant_and_lut():
    assert qrequant(QRequantAttrs(3, 1, 0, 3, 3, 10), np.array([0, 5, 20])).tolist() == [3, 5, 10]
    table = tuple(v * v for v in range(-2, 3))
    assert qlut(QLutAttrs(-2, table), np.array([-2, 0, 2])).tolist() == [4, 0, 4]
