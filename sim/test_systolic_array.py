"""hg_systolic_array (and hg_pe): random weight tiles in both banks, random activation vectors with
random gaps, a bank switch while the other bank reloads; every dot product exact against numpy. In
depthwise mode every PE multiplies its own activation (given r + c cycles late, as the depthwise
window does): column c then sums tap r of its own channel times weight (r, c)."""
import numpy as np
import pytest
from cocotb.triggers import RisingEdge

import cocotb
from bench import config, pack, rng, run_bench, start, unpack

A_W, W_W, P_W = 9, 8, 32


async def load_bank(dut, bank: int, weights: np.ndarray) -> None:
    for r, row in enumerate(weights):
        dut.w_we.value, dut.w_bank.value, dut.w_row.value = 1, bank, r
        dut.w_data.value = pack(row, W_W)
        await RisingEdge(dut.clk)
    dut.w_we.value = 0


@cocotb.test()
async def dot_products_are_exact(dut):
    p = config()["parameters"]
    R, C = p["R"], p["C"]
    gen = rng()
    np_rng = np.random.default_rng(gen.randrange(1 << 30))
    dut.w_we.value, dut.a_valid.value, dut.a_bank.value, dut.a_tag.value, dut.a_data.value = 0, 0, 0, 0, 0
    dut.dw_mode.value, dut.dw_data.value = 0, 0
    await start(dut, reset=None)
    weights = [np_rng.integers(-127, 128, (R, C)) for _ in range(4)]
    expected, got = {}, {}

    async def collect():
        while True:
            await RisingEdge(dut.clk)
            if dut.p_valid.value:
                got[int(dut.p_tag.value)] = unpack(dut.p_data.value, C, P_W)

    cocotb.start_soon(collect())
    tag = 0
    await load_bank(dut, 0, weights[0])
    for tile in range(4):
        bank = tile % 2
        if tile + 1 < 4:  # the next tile loads into the other bank while this one streams
            cocotb.start_soon(load_bank(dut, 1 - bank, weights[tile + 1]))
        for _ in range(max(3 * R, 8)):
            if gen.random() < 0.25:
                dut.a_valid.value = 0
            else:
                x = np_rng.integers(-255, 256, R)
                dut.a_valid.value, dut.a_bank.value, dut.a_tag.value = 1, bank, tag
                dut.a_data.value = pack(x, A_W)
                expected[tag] = (x @ weights[tile]).tolist()
                tag += 1
            await RisingEdge(dut.clk)
        dut.a_valid.value = 0
        await RisingEdge(dut.clk)
        for _ in range(R + C):  # drain before the bank just used is overwritten
            await RisingEdge(dut.clk)
    for _ in range(R + C + 2):
        await RisingEdge(dut.clk)
    assert got == expected


@cocotb.test()
async def depthwise_products_are_exact(dut):
    p = config()["parameters"]
    R, C = p["R"], p["C"]
    gen = rng()
    np_rng = np.random.default_rng(gen.randrange(1 << 30))
    dut.w_we.value, dut.a_valid.value, dut.a_bank.value, dut.a_tag.value, dut.a_data.value = 0, 0, 0, 0, 0
    dut.dw_mode.value = 1
    await start(dut, reset=None)
    weights = np_rng.integers(-127, 128, (R, C))
    await load_bank(dut, 0, weights)
    for _ in range(R + C):
        await RisingEdge(dut.clk)
    count = 3 * R
    taps = np_rng.integers(-255, 256, (count, R, C))
    expected = {t: (taps[t] * weights).sum(axis=0).tolist() for t in range(count)}
    got = {}
    for cycle in range(count + 2 * (R + C) + 4):
        dut.a_valid.value = int(cycle < count)
        dut.a_tag.value = cycle % count
        lanes = [0] * (R * C)
        for r in range(R):
            for c in range(C):
                t = cycle - r - c  # PE(r, c) works on vector t now
                if 0 <= t < count:
                    lanes[r * C + c] = int(taps[t, r, c])
        dut.dw_data.value = pack(lanes, A_W)
        await RisingEdge(dut.clk)
        if dut.p_valid.value:
            got[int(dut.p_tag.value)] = unpack(dut.p_data.value, C, P_W)
    assert got == expected


@pytest.mark.rtl
@pytest.mark.parametrize("rows, cols", [(4, 4), (3, 5), (8, 8)])
def test_systolic_array(rows, cols):
    run_bench(__file__, "hg_systolic_array", {"R": rows, "C": cols, "TAG_W": 12}, {"seed": rows * 100 + cols})
