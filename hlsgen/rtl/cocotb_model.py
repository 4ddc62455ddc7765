"""The cocotb test of a whole-model simulation (run by hlsgen.rtl.sim inside the simulator).

The generated testbench streams its images and logs every result by itself; Python only starts the
clock and waits for `finished`, so the design runs at Verilator's own speed.
"""
import os

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import First, RisingEdge, Timer

CYCLES_VAR = "HLSGEN_SIM_CYCLES"
PERIOD_NS = 10


@cocotb.test()
async def stream_images(dut):
    cocotb.start_soon(Clock(dut.clk, PERIOD_NS, unit="ns").start())
    limit = int(os.environ.get(CYCLES_VAR, "100000000"))
    await First(RisingEdge(dut.finished), Timer(limit * PERIOD_NS, unit="ns"))
    assert int(dut.finished.value) == 1, f"the design did not finish within {limit:,} cycles"
