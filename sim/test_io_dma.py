"""hg_io_reader and hg_io_writer (inputs and outputs through memory) against cocotbext-axi's AxiRam, with random
pauses on every AXI channel and on the byte stream: transfers of 1 to 6,000 bytes at beat-aligned bases (runs
across 4 KiB pages and past 256 beats), one after another. The reader's stream must be the memory's bytes in
order; the writer must leave exactly the stream's bytes at the base (a last beat's other bytes untouched, by its
strobes) and pulse `done` once, after the last write response."""
import random

import pytest
from cocotb.triggers import ClockCycles, FallingEdge, ReadOnly

import cocotb
from bench import config, rng, run_bench, start

SIZE = 1 << 16
# lengths: a byte, a beat and one more, the edges of a 256-beat burst, runs that cross pages
LENGTHS = (1, 9, 17, 255, 4095, 4097, 6000)


def pauses(seed: int, p: float):
    gen = random.Random(seed)
    while True:
        yield gen.random() < p


def ram(dut, seed: int, write: bool):
    """The memory on the module's read channels (the reader) or write channels (the writer), randomly paused."""
    from cocotbext.axi import AxiRamRead, AxiRamWrite, AxiReadBus, AxiWriteBus

    if write:
        memory = AxiRamWrite(AxiWriteBus.from_prefix(dut, "m_axi"), dut.clk, dut.rst, size=SIZE)
        channels = (memory.aw_channel, memory.w_channel, memory.b_channel)
    else:
        memory = AxiRamRead(AxiReadBus.from_prefix(dut, "m_axi"), dut.clk, dut.rst, size=SIZE)
        channels = (memory.ar_channel, memory.r_channel)
    for k, channel in enumerate(channels):
        channel.set_pause_generator(pauses(seed * 10 + k, 0.4))
    return memory


async def pulse(dut, base: int, n: int) -> None:
    """A one-cycle start of a transfer of n bytes at base."""
    await FallingEdge(dut.clk)
    dut.base.value = base
    dut.bytes.value = n
    dut.start.value = 1
    await FallingEdge(dut.clk)
    dut.start.value = 0


def transfers(gen, beat: int):
    for n in LENGTHS + tuple(gen.randint(1, 3000) for _ in range(4)):
        base = gen.randrange(0, SIZE - n - beat) // beat * beat
        yield base, n


@cocotb.test()
async def reader_streams_memory(dut):
    cfg = config()
    gen = rng()
    memory = ram(dut, cfg["seed"], write=False)
    beat = cfg["parameters"]["DATA_W"] // 8
    dut.start.value = 0
    dut.m_tready.value = 0
    await start(dut)
    for base, n in transfers(gen, beat):
        data = bytes(gen.randrange(256) for _ in range(n))
        memory.write(base, data)
        await pulse(dut, base, n)
        got = bytearray()
        for _ in range(40 * n + 2000):  # drive at the falling edge, see what the rising edge will take
            await FallingEdge(dut.clk)
            ready = gen.random() < 0.7
            dut.m_tready.value = int(ready)
            await ReadOnly()
            if ready and int(dut.m_tvalid.value):
                got.append(int(dut.m_tdata.value))
            if len(got) == n:
                break
        await FallingEdge(dut.clk)
        dut.m_tready.value = 0
        assert bytes(got) == data, f"{n} bytes at {base:#x}: first difference at byte " \
            f"{next((i for i, (a, b) in enumerate(zip(got, data)) if a != b), len(got))} of {len(got)} read"
        await ClockCycles(dut.clk, 4)
        await ReadOnly()
        assert not int(dut.m_tvalid.value), "bytes past the transfer's end"


@cocotb.test()
async def writer_fills_memory(dut):
    cfg = config()
    gen = rng()
    memory = ram(dut, cfg["seed"] + 1, write=True)
    beat = cfg["parameters"]["DATA_W"] // 8
    dut.start.value = 0
    dut.s_tvalid.value = 0
    await start(dut)
    for base, n in transfers(gen, beat):
        fill = bytes(gen.randrange(256) for _ in range(n + 2 * beat))
        memory.write(base - beat if base >= beat else base, fill[:n + beat])
        before = memory.read(base, n + beat)
        data = bytes(gen.randrange(256) for _ in range(n))
        await pulse(dut, base, n)
        sent, dones = 0, 0
        for _ in range(40 * n + 2000):
            await FallingEdge(dut.clk)
            valid = sent < n and gen.random() < 0.7
            dut.s_tvalid.value = int(valid)
            dut.s_tdata.value = data[sent] if valid else 0
            await ReadOnly()
            sent += valid and int(dut.s_tready.value)
            dones += int(dut.done.value)
            if dones:
                break
        await FallingEdge(dut.clk)
        dut.s_tvalid.value = 0
        await ClockCycles(dut.clk, 4)
        await ReadOnly()
        dones += int(dut.done.value)
        assert sent == n and dones == 1, f"{n} bytes at {base:#x}: {sent} taken, done {dones}"
        after = memory.read(base, n + beat)
        assert after[:n] == data, f"{n} bytes at {base:#x}: first difference at byte " \
            f"{next(i for i, (a, b) in enumerate(zip(after, data)) if a != b)}"
        assert after[n:] == before[n:], f"{n} bytes at {base:#x}: bytes past the end were written"


@pytest.mark.rtl
@pytest.mark.parametrize("data_bits", [64, 128])
def test_io_reader(data_bits):
    run_bench(__file__, "hg_io_reader", {"DATA_W": data_bits}, {"seed": data_bits}, testcase="reader_streams_memory")


@pytest.mark.rtl
@pytest.mark.parametrize("data_bits", [64, 128])
def test_io_writer(data_bits):
    run_bench(__file__, "hg_io_writer", {"DATA_W": data_bits}, {"seed": data_bits + 7}, testcase="writer_fills_memory")
