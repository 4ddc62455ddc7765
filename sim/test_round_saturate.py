"""hg_round_saturate: random 57-bit signed values (the widest product a requantizer forms), shifts, zero
points and bounds, one per cycle; every output equals saturate(rshift_round(v, s) + zp, lo, hi) of
hlsgen.quant.arith, in the low D_W bits, three cycles later."""
import numpy as np
import pytest
from cocotb.triggers import RisingEdge

import cocotb
from bench import config, random_output_range, rng, run_bench, start
from hlsgen.quant.arith import rshift_round, saturate

LATENCY = 3


@cocotb.test()
async def round_saturate_is_exact(dut):
    d_w = config()["parameters"]["D_W"]
    gen = rng()
    await start(dut, reset=None)
    pending = []
    for cycle in range(4000):
        bits = gen.randint(1, 57)
        v = gen.randint(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
        s = gen.choice([0, 1, 2, gen.randint(0, 62), gen.randint(8, 40)])
        zp, lo, hi = random_output_range(gen, d_w)
        dut.v.value, dut.shift.value, dut.zp.value, dut.lo.value, dut.hi.value = v, s, zp, lo, hi
        y = int(saturate(rshift_round(np.int64(v), s) + zp, lo, hi))
        pending.append(y & ((1 << d_w) - 1))
        await RisingEdge(dut.clk)
        if cycle >= LATENCY:
            got, want = int(dut.q.value), pending[cycle - LATENCY]
            assert got == want, f"cycle {cycle}: got {got}, want {want}"


@pytest.mark.rtl
@pytest.mark.parametrize("out_bits", [8, 4])
def test_round_saturate(out_bits):
    run_bench(__file__, "hg_round_saturate", {"D_W": out_bits}, {"seed": 3 + out_bits})
