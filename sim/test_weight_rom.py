"""hg_weight_rom: layers of random weights at random widths (2 to W_W bits), packed by
hlsgen.rtl.weight_rom; reading any row, one per cycle in random order, returns its C weights sign-extended
to W_W bits two cycles later, including rows that straddle two words and rows in the last word."""
import numpy as np
import pytest
from cocotb.triggers import RisingEdge

import cocotb
from bench import build_root, config, rng, run_bench, start, unpack
from hlsgen.rtl.weight_rom import WeightSlices, slices_per_word

C, W_W = 4, 6
LATENCY = 2
LAYERS = 7


def weight_layers(seed: int) -> list[tuple[np.ndarray, int]]:
    """(rows [n, C], bits) per layer; every width from 2 to W_W bits comes up, its extremes included."""
    np_rng = np.random.default_rng(seed)
    layers = []
    for i in range(LAYERS):
        bits = 2 + i % (W_W - 1)
        rows = np_rng.integers(-(1 << (bits - 1)), 1 << (bits - 1), (int(np_rng.integers(1, 9)), C))
        rows[0, :2] = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        layers.append((rows, bits))
    return layers


def rom_image(seed: int) -> tuple[list[int], list[tuple[int, int, list[int]]]]:
    """The ROM's words and every row as (first slice, bits, weights)."""
    stream = WeightSlices(C)
    rows = []
    for weights, bits in weight_layers(seed):
        first = stream.append(weights, bits)
        rows += [(first + i * bits, bits, [int(v) for v in row]) for i, row in enumerate(weights)]
    return stream.words(slices_per_word(W_W)), rows


@cocotb.test()
async def rows_come_back_sign_extended(dut):
    gen = rng()
    _, rows = rom_image(config()["layers_seed"])
    await start(dut, reset=None)
    order = list(range(len(rows))) + [gen.randrange(len(rows)) for _ in range(300)]
    for cycle, index in enumerate(order):
        first, bits, _ = rows[index]
        dut.addr.value, dut.bits.value, dut.we.value = first, bits, 0
        await RisingEdge(dut.clk)
        if cycle >= LATENCY:
            want = rows[order[cycle - LATENCY]][2]
            assert unpack(dut.data.value, C, W_W) == want, f"cycle {cycle}"


@pytest.mark.rtl
def test_weight_rom():
    words, _ = rom_image(seed=4)
    image = build_root() / "weight_rom.mem"
    image.parent.mkdir(parents=True, exist_ok=True)
    image.write_text("".join(f"{w:x}\n" for w in words))
    run_bench(__file__, "hg_weight_rom", {"C": C, "W_W": W_W, "WB_W": W_W.bit_length(), "S": slices_per_word(W_W),
                                          "DEPTH": len(words), "INIT": f'"{image}"'}, {"seed": 2, "layers_seed": 4})
