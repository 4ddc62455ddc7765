"""hg_weight_dma alone: three layers of random weights at 5, 8 and 3 bits (tiles that start mid-word, rows
that straddle two words) in cocotbext-axi's AXI RAM from a base three words below a 4 KiB page, read with
random pauses on the AR and R channels while a stand-in for the sequencer and the array engine runs two
images of rows (the three array layers, a vector row between the first two) and takes the tiles in the
engine's order (spatial, column, row tile) from the oldest slot after random delays: every row comes back
sign-extended exactly as the weight ROM would give it, every tile's words are fetched once per use in whole
words, no burst crosses a 4 KiB boundary, nothing is requested outside the image's rows, and the next array
row's tiles are fetched while the row before it still runs (its first tile waits in a slot when it starts).
A word is one beat of a 64-bit port, or two beats of a 32-bit one (as on systolic32x32, whose 128-bit port
holds half a row of 8-bit weights); on 64 rows and an 8-bit port a tile of 8-bit weights is 512 beats, which
the DMA requests in bursts of at most 256."""
import random

import numpy as np
import pytest
from cocotb.triggers import ReadOnly, RisingEdge

import cocotb
from bench import config, rng, run_bench, start, unpack
from hlsgen.rtl.weight_rom import WeightSlices

C, W_W, S = 8, 8, 8   # a word holds S slices of C bits: 8 bytes
WORD = C * S // 8
BASE = 0x1000 - 3 * WORD
LAYERS = [(5, 3, 2, 2), (8, 2, 1, 3), (3, 5, 1, 1)]   # (bits, row tiles, column tiles, spatial tiles)
AHEAD = 3
STALL_LIMIT = 5000   # cycles a tile may take to arrive: a few times the longest, paused half the time


def image(seed: int, R: int):
    """The weight image's words and, per layer, (first slice, [tile rows [R, C]] in the engine's order)."""
    gen = np.random.default_rng(seed)
    stream, layers = WeightSlices(C), []
    for bits, tr, tc, ts in LAYERS:
        rows = gen.integers(-(1 << (bits - 1)), 1 << (bits - 1), (tc * tr * R, C))
        rows[0, :2] = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        layers.append((stream.append(rows, bits), rows.reshape(tc * tr, R, C)))
    return stream.words(S), layers


def pauses(seed: int, p: float):
    gen = random.Random(seed)
    while True:
        yield gen.random() < p


@cocotb.test()
async def tiles_arrive_in_the_engines_order(dut):
    from cocotbext.axi import AxiRamRead, AxiReadBus

    gen = rng()
    R, per_word = config()["parameters"]["R"], config()["parameters"]["BEATS"]
    words, layers = image(config()["image_seed"], R)
    beat = WORD // per_word
    ram = AxiRamRead(AxiReadBus.from_prefix(dut, "m_axi"), dut.clk, size=0x4000)
    ram.write(BASE, b"".join(w.to_bytes(WORD, "little") for w in words))
    ram.ar_channel.set_pause_generator(pauses(3, 0.3))
    ram.r_channel.set_pause_generator(pauses(4, 0.5))
    bursts = []

    async def watch_requests():
        while True:
            await RisingEdge(dut.clk)
            await ReadOnly()
            if dut.m_axi_arvalid.value and dut.m_axi_arready.value:
                assert 1 << int(dut.m_axi_arsize.value) == beat
                bursts.append((int(dut.m_axi_araddr.value), int(dut.m_axi_arlen.value) + 1))

    cocotb.start_soon(watch_requests())
    zero = (0, 0, 0, 0, 0)
    dut.running.value, dut.start.value, dut.advance.value, dut.release_slot.value = 0, 0, 0, 0
    dut.base.value, dut.rd_addr.value = BASE, 0
    dut.cfg_ext.value, dut.nx_ext.value = 0, 0
    await start(dut)
    configs = [(w_base, bits, tr, tc, ts) for (bits, tr, tc, ts), (w_base, _) in zip(LAYERS, layers)]
    rows = [0, None, 1, 2]   # the layer table: array layers, and a vector row (no weights)

    def configure(prefix: str, row):
        w_base, bits, tr, tc, ts = zero if row is None else configs[row]
        for name, value in zip(("w_base", "w_bits", "tr", "tc", "ts"), (w_base, bits, tr, tc, ts)):
            getattr(dut, f"{prefix}_{name}").value = value
        getattr(dut, f"{prefix}_ext").value = int(row is not None)

    async def idle(cycles: int):
        for _ in range(cycles):
            await RisingEdge(dut.clk)

    checked, beats, ahead_at_start = 0, 0, []
    for _image in range(2):
        outside = len(bursts)
        await idle(20)
        assert len(bursts) == outside, "a request outside the image's rows"
        dut.running.value = 1
        for i, row in enumerate(rows):
            configure("cfg", row)
            configure("nx", rows[i + 1] if i + 1 < len(rows) else None)
            await idle(gen.randrange(40))   # the row waits for a move
            if row is not None and i > 0:   # beats requested past the rows before it: its own, fetched ahead
                ahead_at_start.append(sum(n for _, n in bursts) * WORD // per_word - beats * WORD // per_word)
            dut.start.value = 1
            await RisingEdge(dut.clk)
            dut.start.value = 0
            if row is None:
                await idle(gen.randrange(200))   # a vector row runs
            else:
                bits, tr, tc, ts = LAYERS[row]
                w_base, tiles = layers[row]
                for k in range(ts * tc * tr):
                    tile = k % (tc * tr)
                    first = w_base + tile * R * bits
                    beats += ((first + R * bits - 1) // S - first // S + 1) * per_word
                    await idle(gen.randrange(8))
                    for waited in range(STALL_LIMIT + 1):
                        if int(dut.ready.value):
                            break
                        assert waited < STALL_LIMIT, f"tile {k} of the layer at slice {w_base} never arrived"
                        await RisingEdge(dut.clk)
                    for j in range(R + 2):   # a row's data comes two cycles after its address
                        if j < R:
                            dut.rd_addr.value = first + j * bits
                        dut.release_slot.value = int(j == R - 1)
                        await RisingEdge(dut.clk)
                        if j > 1:
                            got = unpack(dut.rd_data.value, C, W_W)
                            assert got == [int(v) for v in tiles[tile][j - 2]], \
                                f"layer at {w_base}, tile {k}, row {j - 2}"
                            checked += 1
                    dut.release_slot.value = 0
            await idle(gen.randrange(30))   # the row drains
            dut.advance.value = 1
            await RisingEdge(dut.clk)
            dut.advance.value = 0
        dut.running.value = 0
        await idle(40)
    # every array row after an image's first had its tiles requested while the rows before it ran
    assert all(n > 0 for n in ahead_at_start), ahead_at_start
    checked //= 2
    beats //= 2
    assert sum(n for _, n in bursts) == 2 * beats, "every tile's words, once per use"
    assert checked == sum(R * tr * tc * ts for _, tr, tc, ts in LAYERS)
    assert all(a % WORD == 0 and n % per_word == 0 for a, n in bursts), "a burst of part of a word"
    assert all((a & 0xFFF) + n * beat <= 0x1000 for a, n in bursts), "a burst crosses a 4 KiB boundary"
    assert max(n for _, n in bursts) == min(256, R * per_word), "bursts of whole 8-bit tiles, at most 256 beats"
    assert any(a == 0x1000 for a, _ in bursts), "the first tile splits at the page boundary"


@pytest.mark.rtl
@pytest.mark.parametrize("rows, beats", [(4, 1), (4, 2), (64, 8)])
def test_weight_dma(rows, beats):
    words, _ = image(5, rows)
    tile_words = 2 * rows   # a power of two above a tile's words (R at 8 bits, from any slice)
    wsa_w = max(len(words), 2 * tile_words).bit_length() + (S - 1).bit_length()
    run_bench(__file__, "hg_weight_dma", {"R": rows, "C": C, "W_W": W_W, "WB_W": W_W.bit_length(), "S": S,
                                          "BEATS": beats, "WSA_W": wsa_w, "CNT_W": 4, "TILE_WORDS": tile_words,
                                          "AHEAD": AHEAD},
              {"seed": 2 + beats, "image_seed": 5})
