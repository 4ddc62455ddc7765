"""hg_accumulator: random dot-product vectors for the pixels of a spatial tile, row tile after row tile
(each revisiting a pixel at least 4 cycles later, as the array does: R >= 4); the finished sums of the last row
tile equal bias + the sum of all row tiles, per column (a Python dictionary is the model)."""
import pytest
from cocotb.triggers import RisingEdge, Timer

import cocotb
from bench import config, pack, rng, run_bench, start, unpack

P_W = 32


@cocotb.test()
async def sums_are_exact(dut):
    p = config()["parameters"]
    cols = p["C"]
    gen = rng()
    dut.p_valid.value = 0
    await start(dut, reset=None)
    for _ in range(20):
        pixels, row_tiles = gen.randint(1, 12), gen.randint(1, 5)
        bias = [gen.randint(-(1 << 20), 1 << 20) for _ in range(cols)]
        expected = {px: list(bias) for px in range(pixels)}
        finished = []
        for t in range(row_tiles):
            period = max(pixels, 4)
            for cycle in range(period):
                valid = cycle < pixels
                data = [gen.randint(-(1 << 24), 1 << 24) for _ in range(cols)]
                dut.p_valid.value, dut.p_addr.value = int(valid), cycle % pixels
                dut.p_first.value, dut.p_last.value = int(t == 0), int(t == row_tiles - 1)
                dut.p_data.value = pack(data, P_W)
                if valid:
                    expected[cycle] = [e + d for e, d in zip(expected[cycle], data)]
                await RisingEdge(dut.clk)
                dut.bias.value = pack(bias, P_W)  # the parameter memory answers one cycle later
                await Timer(1, unit="ns")
                if int(dut.s_valid.value):
                    finished.append(unpack(dut.s_data.value, cols, P_W))
        dut.p_valid.value = 0
        for _ in range(4):
            await RisingEdge(dut.clk)
            await Timer(1, unit="ns")
            if int(dut.s_valid.value):
                finished.append(unpack(dut.s_data.value, cols, P_W))
        assert finished == [expected[px] for px in range(pixels)]


@pytest.mark.rtl
def test_accumulator():
    run_bench(__file__, "hg_accumulator", {"C": 3, "P_W": P_W, "DEPTH": 16}, {"seed": 17})
