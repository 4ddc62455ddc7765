"""hg_vector_lane: one random operation per cycle, every result exact against the integer reference:
QAdd (hlsgen.quant.int_ops.qadd), QRequant (qrequant), the average-pool divide (requantize of a window
sum) and table lookups (qlut)."""
import numpy as np
import pytest
from cocotb.triggers import RisingEdge

import cocotb
from bench import build_root, config, rng, run_bench, start
from hlsgen.quant.arith import requantize
from hlsgen.quant.int_ops import QAddAttrs, QLutAttrs, QRequantAttrs, qadd, qlut, qrequant

LATENCY = 7
LUT_DEPTH = 256
D_W = 8


def lut_table(seed: int) -> list[int]:
    return [int(v) for v in np.random.default_rng(seed).integers(0, 256, LUT_DEPTH)]


def one_operation(gen, table):
    """(inputs of the lane, expected output) for a random operation."""
    signed = gen.random() < 0.5
    lo_q, hi_q = (-128, 127) if signed else (0, 255)
    zp = gen.randint(lo_q, hi_q) if gen.random() < 0.3 else 0
    lo = gen.randint(lo_q, hi_q) if gen.random() < 0.2 else lo_q
    hi = gen.randint(lo, hi_q) if gen.random() < 0.2 else hi_q
    kind = gen.choice(["add", "requant", "average", "lookup"])
    ops = dict(lookup=0, lut_addr=0, va=0, vb=0, ma=0, mb=0, shift=0, zp=zp, lo=lo, hi=hi)
    if kind == "add":
        a_signed, b_signed = gen.random() < 0.5, gen.random() < 0.5
        a = gen.randint(-128, 127) if a_signed else gen.randint(0, 255)
        b = gen.randint(-128, 127) if b_signed else gen.randint(0, 255)
        za, zb = gen.randint(-10, 10), gen.randint(-10, 10)
        shift = gen.randint(0, 24)
        ma, mb = gen.randint(0, (1 << 17) - 1), gen.randint(0, (1 << 17) - 1)
        attrs = QAddAttrs(za, zb, ma, mb, shift, zp, lo, hi)
        want = qadd(attrs, np.array([a]), np.array([b]))[0]
        ops.update(va=a - za, vb=b - zb, ma=ma, mb=mb, shift=shift)
    elif kind == "requant":
        x, zx = gen.randint(-128, 255), gen.randint(-20, 20)
        m, shift = gen.randint(1, (1 << 16) - 1), gen.randint(0, 40)
        want = qrequant(QRequantAttrs(zx, m, shift, zp, lo, hi), np.array([x]))[0]
        ops.update(va=x - zx, ma=m, shift=shift)
    elif kind == "average":
        total = gen.randint(-(1 << 20), 1 << 20)
        m, shift = gen.randint(1 << 15, (1 << 16) - 1), gen.randint(10, 62)
        want = requantize(np.int64(total), m, shift, zp, lo, hi)
        ops.update(va=total, ma=m, shift=shift)
    else:
        index = gen.randrange(LUT_DEPTH)
        want = qlut(QLutAttrs(0, tuple(table)), np.array([index]))[0]
        ops.update(lookup=1, lut_addr=index, va=index)
    return ops, int(want) & ((1 << D_W) - 1)


@cocotb.test()
async def operations_are_exact(dut):
    gen = rng()
    table = lut_table(config()["lut_seed"])
    await start(dut, reset=None)
    pending = []
    for cycle in range(3000):
        ops, want = one_operation(gen, table)
        for name, value in ops.items():
            handle = getattr(dut, name)
            handle.value = value & ((1 << len(handle)) - 1)
        pending.append(want)
        await RisingEdge(dut.clk)
        if cycle >= LATENCY:
            assert int(dut.q.value) == pending[cycle - LATENCY], f"cycle {cycle}"


@pytest.mark.rtl
def test_vector_lane():
    lut = build_root() / "vector_lane_lut.mem"
    lut.parent.mkdir(parents=True, exist_ok=True)
    lut.write_text("".join(f"{v:02x}\n" for v in lut_table(5)))
    run_bench(__file__, "hg_vector_lane", {"LUT_DEPTH": LUT_DEPTH, "LUT_INIT": f'"{lut}"'}, {"seed": 11, "lut_seed": 5})
