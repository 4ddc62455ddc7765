"""OUT/rtl/ of a build: the generated top, its testbench, the ROM images and the hand-written modules."""
from __future__ import annotations

from pathlib import Path

from ..errors import MappingError
from ..hw.mapping import Mapping
from ..ir import Graph
from .program import compile_program
from .render import write_rtl


def write_build_rtl(folder: Path, mapping: Mapping, graph: Graph, notices: list[str]) -> dict:
    """Write the RTL of layer program `mapping` (of the integer graph `graph`); a model the RTL cannot
    implement gets a notice instead. Returns what report.json says about it."""
    try:
        program = compile_program(mapping, graph)
    except MappingError as exc:
        notices.append(f"no Verilog RTL for this model: {exc}")
        return {"design": None, "why": str(exc)}
    write_rtl(program, folder)
    return {"design": "overlay", "layers": len(program.layers), "macs_per_cycle": program.rows * program.cols,
            "weight_rom_bits": program.weight_rom_bits}
