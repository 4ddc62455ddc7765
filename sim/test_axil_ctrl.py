"""hg_axil_ctrl alone, driven by cocotbext-axi's AxiLiteMaster with random pauses on all five channels (so a
write's address and data arrive in either order, responses and read data wait): the ID and SHAPE words are
hlsgen.rtl.control's; 400 random writes of 1 to 4 bytes (byte strobes) to every word, read-only and unmapped
ones included, leave the registers exactly as a byte-wise model of the map says, and every response is OKAY;
a stand-in for the design answers each one-cycle start with `finished` (and each one-cycle load with `loaded`)
some cycles later: CONTROL.start and .load read 0, busy holds from start (load) to done, done is sticky until
written 1 or until the next start or load, irq = done & IRQ_EN, and a CONTROL write whose byte 0 is not strobed
starts nothing. IO keeps only the bits the top implements (IO_BITS), CYCLES counts a run from its start
to its done."""
import random

import pytest
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge

import cocotb
from bench import config, rng, run_bench, start
from hlsgen.rtl.control import ADDR_BITS, BUSY, DONE, LOAD, OFFSET, REGISTERS, START, ident, shape

OKAY = 0


def pauses(seed: int, p: float):
    gen = random.Random(seed)
    while True:
        yield gen.random() < p


async def master(dut):
    from cocotbext.axi import AxiLiteBus, AxiLiteMaster

    axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axi"), dut.clk, dut.rst)
    channels = (axil.write_if.aw_channel, axil.write_if.w_channel, axil.write_if.b_channel,
                axil.read_if.ar_channel, axil.read_if.r_channel)
    for k, channel in enumerate(channels):
        channel.set_pause_generator(pauses(config()["seed"] + k, 0.4))
    dut.finished.value = 0
    dut.loaded.value = 0
    await start(dut)
    return axil


async def read(axil, name: str) -> int:
    got = await axil.read(OFFSET[name], 4)
    assert got.resp == OKAY, f"{name}: response {got.resp}"
    return int.from_bytes(got.data, "little")


async def write(axil, address: int, data: bytes) -> None:
    got = await axil.write(address, data)
    assert got.resp == OKAY, f"write at {address:#x}: response {got.resp}"


@cocotb.test()
async def registers_follow_the_map(dut):
    params = config()["parameters"]
    axil = await master(dut)
    gen = rng()
    assert await read(axil, "ID") == ident()
    assert await read(axil, "SHAPE") == shape(params["R"], params["C"])
    # the byte-wise model: writable words hold what was written (CONTROL and IRQ_ENABLE only their bits)
    memory = bytearray(1 << ADDR_BITS)
    bases = [r.offset for r in REGISTERS if r.name.endswith(("_LO", "_HI"))]
    for _ in range(400):
        address = gen.randrange(1 << ADDR_BITS)
        if address >> 2 << 2 == OFFSET["CONTROL"]:
            continue   # a start: the done/irq test's
        size = gen.randint(1, 4 - address % 4)
        data = bytes(gen.randrange(256) for _ in range(size))
        await write(axil, address, data)
        if address >> 2 << 2 in bases:
            memory[address:address + size] = data
        elif address == OFFSET["IRQ_ENABLE"]:
            memory[address] = data[0] & 1
        elif address == OFFSET["IO"]:
            memory[address] = data[0] & params["IO_BITS"]
    for address in range(0, 1 << ADDR_BITS, 4):
        got = await axil.read(address, 4)
        assert got.resp == OKAY
        value = int.from_bytes(got.data, "little")
        if address == OFFSET["ID"]:
            want = ident()
        elif address == OFFSET["SHAPE"]:
            want = shape(params["R"], params["C"])
        else:
            want = int.from_bytes(memory[address:address + 4], "little")
        assert value == want, f"word at {address:#x}: {value:#x}, want {want:#x}"
    want_w = int.from_bytes(memory[OFFSET["WEIGHTS_BASE_LO"]:OFFSET["WEIGHTS_BASE_LO"] + 8], "little")
    want_f = int.from_bytes(memory[OFFSET["FMAP_BASE_LO"]:OFFSET["FMAP_BASE_LO"] + 8], "little")
    want_p = int.from_bytes(memory[OFFSET["PROGRAM_BASE_LO"]:OFFSET["PROGRAM_BASE_LO"] + 8], "little")
    assert int(dut.weights_base.value) == want_w and int(dut.fmap_base.value) == want_f
    assert int(dut.program_base.value) == want_p


@cocotb.test()
async def start_done_and_irq(dut):
    axil = await master(dut)
    gen = rng()
    starts, run_cycles = [], 60

    async def design():
        # a run (a load): one start (load) pulse, then `finished` (`loaded`) for a cycle after run_cycles
        while True:
            await RisingEdge(dut.clk)
            await ReadOnly()
            pulse = next((name for name in ("start", "load") if int(getattr(dut, name).value)), None)
            if pulse:
                assert not (int(dut.start.value) and int(dut.load.value)), "start and load together"
                starts.append(pulse)
                await RisingEdge(dut.clk)
                await ReadOnly()
                assert not int(getattr(dut, pulse).value), f"{pulse} lasted more than a cycle"
                await ClockCycles(dut.clk, run_cycles - 1 + gen.randrange(5))
                answer = dut.finished if pulse == "start" else dut.loaded
                answer.value = 1
                await RisingEdge(dut.clk)
                answer.value = 0

    cocotb.start_soon(design())
    control = OFFSET["CONTROL"]
    # byte 1 strobed alone: no start
    await write(axil, control + 1, b"\x01")
    await ClockCycles(dut.clk, 10)
    assert not starts and await read(axil, "CONTROL") == 0

    async def run_once(expect_irq: bool, command: int = START) -> None:
        n = len(starts)
        await write(axil, control, command.to_bytes(4, "little"))
        status = await read(axil, "CONTROL")
        assert status & BUSY and not status & (DONE | START | LOAD), f"running: CONTROL {status:#x}"
        while not (status := await read(axil, "CONTROL")) & DONE:
            pass
        assert starts[n:] == ["start" if command == START else "load"], "one pulse per write"
        cycles = await read(axil, "CYCLES")
        assert run_cycles < cycles < run_cycles + 10, f"CYCLES {cycles} for a run of about {run_cycles}"
        assert not status & BUSY and int(dut.irq.value) == expect_irq
        await ClockCycles(dut.clk, 20)
        assert await read(axil, "CONTROL") & DONE, "done is sticky"

    await run_once(expect_irq=False, command=LOAD)
    await run_once(expect_irq=False)
    await write(axil, OFFSET["IRQ_ENABLE"], b"\x01")
    assert int(dut.irq.value) == 1, "irq follows done once enabled"
    await write(axil, control, DONE.to_bytes(4, "little"))
    assert await read(axil, "CONTROL") == 0 and int(dut.irq.value) == 0, "writing 1 to done clears it"
    await run_once(expect_irq=True)
    # a start clears done (and the irq) at once; the run's end raises the irq again
    await write(axil, control, START.to_bytes(4, "little"))
    assert int(dut.irq.value) == 0
    await RisingEdge(dut.irq)
    assert await read(axil, "CONTROL") & DONE
    await write(axil, OFFSET["IRQ_ENABLE"], b"\x00")
    assert int(dut.irq.value) == 0 and await read(axil, "CONTROL") & DONE, "irq masked, done kept"
    # a load clears done too, and its end sets it
    await write(axil, OFFSET["IRQ_ENABLE"], b"\x01")
    await write(axil, control, LOAD.to_bytes(4, "little"))
    assert int(dut.irq.value) == 0
    await RisingEdge(dut.irq)
    assert await read(axil, "CONTROL") & DONE
    assert starts == ["load", "start", "start", "start", "load"]


@pytest.mark.rtl
@pytest.mark.parametrize("rows, cols, io", [(16, 16, 0), (32, 8, 3)])
def test_axil_ctrl(rows, cols, io):
    run_bench(__file__, "hg_axil_ctrl", {"R": rows, "C": cols, "IO_BITS": io}, {"seed": rows + cols})
