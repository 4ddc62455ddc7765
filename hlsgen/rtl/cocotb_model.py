"""The cocotb test of a whole-model simulation (run by hlsgen.rtl.sim inside the simulator).

The generated testbench streams its images and logs every result by itself; Python only starts the
clock and waits for `finished`, so the design runs at Verilator's own speed. A design whose weights live
in external memory gets cocotbext-axi's AXI RAM on its read channels, holding the weight image, with
beats paced on the R channel (`dram_pauses`).
"""
import os
import random
from pathlib import Path

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import First, RisingEdge, Timer

CYCLES_VAR = "HLSGEN_SIM_CYCLES"
WEIGHTS_VAR = "HLSGEN_SIM_WEIGHTS"  # the weight image (weights.bin), for a design that reads it over AXI4
DRAM_VAR = "HLSGEN_SIM_DRAM"  # "<bytes per cycle> <random: 0 or 1>"
PERIOD_NS = 10
WEIGHTS_BASE = 0x1F40  # not page-aligned: the DMA's bursts must split at 4 KiB boundaries


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


def attach_dram(dut, image: bytes, bytes_per_cycle: float, backpressure: bool) -> None:
    from cocotbext.axi import AxiRamRead, AxiReadBus

    size = (WEIGHTS_BASE + len(image) + 0xFFF) & ~0xFFF
    ram = AxiRamRead(AxiReadBus.from_prefix(dut, "m_axi"), dut.clk, size=size)
    ram.write(WEIGHTS_BASE, image)
    ram.r_channel.set_pause_generator(dram_pauses(len(dut.m_axi_rdata) // 8, bytes_per_cycle, backpressure))
    dut.weights_base.value = WEIGHTS_BASE


@cocotb.test()
async def stream_images(dut):
    cocotb.start_soon(Clock(dut.clk, PERIOD_NS, unit="ns").start())
    if os.environ.get(WEIGHTS_VAR):
        rate, random_pauses = os.environ[DRAM_VAR].split()
        attach_dram(dut, Path(os.environ[WEIGHTS_VAR]).read_bytes(), float(rate), random_pauses == "1")
    limit = int(os.environ.get(CYCLES_VAR, "100000000"))
    await First(RisingEdge(dut.finished), Timer(limit * PERIOD_NS, unit="ns"))
    assert int(dut.finished.value) == 1, f"the design did not finish within {limit:,} cycles"
