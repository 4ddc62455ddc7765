"""hg_fmap_dma alone: random loads and stores (one to four segments of up to 700 words, image runs that
cross 4 KiB pages and exceed 256 beats, on-chip strides with gaps, depthwise window memory) between cocotbext-axi's
full AXI RAM and a Python model of the activation memory, with random pauses on all five channels (AW, W,
B, AR, R): every moved word arrives exactly (nothing else changes, on chip or in DRAM), no burst crosses a
4 KiB boundary or carries a word twice, WLAST closes every write burst, and without pauses a load's
requests all go out before its data, so it takes its beats plus a few cycles. Built with a word of one
beat and of two beats (the 32x32 array's 256-bit words on a 128-bit port)."""
import random

import numpy as np
import pytest
from cocotb.triggers import ReadOnly, RisingEdge

import cocotb
from bench import config, run_bench, start

DEPTH = 4096          # the on-chip words the model holds
IMAGE_WORDS = 6000    # the feature-map image's words
BASE = 0x1F40         # the image's byte address: not page-aligned, so runs do split at 4 KiB


def pauses(seed: int, p: float):
    gen = random.Random(seed)
    while True:
        yield gen.random() < p


def to_word(row: np.ndarray) -> int:
    return int.from_bytes(row.astype(np.uint8).tobytes(), "little")


def from_word(value: int, nbytes: int) -> np.ndarray:
    return np.frombuffer(int(value).to_bytes(nbytes, "little"), np.uint8).copy()


class Memory:
    """The activation memory as the DMA sees it: a word port read one cycle after its address, a write a word
    at a time, and the depthwise window memory (C bytes of every word written with dw_en)."""

    def __init__(self, dut, r: int, c: int, gen: np.random.Generator):
        self.dut, self.r, self.c = dut, r, c
        self.words = gen.integers(0, 256, (DEPTH, r), dtype=np.uint8)
        self.dw = gen.integers(0, 256, (DEPTH, c), dtype=np.uint8)

    async def run(self):
        dut, addr = self.dut, 0
        while True:
            await RisingEdge(dut.clk)
            dut.rd_data.value = to_word(self.words[addr])
            await ReadOnly()
            addr = int(dut.rd_addr.value) % DEPTH
            if int(dut.wr_en.value):
                self.words[int(dut.wr_addr.value)] = from_word(dut.wr_data.value, self.r)
            if int(dut.dw_en.value):
                self.dw[int(dut.dw_addr.value)] = from_word(dut.dw_data.value, self.c)


def random_move(gen: random.Random, store: bool) -> dict:
    segments = gen.randint(1, 4)
    words = gen.choice([1, 2, 3, gen.randint(4, 90), gen.randint(200, 700)])
    dram_stride = words + gen.choice([0, 0, gen.randint(1, 300)])
    buf_stride = words + gen.choice([0, gen.randint(1, 40)])
    dram_word = gen.randrange(IMAGE_WORDS - (segments - 1) * dram_stride - words + 1)
    buf_base = gen.randrange(DEPTH - (segments - 1) * buf_stride - words + 1)
    # a segment is whole rows of the buffer, each at a pitch of its own in the window memory
    width = gen.choice([d for d in range(1, min(words, 255) + 1) if words % d == 0])
    pitch = min(width + gen.choice([0, gen.randint(1, 17)]), 255)
    dw_stride = words // width * pitch + gen.choice([0, gen.randint(1, 30)])
    dw_base = gen.randrange(max(DEPTH - (segments - 1) * dw_stride - words // width * pitch, 1))
    return dict(store=int(store), segments=segments, seg_words=words, dram_word=dram_word,
                dram_stride=dram_stride, buf_base=buf_base, buf_stride=buf_stride,
                dw=int(not store and gen.random() < 0.5), dw_base=dw_base, dw_width=width, dw_pitch=pitch,
                dw_stride=dw_stride)


async def run_move(dut, move: dict) -> int:
    """Start `move`, wait for done; its cycles from start to done."""
    for name, value in move.items():
        getattr(dut, f"cfg_{name}").value = value
    dut.start.value = 1
    await RisingEdge(dut.clk)
    dut.start.value = 0
    for cycles in range(1, 200_000):
        await RisingEdge(dut.clk)
        if int(dut.done.value):
            return cycles
    raise AssertionError(f"move {move} never finished")


@cocotb.test()
async def moves_are_exact_under_backpressure(dut):
    from cocotbext.axi import AxiBus, AxiRam

    cfg = config()
    r, c, beat = cfg["parameters"]["R"], cfg["parameters"]["C"], cfg["parameters"]["DATA_W"] // 8
    gen, npgen = random.Random(cfg["seed"]), np.random.default_rng(cfg["seed"])
    size = (BASE + IMAGE_WORDS * r + 0xFFF) & ~0xFFF
    ram = AxiRam(AxiBus.from_prefix(dut, "m_axi"), dut.clk, size=size)
    dram = npgen.integers(0, 256, size, dtype=np.uint8)
    ram.write(0, dram.tobytes())
    memory = Memory(dut, r, c, npgen)
    cocotb.start_soon(memory.run())
    reads, writes, w_lasts = [], [], []

    async def watch():
        while True:
            await RisingEdge(dut.clk)
            await ReadOnly()
            if int(dut.m_axi_arvalid.value) and int(dut.m_axi_arready.value):
                reads.append((int(dut.m_axi_araddr.value), int(dut.m_axi_arlen.value) + 1))
            if int(dut.m_axi_awvalid.value) and int(dut.m_axi_awready.value):
                writes.append((int(dut.m_axi_awaddr.value), int(dut.m_axi_awlen.value) + 1))
            if int(dut.m_axi_wvalid.value) and int(dut.m_axi_wready.value):
                w_lasts.append(int(dut.m_axi_wlast.value))

    cocotb.start_soon(watch())
    dut.base.value, dut.start.value = BASE, 0
    await start(dut)

    # no pauses: a load's bursts all go out at once, so its latency is paid once
    move = random_move(gen, store=False) | dict(segments=3, seg_words=400, dram_word=1000,
                                                  dram_stride=500, buf_stride=400, buf_base=0, dw=0)
    cycles = await run_move(dut, move)
    beats = 3 * 400 * r // beat
    assert cycles <= beats + 12, f"a load of {beats} beats took {cycles} cycles"
    moves = [move]

    channels = [ram.write_if.aw_channel, ram.write_if.w_channel, ram.write_if.b_channel,
                ram.read_if.ar_channel, ram.read_if.r_channel]
    for k, channel in enumerate(channels):
        channel.set_pause_generator(pauses(cfg["seed"] * 10 + k, gen.choice([0.2, 0.5, 0.7])))
    for k in range(cfg["moves"]):
        moves.append(random_move(gen, store=k % 2 == 1))
    for k, move in enumerate(moves):
        if k:
            await run_move(dut, move)
        before_words, before_dw = memory.words.copy(), memory.dw.copy()
        for s in range(move["segments"]):
            chip = move["buf_base"] + s * move["buf_stride"]
            first = move["dram_word"] + s * move["dram_stride"]
            n = move["seg_words"]
            span = slice(BASE + first * r, BASE + (first + n) * r)
            if move["store"]:
                dram[span] = memory.words[chip:chip + n].reshape(-1)
            else:
                before_words[chip:chip + n] = dram[span].reshape(n, r)
                if move["dw"]:
                    width, pitch = move["dw_width"], move["dw_pitch"]
                    for row, values in enumerate(dram[span].reshape(n // width, width, r)):
                        dw = move["dw_base"] + s * move["dw_stride"] + row * pitch
                        before_dw[dw:dw + width] = values[:, :c]
        got = np.frombuffer(ram.read(0, size), np.uint8)
        assert np.array_equal(got, dram), f"move {k} {move}: DRAM differs at bytes {np.flatnonzero(got != dram)[:8]}"
        assert np.array_equal(memory.words, before_words), f"move {k} {move}: the activation memory differs"
        assert np.array_equal(memory.dw, before_dw), f"move {k} {move}: the depthwise window memory differs"
        assert not int(dut.m_axi_arvalid.value) and not int(dut.m_axi_awvalid.value) and not int(dut.m_axi_wvalid.value)

    total = sum(m["segments"] * m["seg_words"] * r // beat for m in moves)
    assert sum(n for _, n in reads + writes) == total, "every word's beats, once"
    assert all((a & 0xFFF) + n * beat <= 0x1000 and n <= 256 for a, n in reads + writes), "a burst crosses 4 KiB"
    ends = np.cumsum([n for _, n in writes]) - 1
    assert len(w_lasts) == sum(n for _, n in writes) and np.flatnonzero(w_lasts).tolist() == ends.tolist(), \
        "WLAST marks exactly the last beat of every write burst"
    assert any(m["store"] for m in moves) and any(m["dw"] for m in moves) and any(n == 256 for _, n in reads)


@pytest.mark.rtl
@pytest.mark.parametrize("r, data_w", [(4, 32), (8, 32)], ids=["one_beat_words", "two_beat_words"])
def test_fmap_dma(r, data_w):
    run_bench(__file__, "hg_fmap_dma", {"R": r, "C": r, "DATA_W": data_w, "ADDR_W": 12, "DIM_W": 8, "WORD_W": 14,
                                              "SEG_W": 4},
              {"seed": 3 + r, "moves": 16})
