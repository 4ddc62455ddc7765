"""hg_requant: random accumulators, multipliers (with a negative branch), shifts, zero points and bounds,
one per cycle; every output equals hlsgen.quant.arith.requantize."""
import numpy as np
import pytest
from cocotb.triggers import RisingEdge

import cocotb
from bench import config, random_output_range, rng, run_bench, start
from hlsgen.quant.arith import requantize

LATENCY = 6


def expected(acc, m, m_neg, use_neg, s, zp, lo, hi, d_w):
    mult = m_neg if (use_neg and acc < 0) else m
    y = int(requantize(np.int64(acc), mult, s, zp, lo, hi))
    return y & ((1 << d_w) - 1)


@cocotb.test()
async def requantize_is_exact(dut):
    p = config()["parameters"]
    p_w, d_w = p["P_W"], p["D_W"]
    gen = rng()
    await start(dut, reset=None)
    pending = []
    for cycle in range(4000):
        acc_bits = gen.randint(2, p_w)
        acc = gen.randint(-(1 << (acc_bits - 1)), (1 << (acc_bits - 1)) - 1)
        m, m_neg = gen.randint(1, (1 << 16) - 1), gen.randint(0, (1 << 16) - 1)
        use_neg = gen.random() < 0.3
        s = gen.choice([0, 1, 2, gen.randint(0, 62), gen.randint(8, 40)])
        zp, lo, hi = random_output_range(gen, d_w)
        dut.acc.value, dut.mult.value, dut.mult_neg.value, dut.use_neg.value = acc, m, m_neg, int(use_neg)
        dut.shift.value, dut.zp.value, dut.lo.value, dut.hi.value = s, zp, lo, hi
        pending.append(expected(acc, m, m_neg, use_neg, s, zp, lo, hi, d_w))
        await RisingEdge(dut.clk)
        if cycle >= LATENCY:
            got = int(dut.q.value)
            want = pending[cycle - LATENCY]
            assert got == want, f"cycle {cycle}: got {got}, want {want}"


@pytest.mark.rtl
@pytest.mark.parametrize("acc_bits, out_bits", [(32, 8), (24, 4)])
def test_requant(acc_bits, out_bits):
    run_bench(__file__, "hg_requant", {"P_W": acc_bits, "D_W": out_bits}, {"seed": acc_bits + out_bits})
