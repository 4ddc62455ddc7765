"""The accelerator as the ECP5 boards' SoC (hlsgen.deploy.soc) takes it, and where the firmware places what it
reads and writes in main RAM; no LiteX here, so a build is checked before LiteX is imported."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

CONTROL_BASE = 0x82000000  # the accelerator's registers: in the CPU's uncached I/O region, beside LiteX's CSRs
CONTROL_SIZE = 0x1000
# main RAM, as the firmware places what the accelerator reads and writes (byte offsets; docs/deploy.md):
IN_OFFSET = 0x0  # the streamed input
OUT_OFFSET = 0x10000  # the streamed outputs
WEIGHTS_OFFSET = 0x20000  # the weight image (past the DRAM's memory test, which writes the first 32 KiB)
PAGE = 0x1000


@dataclass(frozen=True)
class Master:
    """One of the top's AXI4 masters (port prefix `name`): its data and ID widths, and whether it reads and
    writes (a read-only master's write channels are tied off)."""

    name: str
    data_width: int
    id_width: int
    reads: bool
    writes: bool


@dataclass(frozen=True)
class ExternalMemory:
    """What a top with AXI4 masters needs in main RAM: its masters, the weight image (DEPLOY/rtl/weights.bin,
    `weights_bytes`) and the feature-map image (`fmap_bytes`), the input packed into it at `input_offset`
    (bytes) when the top has no input stream."""

    masters: tuple[Master, ...]
    weights_bytes: int
    fmap_bytes: int
    input_offset: int | None

    @property
    def input_in_fmap(self) -> bool:
        return self.input_offset is not None

    @property
    def fmap_offset(self) -> int:
        return -(-(WEIGHTS_OFFSET + self.weights_bytes) // PAGE) * PAGE


@dataclass(frozen=True)
class StreamTop:
    """The model's own top: `top` in `sources` with clk, a synchronous active-high rst, s_axis_* (in_elems
    beats an image, tlast on the last) and m_axis_* (out_elems beats), its memories' files in mem_dir (read by
    name from the folder Verilator or Yosys runs in). With `memory` it also has s_axi_ctrl and AXI4 masters;
    without an input stream, its in_elems are the bytes of the input packed into the feature-map image."""

    top: str
    sources: tuple[Path, ...]
    mem_dir: Path
    in_elems: int
    out_elems: int
    in_width: int = 8
    out_width: int = 8
    memory: ExternalMemory | None = None  # the masters and images of a top with external memory

    @property
    def in_words(self) -> int:
        return -(-self.in_elems * self.in_width // 32)

    @property
    def out_words(self) -> int:
        return -(-self.out_elems * self.out_width // 32)

    @property
    def memories(self) -> tuple[Path, ...]:
        """The files the top's memories read by name ($readmemh): copied beside the tool that reads them."""
        return tuple(sorted(Path(self.mem_dir).glob("*.mem")))
