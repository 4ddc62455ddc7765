"""The cocotb test of a whole-model simulation (run by hlsgen.rtl.sim inside the simulator).

The generated testbench streams its images and logs every result by itself; Python only starts the
clock and waits for `finished`, so the design runs at Verilator's own speed. A design whose weights live
in external memory gets cocotbext-axi's AXI RAM on its read channels, holding the weight image, with
beats paced on the R channel (`dram_pauses`). A design whose feature maps live in external memory gets a
second, full AXI RAM on m_axi_fmap (the feature-map image), paced alike on R and W, with random pauses on all
five channels under backpressure. Either kind has the AXI4-Lite control port (hlsgen.rtl.control): a host
(cocotbext-axi's AxiLiteMaster) writes the images' base addresses and enables the interrupt, loads the layer
program (CONTROL.load, then irq), then runs one image at a time (a run of N images with --batch N: START arms
N inputs, DONE follows the N-th output): when the input lives in the feature-map image it writes the image
into the RAM first, then writes CONTROL.start and waits for irq (the design's DONE).
"""
import os
import random
from pathlib import Path

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, First, RisingEdge, Timer

from hlsgen.rtl.control import DONE, LOAD, OFFSET, START

CYCLES_VAR = "HLSGEN_SIM_CYCLES"
WEIGHTS_VAR = "HLSGEN_SIM_WEIGHTS"  # the weight image (weights.bin), for a design that reads it over AXI4
PROGRAM_VAR = "HLSGEN_SIM_PROGRAM"  # the program image (program.bin), in the same memory (--program external)
DRAM_VAR = "HLSGEN_SIM_DRAM"  # "<bytes per cycle> <random: 0 or 1>"
FMAP_VAR = "HLSGEN_SIM_FMAP"  # "<image bytes> <input byte offset> <input bytes per image> <input words file or ->"
PERIOD_NS = 10
WEIGHTS_BASE = 0x1F40  # not page-aligned: the DMA's bursts must split at 4 KiB boundaries
FMAP_BASE = 0x1F40  # the feature-map image's, in its own RAM: aligned to a word of every target (32 bytes)


def dram_pauses(beat_bytes: int, bytes_per_cycle: float, backpressure: bool, seed: int = 1):
    """R-channel pauses: beats at the port's sustained rate (a beat whenever `bytes_per_cycle` credit has
    built up a beat's bytes), and with `backpressure` a random half of the cycles paused besides."""
    gen, credit = random.Random(seed), float(beat_bytes)
    while True:
        credit = min(credit + bytes_per_cycle, 2.0 * beat_bytes)
        if credit >= beat_bytes and not (backpressure and gen.random() < 0.5):
            credit -= beat_bytes
            yield False
        else:
            yield True


def program_base(weights: bytes) -> int:
    """Where the program image goes: the page after the weight image (aligned as hg_program_loader needs)."""
    return (WEIGHTS_BASE + len(weights) + 0xFFF) & ~0xFFF


def attach_dram(dut, image: bytes, bytes_per_cycle: float, backpressure: bool, program: bytes = b""):
    from cocotbext.axi import AxiRamRead, AxiReadBus

    size = (program_base(image) + len(program) + 0xFFF) & ~0xFFF
    ram = AxiRamRead(AxiReadBus.from_prefix(dut, "m_axi"), dut.clk, size=size)
    ram.write(WEIGHTS_BASE, image)
    if program:  # a top that holds its own program has none to load
        ram.write(program_base(image), program)
    ram.r_channel.set_pause_generator(dram_pauses(len(dut.m_axi_rdata) // 8, bytes_per_cycle, backpressure))
    return ram


def attach_fmap_dram(dut, size: int, bytes_per_cycle: float, backpressure: bool):
    """The feature-map image's AXI RAM: R and W beats at the port's rate (random pauses besides, and on AW, AR
    and B, with `backpressure`)."""
    from cocotbext.axi import AxiBus, AxiRam

    ram = AxiRam(AxiBus.from_prefix(dut, "m_axi_fmap"), dut.clk, size=(FMAP_BASE + size + 0xFFF) & ~0xFFF)
    beat = len(dut.m_axi_fmap_rdata) // 8
    ram.read_if.r_channel.set_pause_generator(dram_pauses(beat, bytes_per_cycle, backpressure, seed=2))
    ram.write_if.w_channel.set_pause_generator(dram_pauses(beat, bytes_per_cycle, backpressure, seed=3))
    if backpressure:
        for k, channel in enumerate((ram.read_if.ar_channel, ram.write_if.aw_channel, ram.write_if.b_channel)):
            channel.set_pause_generator(dram_pauses(1, 1.0, True, seed=4 + k))
    return ram


async def host(dut, load, program_at: int = 0) -> None:
    """The host on s_axi_ctrl: set both images' bases, enable the interrupt, load the layer program, then run
    image after image (each first written into the feature-map image by `load(k)`, when the input lives there)
    until the testbench has taken the last output."""
    from cocotbext.axi import AxiLiteBus, AxiLiteMaster

    axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axi_ctrl"), dut.clk)
    for name, base in (("WEIGHTS_BASE", WEIGHTS_BASE), ("FMAP_BASE", FMAP_BASE), ("PROGRAM_BASE", program_at)):
        await axil.write(OFFSET[f"{name}_LO"], (base & 0xFFFFFFFF).to_bytes(4, "little"))
        await axil.write(OFFSET[f"{name}_HI"], (base >> 32).to_bytes(4, "little"))
    await axil.write(OFFSET["IRQ_ENABLE"], b"\x01")

    async def run(command: int, what: str) -> None:
        await axil.write(OFFSET["CONTROL"], command.to_bytes(4, "little"))
        if not int(dut.irq.value):  # a program already in the design's tables is loaded at once
            await RisingEdge(dut.irq)
        status = int.from_bytes((await axil.read(OFFSET["CONTROL"], 4)).data, "little")
        assert status & DONE, f"irq without DONE after {what} (CONTROL {status:#x})"

    await run(LOAD, "the program's load")
    k = 0
    while not int(dut.finished.value):
        if load is not None:
            load(k)
        await run(START, f"image {k}")
        await ClockCycles(dut.clk, 2)   # the testbench counts the image's last output
        k += 1


@cocotb.test()
async def stream_images(dut):
    cocotb.start_soon(Clock(dut.clk, PERIOD_NS, unit="ns").start())
    controlled, load, program_at = False, None, 0
    if os.environ.get(WEIGHTS_VAR):
        controlled = True
        rate, random_pauses = os.environ[DRAM_VAR].split()
        weights = Path(os.environ[WEIGHTS_VAR]).read_bytes()
        program = Path(os.environ[PROGRAM_VAR]).read_bytes() if os.environ.get(PROGRAM_VAR) else b""
        attach_dram(dut, weights, float(rate), random_pauses == "1", program)
        program_at = program_base(weights)
    if os.environ.get(FMAP_VAR):
        rate, random_pauses = os.environ[DRAM_VAR].split()
        size, offset, per_image, inputs = os.environ[FMAP_VAR].split()
        ram = attach_fmap_dram(dut, int(size), float(rate), random_pauses == "1")
        controlled = True
        if inputs != "-":
            at, per, words = FMAP_BASE + int(offset), int(per_image), Path(inputs).read_bytes()

            def load(k: int) -> None:
                ram.write(at, words[k * per:(k + 1) * per])
    if controlled:
        cocotb.start_soon(host(dut, load, program_at))
    limit = int(os.environ.get(CYCLES_VAR, "100000000"))
    await First(RisingEdge(dut.finished), Timer(limit * PERIOD_NS, unit="ns"))
    assert int(dut.finished.value) == 1, f"the design did not finish within {limit:,} cycles"
