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
    implement gets a notice instead (unless the program is to be loaded into the target's top: an error).
    Returns what report.json says about it."""
    try:
        program = compile_program(mapping, graph)
    except MappingError as exc:
        if mapping.program_external:  # asked for the target's top: a model it cannot run is an error
            raise
        notices.append(f"no Verilog RTL for this model: {exc}")
        return {"design": None, "why": str(exc)}
    files = write_rtl(program, folder)
    summary = {"design": "overlay", "layers": len(program.layers), "macs_per_cycle": program.rows * program.cols,
               "program": "external" if files.program_image else "rom"}
    if files.program_image:  # the target's top: the program and the weights are images to load
        from ..runtime.c_driver import write_driver
        from ..runtime.layout import layout_of

        layout = layout_of(program, files.program_image.stat().st_size, files.weight_image.stat().st_size)
        write_driver(folder.parent / "driver", layout)
        return summary | {"top": files.top, "program_image_bytes": files.program_image.stat().st_size,
                          "weight_image_bytes": files.weight_image.stat().st_size}
    return summary | {"weight_rom_bits": program.weight_rom_bits}


def design_verilog(build: Path) -> dict[str, bytes]:
    """A build folder's Verilog without the testbenches (`*_tb.v`): the design a board or a harness takes. Builds
    with the target's top for one target have the same."""
    return {p.name: p.read_bytes() for p in sorted((build / "rtl").glob("*.v")) if not p.name.endswith("_tb.v")}
