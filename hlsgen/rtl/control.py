"""The AXI4-Lite control block's register map (`rtl/hg_axil_ctrl.v`, docs/rtl.md "AXI4-Lite control").

Defined once here for the host side: the cocotb benches drive the registers through this table, so a map that
drifted from the Verilog fails them.
"""
from __future__ import annotations

from dataclasses import dataclass

MAGIC = 0x4847  # "HG"
VERSION = 3  # 2: the program image's base and CONTROL.load; 3: inputs and outputs through memory (IO), CYCLES
START = 1 << 0  # CONTROL: write 1 to start a run (self-clearing)
DONE = 1 << 1  # CONTROL: sticky until start or a write of 1
BUSY = 1 << 2  # CONTROL: read-only, from start (or load) to done
LOAD = 1 << 3  # CONTROL: write 1 to load the layer program (self-clearing); done when it is in the tables
IO_INPUT = 1 << 0  # IO: the input is read from INPUT_BASE (else s_axis, or the feature-map image when the
#                    program's header puts it there)
IO_OUTPUT = 1 << 1  # IO: the outputs are written to OUTPUT_BASE (else m_axis)
IO_ALIGN = 64  # INPUT_BASE and OUTPUT_BASE: byte addresses aligned to the widest AXI4 word (512 bits)


@dataclass(frozen=True)
class Register:
    name: str
    offset: int  # byte address
    doc: str  # what docs/rtl.md's table says (bits, access)


REGISTERS = (
    Register("CONTROL", 0x00, "bit 0 start (self-clearing), bit 1 done (sticky; write 1 or start clears), "
                              "bit 2 busy (read-only), bit 3 load (self-clearing)"),
    Register("ID", 0x04, "read-only: MAGIC in [31:16], VERSION in [15:0]"),
    Register("SHAPE", 0x08, "read-only: the array's rows R in [31:16], columns C in [15:0]"),
    Register("IRQ_ENABLE", 0x0C, "bit 0: irq = done & enable"),
    Register("WEIGHTS_BASE_LO", 0x10, "the weight image's byte address, bits 31:0"),
    Register("WEIGHTS_BASE_HI", 0x14, "bits 63:32"),
    Register("FMAP_BASE_LO", 0x18, "the feature-map image's byte address, bits 31:0"),
    Register("FMAP_BASE_HI", 0x1C, "bits 63:32"),
    Register("PROGRAM_BASE_LO", 0x20, "the program image's byte address, bits 31:0"),
    Register("PROGRAM_BASE_HI", 0x24, "bits 63:32"),
    Register("INPUT_BASE_LO", 0x28, "the input's byte address (aligned to 64 bytes), bits 31:0: the input's "
                                    "elements, one byte each, in [channel][row][col] order"),
    Register("INPUT_BASE_HI", 0x2C, "bits 63:32"),
    Register("OUTPUT_BASE_LO", 0x30, "the outputs' byte address (aligned to 64 bytes), bits 31:0: every output's "
                                     "elements, one byte each, in graph-output then [channel][row][col] order"),
    Register("OUTPUT_BASE_HI", 0x34, "bits 63:32"),
    Register("IO", 0x38, "bit 0: the input from INPUT_BASE, bit 1: the outputs to OUTPUT_BASE (else the "
                         "streams); a bit the top lacks reads 0"),
    Register("CYCLES", 0x3C, "read-only: the last run's or load's cycles, from START (or LOAD) to DONE"),
)
OFFSET = {r.name: r.offset for r in REGISTERS}
ADDR_BITS = 6  # the port's byte address: 16 words, the unmapped ones read 0


def ident() -> int:
    return MAGIC << 16 | VERSION


def shape(rows: int, cols: int) -> int:
    return rows << 16 | cols
