"""`hlsgen deploy` for Zynq boards: check a build against the board, then write the deploy folder (the RTL,
the images, the model, a Vivado tcl that makes the bitstream, a PYNQ driver, a README) the way builds are
written: into a staging folder swapped in whole, so a failed or interrupted deploy leaves DEPLOY as it was."""
from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from .. import __version__
from ..build_folder import is_build_folder
from ..errors import MappingError, PathError
from ..hw import load_target
from ..npz_io import LABELS_KEY
from ..partition.whole import is_partitioned
from ..paths import reading_build
from ..staging import staging_for
from ..templating import make_environment, render_with
from .boards import Board, same_device, size_text
from .ports import CONTROL, TopInterfaces, interfaces, read_ports

VIVADO = "2023.2"  # the version the tcl is written for (its IP versions are looked up, not named)
MARKER = "deploy.json"
IMAGES = ("program.bin", "weights.bin")
# model/ is a build folder hlsgen.runtime.Accelerator runs: the quantized graphs (load_build), the driver's
# layout (driver/model.json, with the C driver), the images in rtl/, the reports, the test vectors
MODEL_FILES = ("build.json", "quant.json", "program.json", "report.json", "driver/model.json")
MODEL_FOLDERS = ("integer", "float", "verify", "driver")
RESOURCES = ("dsp", "lut", "ff", "bram_18k")
CONTROL_BYTES = 64  # the control port's 6 address bits (hlsgen.rtl.control.ADDR_BITS)


@dataclass(frozen=True)
class CheckedBuild:
    """A build folder that runs on the board: what the deploy folder is made from."""

    folder: Path
    model: str
    target: str
    part: str
    clock_mhz: float
    top: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    rtl_verified: str  # what report.json says of the RTL's simulation
    interfaces: TopInterfaces


@dataclass(frozen=True)
class Deployed:
    out: Path
    name: str  # the bitstream's basename
    files: tuple[str, ...]
    notices: tuple[str, ...]


def deploy(build: Path, board: Board, out: Path) -> Deployed:
    """Check `build` against `board` and write the deploy folder `out` whole, or leave it as it was."""
    build, out = Path(build), Path(out)
    checked = check_build(build, board)
    _check_out(out)
    name = _name(checked.target)
    notices = _notices(checked)
    staging = staging_for(out)
    try:
        staging.folder.chmod(0o755)
        _write(staging.folder, checked, board, name, out.name)
        files = tuple(sorted(str(p.relative_to(staging.folder)) for p in staging.folder.rglob("*") if p.is_file()))
        staging.commit()
    except OSError as exc:  # a full disk, a read-only folder: the message names DEPLOY, not the staging folder
        raise PathError(f"cannot write {out}: {(exc.strerror or str(exc)).lower()}; {out} is left as it was") from None
    finally:
        staging.discard()
    return Deployed(out, name, files, tuple(notices))


def check_build(build: Path, board: Board) -> CheckedBuild:
    """`build` as the board needs it: a build folder (else exit 6) for the board's part, whose design fits
    the device and whose RTL is the target's top (else exit 3, naming the rebuild)."""
    if not build.is_dir():
        raise PathError(f"{build}: no such build folder; run `hlsgen build` first")
    if is_partitioned(build):
        raise PathError(f"{build} holds a model partitioned between host and accelerator; deploy takes one "
                        "accelerator build: rebuild with --accelerator-only")
    missing = [f for f in ("report.json", "program.json") if not (build / f).is_file()]
    if not is_build_folder(build) or missing:
        raise PathError(f"{build} is not an hlsgen build folder (no {', '.join(missing or ['build.json'])}); "
                        "run `hlsgen build` first")
    with reading_build(build):  # an edited report.json is a wrong build folder (6), not a crash
        report = json.loads((build / "report.json").read_text())
        built = json.loads((build / "build.json").read_text())
        target, rtl = report["target"], report["designs"]["rtl"]
        name, part, clock = str(target["name"]), str(target["part"]), float(target["clock_mhz"])
        design, program, why, top = rtl.get("design"), rtl.get("program"), rtl.get("why"), rtl.get("top")
        used = {resource: int(report["total"]["resources"][resource]) for resource in RESOURCES}
        fits = bool(report["total"]["fit"]["ok"])
        rtl_verified = _rtl_status((report.get("verification") or {}).get("rtl"))
        inputs, outputs = tuple(built["inputs"]), tuple(built["outputs"])
        model = str(report["model"])
    fix = f"rebuild with --target {board.target}" + ("" if program == "external" else " --program external")
    if not same_device(part, board.part):
        raise MappingError(f"{build} was built for target {name} (part {part}); {board.name} needs part "
                           f"{board.part}: {fix}")
    if design is None:
        raise MappingError(f"{build} has no Verilog RTL ({why or 'see its report.json'}); {board.name} "
                           "runs the target's top: rebuild with --program external")
    if program != "external":
        raise MappingError(f"{build}'s RTL holds the model's own layer table (--program {program}); {board.name} "
                           f"runs the target's top overlay_{name}_top, which loads it: rebuild with --program external")
    _check_fit(build, board, used, fits, name)
    rtl_dir = build / "rtl"
    absent = [f for f in (*(f"rtl/{f}" for f in (f"{top}.v", *IMAGES)), *MODEL_FILES) if not (build / f).is_file()]
    if absent:
        raise PathError(f"{build} is not a whole build folder of this hlsgen (no {', '.join(absent)}); rebuild it "
                        "with `hlsgen build --program external`")
    ports = interfaces(read_ports(rtl_dir / f"{top}.v", top), top, rtl_dir / f"{top}.v")
    if not ports.has_io_master:
        raise PathError(f"{build}'s top {top} has no m_axi_io master (it was built by an older hlsgen): a board "
                        "gives it its input and takes its outputs in DDR; rebuild it with `hlsgen build --program "
                        "external`")
    return CheckedBuild(build, model, name, part, clock, top, inputs, outputs, rtl_verified, ports)


def _rtl_status(verification) -> str:
    """What report.json's `verification.rtl` says of the RTL, for the README."""
    if not isinstance(verification, dict):
        return "not simulated (`hlsgen sim` on the build folder checks it)"
    details = verification.get("details", "")
    return f"verified bit-exact ({details})" if verification.get("passed") else f"FAILED its simulation ({details})"


def _check_fit(build: Path, board: Board, used: dict[str, int], fits: bool, target: str) -> None:
    """The design's estimated resources within the board's device (its shipped target's budget)."""
    device = load_target(board.target).device
    over = [name for name in RESOURCES if used[name] > getattr(device, name)]
    if over:
        name = over[0]
        raise MappingError(f"{build}'s design (target {target}) does not fit the {board.name}'s {board.part}: it "
                           f"needs {used[name]:,} {name.upper()}, the device has {getattr(device, name):,}; "
                           f"rebuild with --target {board.target}")
    if not fits:
        raise MappingError(f"{build}'s design does not fit its target {target}'s device (report.json total.fit); "
                           f"rebuild with --target {board.target}")


def _check_out(out: Path) -> None:
    """DEPLOY must be new or an earlier deploy folder: anything else is the user's, never replaced."""
    try:
        exists = out.exists()
    except OSError as exc:  # e.g. a name longer than the file system takes
        raise PathError(f"cannot create the deploy folder {out}: {exc.strerror or exc}; choose another -o") from None
    if exists and not (out.is_dir() and (out / MARKER).is_file()):
        raise PathError(f"{out} exists and is not an hlsgen deploy folder; choose another -o or remove it")
    parent = next(p for p in out.absolute().parents if p.exists())
    if not parent.is_dir():
        raise PathError(f"cannot create the deploy folder {out}: {parent} is a file, not a folder; choose another -o")


def _notices(checked: CheckedBuild) -> list[str]:
    """What the user should act on before the board run."""
    notices = []
    if not checked.rtl_verified.startswith("verified"):
        notices.append(f"the RTL of {checked.folder}: {checked.rtl_verified.split(' (')[0]}; `hlsgen sim "
                       f"{checked.folder}` checks it bit-exact before it goes on the board")
    return notices


def _write(folder: Path, checked: CheckedBuild, board: Board, name: str, deploy_name: str) -> None:
    build = checked.folder
    for source in sorted((build / "rtl").glob("*.v")):
        if not source.name.endswith("_tb.v"):
            _copy(source, folder / "rtl" / source.name)
    for image in IMAGES:
        _copy(build / "rtl" / image, folder / "images" / image)
        _copy(build / "rtl" / image, folder / "model" / "rtl" / image)  # where the runtime reads them
    for sub in MODEL_FOLDERS:
        for source in sorted((build / sub).rglob("*")):
            if source.is_file():
                _copy(source, folder / "model" / source.relative_to(build))
    for file in MODEL_FILES:
        _copy(build / file, folder / "model" / file)
    context = _context(checked, board, name, deploy_name)
    env = make_environment("deploy")
    (folder / "vivado").mkdir()
    (folder / "vivado" / "build.tcl").write_text(render_with(env, "deploy", "zynq_build.tcl.j2", **context))
    (folder / "pynq").mkdir()
    (folder / "pynq" / "hlsgen_pynq.py").write_text(render_with(env, "deploy", "hlsgen_pynq.py.j2", **context))
    (folder / "README.md").write_text(render_with(env, "deploy", "README.md.j2", **context))
    (folder / MARKER).write_text(json.dumps(_record(checked, board, name, context), indent=1, sort_keys=True) + "\n")


def _context(checked: CheckedBuild, board: Board, name: str, deploy_name: str) -> dict:
    """Everything the templates print, decided here."""
    ps, top = board.ps, checked.interfaces
    hp_width = min(max(width for _, width in top.master_widths), ps.hp_max_bits)  # the masters' widest data
    clock = f"{checked.clock_mhz:g}"
    reach = (f"all {board.memory}" if board.reach_bytes == board.memory_bytes else
             f"the low {size_text(board.reach_bytes)} of the {board.memory} (the rest lies above 4 GiB)")
    return {
        "board": board, "ps": ps, "vivado": VIVADO, "version": __version__, "name": name, "deploy_folder": deploy_name,
        "model": checked.model, "target": checked.target, "build_part": checked.part, "clock_mhz": clock,
        "top": checked.top, "control": CONTROL, "control_bytes": CONTROL_BYTES,
        "control_base": f"0x{ps.control_base:08X}", "masters": list(top.masters),
        "master_widths": list(top.master_widths),
        "master_ports": [(master, f"S{i:02d}_AXI") for i, master in enumerate(top.masters)],
        "streams": list(top.streams), "ties": list(top.ties), "hp_width": hp_width, "reach": reach,
        "ps_config": [*ps.enable, (ps.clock_key, clock), (ps.hp_width_key, str(hp_width))],
        "board_store_item": board.store_item, "inputs": list(checked.inputs),
        "outputs": list(checked.outputs), "labels_key": LABELS_KEY, "rtl_verified": checked.rtl_verified,
        "ddr_segment": f"{ps.cell}/{ps.ddr_segment}", "hp_segments": f"{ps.cell}/{ps.ddr_segment.split('/')[0]}/*",
        "notes": [f"irq drives {ps.irq_pin} directly: PYNQ's Interrupt class needs an AXI interrupt controller, so "
                  "the PYNQ runtime polls CONTROL.DONE"],
    }


def _record(checked: CheckedBuild, board: Board, name: str, context: dict) -> dict:
    """deploy.json: what was deployed (no dates: a deploy of the same build is the same folder)."""
    return {"board": board.name, "part": board.part, "board_part": board.board_part, "model": checked.model,
            "target": checked.target, "build_part": checked.part, "clock_mhz": checked.clock_mhz,
            "top": checked.top, "bitstream": f"{name}.bit", "hwh": f"{name}.hwh",
            "control_base": context["control_base"], "masters": list(checked.interfaces.masters),
            "vivado": VIVADO, "hlsgen": __version__}


def _name(target: str) -> str:
    """The bitstream's basename (and the block design's name): the target's top is the same for any model."""
    return "hlsgen_" + re.sub(r"[^A-Za-z0-9_]", "_", target)


def _copy(source: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, dest)
