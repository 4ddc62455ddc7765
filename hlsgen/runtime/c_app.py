"""The C driver on the Verilated RTL (docs/runtime.md, "The C driver"): an application of the unmodified driver
(templates/driver/hlsgen_app.c.j2: load each model once, run every sample, write the outputs) linked into the
harness (hlsgen.runtime.harness) of the builds' common top, so several models run one after another on one
Verilated build, through the same platform layer a board's C code implements."""
from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import MismatchError, ToolError
from ..rtl.emit import design_verilog
from ..templating import make_environment, render_with
from .c_driver import FOLDER
from .harness import build_harness
from .layout import ModelLayout

MEM_BASE = 0x10000  # the driver's window starts past address 0, as a board's DDR region would
LINE = re.compile(r"^(\S+) (load|run) (\d+) cycles (\d+)$")


@dataclass(frozen=True)
class AppRun:
    """What the application printed and wrote for one model."""

    layout: ModelLayout
    load_cycles: int
    cycles: tuple[int, ...]  # per sample: START to DONE, as CYCLES reads
    outputs: bytes  # every sample's output bytes one after another


def build_app(builds: list[Path], work: Path) -> Path:
    """The harness executable with the driver application for `builds` (build folders with the target's top,
    all for one target: their Verilog must be the same)."""
    layouts = [ModelLayout.read(b) for b in builds]
    idents = [m.ident for m in layouts]
    if len(set(idents)) != len(idents):
        raise ToolError(f"two models share a C name ({', '.join(idents)}): the application links one descriptor each")
    tops = {json.loads((b / "report.json").read_text())["designs"]["rtl"]["top"] for b in builds}
    first = design_verilog(builds[0])
    if len(tops) != 1 or any(design_verilog(b) != first for b in builds[1:]):
        raise MismatchError("the builds' Verilog differs (built for other targets, or without --program external?)")
    work.mkdir(parents=True, exist_ok=True)
    app = work / "hlsgen_app.c"
    app.write_text(render_with(make_environment(FOLDER), FOLDER, "hlsgen_app.c.j2", layouts=layouts))
    sources = [builds[0] / "driver" / "hlsgen_driver.c", app]
    sources += [b / "driver" / f"hlsgen_model_{m.ident}.c" for b, m in zip(builds, layouts)]
    return build_harness(builds[0] / "rtl", tops.pop(), app_sources=sources,
                         include_dirs=[builds[0] / "driver"] + [b / "driver" for b in builds[1:]])


def run_app(executable: Path, builds: list[Path], inputs: list[np.ndarray], work: Path,
            mem_bytes: int = 256 << 20) -> list[AppRun]:
    """Run the application on `inputs[k]` (integer samples [N, ...] of build k's input) and collect its runs, the
    memory at the target's read latency and sustained rate."""
    from ..rtl.sim import build_target

    memory = build_target(builds[0]).external_memory
    args = [str(executable), "--read-latency", str(memory.read_latency), "--bytes-per-cycle",
            repr(float(memory.bytes_per_cycle)), "--mem-bytes", str(mem_bytes), "app",
            hex(MEM_BASE), str(mem_bytes - MEM_BASE)]
    for k, (build, x) in enumerate(zip(builds, inputs)):
        samples = np.asarray(x, np.int64).reshape(len(x), -1)
        (work / f"in{k}.bin").write_bytes((samples & 0xFF).astype(np.uint8).tobytes())
        args += [str(build / "rtl" / "program.bin"), str(build / "rtl" / "weights.bin"), str(work / f"in{k}.bin"),
                 str(work / f"out{k}.bin")]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        raise ToolError(f"the driver application failed (exit {done.returncode}): "
                        f"{(done.stderr or done.stdout).strip().splitlines()[-1:]}")
    lines = [LINE.match(line) for line in done.stdout.splitlines()]
    runs = []
    for k, build in enumerate(builds):
        layout = ModelLayout.read(build)
        mine = [m for m in lines if m and m.group(1) == layout.name]
        load = next(int(m.group(4)) for m in mine if m.group(2) == "load")
        cycles = tuple(int(m.group(4)) for m in mine if m.group(2) == "run")
        runs.append(AppRun(layout, load, cycles, (work / f"out{k}.bin").read_bytes()))
    return runs
