"""hg_dw_window: random words written into the banked window memory, random tap addresses per PE row (those
inside the image in different banks, as the compiler's pitches guarantee; those outside anywhere); PE(r, c) gets
byte c of the word at its row's address (centred, 0 outside the image) exactly r + c cycles after the pixel is
issued (+3 for the read, its register and the centring), as the array's normal flow would bring it."""
import pytest
from cocotb.triggers import RisingEdge, Timer

import cocotb
from bench import config, pack, rng, run_bench, start, unpack

D_W, ADDR_W, A_W, DEPTH = 8, 6, 9, 16  # DEPTH words per bank


@cocotb.test()
async def operands_arrive_on_schedule(dut):
    p = config()["parameters"]
    R, C, banks = p["R"], p["C"], p["BANKS"]
    gen = rng()
    dut.wr_en.value, dut.addr.value, dut.in_bounds.value = 0, 0, 0
    await start(dut, reset=None)
    signed = gen.random() < 0.5
    zp = gen.randint(-5, 5) if signed else gen.randint(0, 5)  # a zero point lies in its tensor's range
    dut.in_signed.value, dut.in_zp.value = int(signed), zp & 0x3FF
    words = [[gen.randrange(256) for _ in range(C)] for _ in range(banks * DEPTH)]
    for a, word in enumerate(words):  # the writer writes each word once
        dut.wr_en.value, dut.wr_addr.value, dut.wr_data.value = 1, a, pack(word, D_W)
        await RisingEdge(dut.clk)
    dut.wr_en.value = 0
    count = 30

    def taps() -> list[tuple[int, bool]]:  # one pixel's: lanes inside the image in R different banks
        residues = gen.sample(range(banks), R)
        lanes = [(gen.randrange(DEPTH) * banks + k, gen.random() < 0.8) for k in residues]
        return [(a if inside else gen.randrange(banks * DEPTH), inside) for a, inside in lanes]

    issued = [taps() for _ in range(count)]

    def value(t: int, r: int, c: int) -> int:
        address, inside = issued[t][r]
        if not inside:
            return 0
        byte = words[address][c]
        return (byte - 256 if signed and byte > 127 else byte) - zp

    for cycle in range(count + R + C + 5):
        if cycle < count:
            dut.addr.value = pack([a for a, _ in issued[cycle]], ADDR_W)
            dut.in_bounds.value = pack([int(i) for _, i in issued[cycle]], 1)
        await RisingEdge(dut.clk)
        await Timer(1, unit="ns")
        lanes = unpack(dut.dw_data.value, R * C, A_W)
        for r in range(R):
            for c in range(C):
                t = cycle - 2 - r - c  # issued at t, due at t + 3 + r + c (this cycle is cycle + 1)
                if 0 <= t < count:
                    assert lanes[r * C + c] == value(t, r, c), f"pixel {t} PE ({r}, {c})"


@pytest.mark.rtl
def test_dw_window():
    run_bench(__file__, "hg_dw_window", {"R": 4, "C": 3, "D_W": D_W, "ADDR_W": ADDR_W, "BANKS": 4, "DEPTH": DEPTH},
              {"seed": 23})
