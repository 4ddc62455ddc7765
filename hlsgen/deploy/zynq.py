"""`hlsgen deploy` for Zynq boards: check a build against the board, then write the deploy folder (the RTL,
the images, the model, a Vivado tcl that makes the bitstream, a PYNQ driver, a README) the way builds are
written: into a staging folder swapped in whole, so a failed or interrupted deploy leaves DEPLOY as it was.

A partitioned build (a model split between host and accelerator) deploys too: every segment is a build of
its own for one target with --program external, so all have the same Verilog (the target's top) and one
bitstream runs them all; DEPLOY/model is the partitioned folder as hlsgen.runtime.Accelerator walks it (the
host stages in onnxruntime on the board's CPU, each segment's program and weights loaded when it runs)."""
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
from ..partition.plan import ACCELERATOR, HOST, Partition
from ..partition.whole import PARTITION_FILE, is_partitioned, segment_folder
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
# and of a partitioned build, beside each segment's files under segments/<segment>/: the stages (partition.json),
# the host stages (host/<stage>.onnx), the whole model's reports and test vectors
WHOLE_FILES = ("build.json", "report.json", PARTITION_FILE)
WHOLE_FOLDERS = ("verify",)
RESOURCES = ("dsp", "lut", "ff", "bram_18k")
CONTROL_BYTES = 64  # the control port's 6 address bits (hlsgen.rtl.control.ADDR_BITS)


@dataclass(frozen=True)
class Program:
    """One accelerator program of the build: a single build's own, or one segment of a partitioned model."""

    name: str  # the segment ("segment0", ...); "" for a single build
    folder: Path  # its build folder
    rtl_verified: str  # what its report.json says of the RTL's simulation


@dataclass(frozen=True)
class Stage:
    """A stage of a partitioned model, in run order: a segment on the accelerator or a host stage."""

    name: str
    side: str  # ACCELERATOR or HOST
    ops: tuple[str, ...]  # its nodes' ONNX ops, each once, in order


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
    interfaces: TopInterfaces
    programs: tuple[Program, ...]  # one for a single build; a partitioned model's segments in run order
    stages: tuple[Stage, ...] = ()  # a partitioned model's stages; () for a single build

    @property
    def partitioned(self) -> bool:
        return bool(self.stages)

    @property
    def host_stages(self) -> tuple[Stage, ...]:
        return tuple(s for s in self.stages if s.side == HOST)

    @property
    def rtl_verified(self) -> str:
        """What the reports say of the RTL's simulation (each segment's, named, for a partitioned model)."""
        if not self.partitioned:
            return self.programs[0].rtl_verified
        return "; ".join(f"{p.name} {p.rtl_verified}" for p in self.programs)


@dataclass(frozen=True)
class Deployed:
    out: Path
    name: str  # the bitstream's basename
    files: tuple[str, ...]
    notices: tuple[str, ...]


@dataclass(frozen=True)
class _Report:
    """What one program's build folder says of itself (report.json, build.json)."""

    model: str
    target: str
    part: str
    clock_mhz: float
    design: str | None
    program: str | None
    why: str | None
    top: str | None
    used: dict[str, int]
    fits: bool
    rtl_verified: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]


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
    the device and whose RTL is the target's top (else exit 3, naming the rebuild); of a partitioned model,
    every segment so, all with the same Verilog (else exit 3, naming the segment)."""
    if not build.is_dir():
        raise PathError(f"{build}: no such build folder; run `hlsgen build` first")
    if is_partitioned(build):
        return _check_partitioned(build, board)
    _check_build_folder(build, ("report.json", "program.json"))
    report = _read_report(build)
    _check_program(build, report, board, str(build))
    return CheckedBuild(build, report.model, report.target, report.part, report.clock_mhz, report.top,
                        report.inputs, report.outputs, _interfaces(build, report.top, str(build)),
                        (Program("", build, report.rtl_verified),))


def _check_partitioned(build: Path, board: Board) -> CheckedBuild:
    """A model partitioned between host and accelerator: its stages, the host stages' models, and each segment
    a build folder that passes a single build's checks; one Verilog for all (one bitstream runs them all)."""
    _check_build_folder(build, (PARTITION_FILE,))
    with reading_build(build):  # an edited partition.json or build.json is a wrong build folder (6)
        partition = Partition.from_json(json.loads((build / PARTITION_FILE).read_text())["partition"])
        model = Path(str(json.loads((build / "build.json").read_text())["model"])).stem
        stages = tuple(Stage(s.name, s.side, tuple(dict.fromkeys(partition.node_ops[n] for n in s.nodes)))
                       for s in partition.stages)
    _check_whole(build, str(build), tuple(f"host/{s.name}.onnx" for s in stages if s.side == HOST))
    segments = [s.name for s in stages if s.side == ACCELERATOR]
    if not segments:
        raise PathError(f"{build}'s {PARTITION_FILE} names no accelerator segment; rebuild it with `hlsgen build`")
    reports = {}
    for name in segments:
        folder = segment_folder(build, name)
        _check_whole(folder, f"{build}: {name}", ("build.json", "report.json", "program.json"))
        reports[name] = _read_report(folder)
    bare = [name for name in segments if reports[name].design is None]
    if bare:
        why = "; ".join(f"{name}: {reports[name].why or 'see its report.json'}" for name in bare)
        raise MappingError(f"{build}: segment{'s' if len(bare) > 1 else ''} {', '.join(bare)} "
                           f"{'have' if len(bare) > 1 else 'has'} no Verilog RTL ({why}); {board.name} runs the "
                           "target's top: rebuild with --program external")
    for name in segments:
        _check_program(segment_folder(build, name), reports[name], board, f"{build}: {name}")
    first = segments[0]
    top = reports[first].top
    ports = _interfaces(segment_folder(build, first), top, f"{build}: {first}")
    verilog = _verilog(segment_folder(build, first))
    for name in segments[1:]:
        other = _verilog(segment_folder(build, name))
        differs = sorted(f for f in set(verilog) | set(other) if verilog.get(f) != other.get(f))
        if differs:
            raise MappingError(f"{build}: {name}'s Verilog differs from {first}'s ({', '.join(differs[:3])}"
                               f"{' ...' if len(differs) > 3 else ''}): one bitstream runs every segment only when "
                               f"all are built for one target with --program external: rebuild with --target "
                               f"{board.target} --program external")
    programs = tuple(Program(name, segment_folder(build, name), reports[name].rtl_verified) for name in segments)
    head = reports[first]
    return CheckedBuild(build, model, head.target, head.part, head.clock_mhz, top, tuple(partition.inputs),
                        tuple(partition.outputs), ports, programs, stages)


def _check_build_folder(build: Path, files: tuple[str, ...]) -> None:
    """`build` an hlsgen build folder (build.json) holding `files`, else exit 6."""
    missing = [f for f in files if not (build / f).is_file()]
    if not is_build_folder(build) or missing:
        raise PathError(f"{build} is not an hlsgen build folder (no {', '.join(missing or ['build.json'])}); "
                        "run `hlsgen build` first")


def _check_whole(folder: Path, who: str, files: tuple[str, ...]) -> None:
    """A partitioned build's part (`who` in the message) holding `files`, else exit 6."""
    missing = [f for f in files if not (folder / f).is_file()]
    if missing:
        raise PathError(f"{who} is not a whole build folder (no {', '.join(missing)}); rebuild it with `hlsgen "
                        "build --program external`")


def _read_report(build: Path) -> _Report:
    with reading_build(build):  # an edited report.json is a wrong build folder (6), not a crash
        report = json.loads((build / "report.json").read_text())
        built = json.loads((build / "build.json").read_text())
        target, rtl = report["target"], report["designs"]["rtl"]
        return _Report(
            model=str(report["model"]), target=str(target["name"]), part=str(target["part"]),
            clock_mhz=float(target["clock_mhz"]), design=rtl.get("design"), program=rtl.get("program"),
            why=rtl.get("why"), top=rtl.get("top"),
            used={resource: int(report["total"]["resources"][resource]) for resource in RESOURCES},
            fits=bool(report["total"]["fit"]["ok"]),
            rtl_verified=_rtl_status((report.get("verification") or {}).get("rtl")),
            inputs=tuple(built["inputs"]), outputs=tuple(built["outputs"]))


def _check_program(build: Path, report: _Report, board: Board, who: str) -> None:
    """One program's build folder (`who` in the messages: the folder, or a partitioned build's segment) for the
    board's part, with the target's top, fitting the device, holding its images and driver layout."""
    name, program = report.target, report.program
    fix = f"rebuild with --target {board.target}" + ("" if program == "external" else " --program external")
    if not same_device(report.part, board.part):
        raise MappingError(f"{who} was built for target {name} (part {report.part}); {board.name} needs part "
                           f"{board.part}: {fix}")
    if report.design is None:
        raise MappingError(f"{who} has no Verilog RTL ({report.why or 'see its report.json'}); {board.name} "
                           "runs the target's top: rebuild with --program external")
    if program != "external":
        raise MappingError(f"{who}'s RTL holds the model's own layer table (--program {program}); {board.name} "
                           f"runs the target's top overlay_{name}_top, which loads it: rebuild with --program external")
    _check_fit(who, board, report.used, report.fits, name)
    top = report.top
    absent = [f for f in (*(f"rtl/{f}" for f in (f"{top}.v", *IMAGES)), *MODEL_FILES) if not (build / f).is_file()]
    if absent:
        raise PathError(f"{who} is not a whole build folder of this hlsgen (no {', '.join(absent)}); rebuild it "
                        "with `hlsgen build --program external`")


def _interfaces(build: Path, top: str, who: str) -> TopInterfaces:
    """The top's AXI interfaces, read from its port list; it must have the m_axi_io master."""
    rtl_dir = build / "rtl"
    ports = interfaces(read_ports(rtl_dir / f"{top}.v", top), top, rtl_dir / f"{top}.v")
    if not ports.has_io_master:
        raise PathError(f"{who}'s top {top} has no m_axi_io master (it was built by an older hlsgen): a board "
                        "gives it its input and takes its outputs in DDR; rebuild it with `hlsgen build --program "
                        "external`")
    return ports


def _verilog(build: Path) -> dict[str, bytes]:
    """A build's Verilog, the testbenches left out: what DEPLOY/rtl holds."""
    return {p.name: p.read_bytes() for p in sorted((build / "rtl").glob("*.v")) if not p.name.endswith("_tb.v")}


def _rtl_status(verification) -> str:
    """What report.json's `verification.rtl` says of the RTL, for the README."""
    if not isinstance(verification, dict):
        return "not simulated (`hlsgen sim` on the build folder checks it)"
    details = verification.get("details", "")
    return f"verified bit-exact ({details})" if verification.get("passed") else f"FAILED its simulation ({details})"


def _check_fit(who: str, board: Board, used: dict[str, int], fits: bool, target: str) -> None:
    """The design's estimated resources within the board's device (its shipped target's budget)."""
    device = load_target(board.target).device
    over = [name for name in RESOURCES if used[name] > getattr(device, name)]
    if over:
        name = over[0]
        raise MappingError(f"{who}'s design (target {target}) does not fit the {board.name}'s {board.part}: it "
                           f"needs {used[name]:,} {name.upper()}, the device has {getattr(device, name):,}; "
                           f"rebuild with --target {board.target}")
    if not fits:
        raise MappingError(f"{who}'s design does not fit its target {target}'s device (report.json total.fit); "
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
    unproven = [p for p in checked.programs if not p.rtl_verified.startswith("verified")]
    if not unproven:
        return []
    states = sorted({p.rtl_verified.split(" (")[0] for p in unproven})
    what = (f"the RTL of {checked.folder}" if not checked.partitioned else
            f"the RTL of {checked.folder}'s {', '.join(p.name for p in unproven)}")
    return [f"{what}: {'; '.join(states)}; `hlsgen sim {checked.folder}` checks it bit-exact before it goes on "
            "the board"]


def _write(folder: Path, checked: CheckedBuild, board: Board, name: str, deploy_name: str) -> None:
    for file, text in _verilog(checked.programs[0].folder).items():  # every program's, checked byte-identical
        _write_bytes(folder / "rtl" / file, text)
    if checked.partitioned:
        build = checked.folder
        for program in checked.programs:
            for image in IMAGES:
                _copy(program.folder / "rtl" / image, folder / "images" / program.name / image)
            _copy_program(program.folder, folder / "model" / "segments" / program.name)
        for file in (*WHOLE_FILES, *(f"host/{stage.name}.onnx" for stage in checked.host_stages)):
            _copy(build / file, folder / "model" / file)
        _copy_folders(build, WHOLE_FOLDERS, folder / "model")
    else:
        for image in IMAGES:
            _copy(checked.folder / "rtl" / image, folder / "images" / image)
        _copy_program(checked.folder, folder / "model")
    context = _context(checked, board, name, deploy_name)
    env = make_environment("deploy")
    (folder / "vivado").mkdir()
    (folder / "vivado" / "build.tcl").write_text(render_with(env, "deploy", "zynq_build.tcl.j2", **context))
    (folder / "pynq").mkdir()
    (folder / "pynq" / "hlsgen_pynq.py").write_text(render_with(env, "deploy", "hlsgen_pynq.py.j2", **context))
    (folder / "README.md").write_text(render_with(env, "deploy", "README.md.j2", **context))
    (folder / MARKER).write_text(json.dumps(_record(checked, board, name, context), indent=1, sort_keys=True) + "\n")


def _copy_program(build: Path, model: Path) -> None:
    """What the runtime reads of one program's build folder, into `model`."""
    for image in IMAGES:
        _copy(build / "rtl" / image, model / "rtl" / image)  # where the runtime reads them
    _copy_folders(build, MODEL_FOLDERS, model)
    for file in MODEL_FILES:
        _copy(build / file, model / file)


def _copy_folders(build: Path, subs: tuple[str, ...], dest: Path) -> None:
    for sub in subs:
        for source in sorted((build / sub).rglob("*")):
            if source.is_file():
                _copy(source, dest / source.relative_to(build))


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
        # a partitioned model: its stages in run order, the host stages (onnxruntime on the board's CPU)
        "partitioned": checked.partitioned,
        "stages": [{"name": s.name, "side": s.side, "ops": ", ".join(s.ops)} for s in checked.stages],
        "segments": [p.name for p in checked.programs if p.name],
        "host_stages": [{"name": s.name, "ops": ", ".join(s.ops)} for s in checked.host_stages],
        "programs_verified": [(p.name, p.rtl_verified) for p in checked.programs],
    }


def _record(checked: CheckedBuild, board: Board, name: str, context: dict) -> dict:
    """deploy.json: what was deployed (no dates: a deploy of the same build is the same folder)."""
    return {"board": board.name, "part": board.part, "board_part": board.board_part, "model": checked.model,
            "target": checked.target, "build_part": checked.part, "clock_mhz": checked.clock_mhz,
            "top": checked.top, "bitstream": f"{name}.bit", "hwh": f"{name}.hwh",
            "control_base": context["control_base"], "masters": list(checked.interfaces.masters),
            "vivado": VIVADO, "hlsgen": __version__} | ({"stages": [
                {"name": s.name, "side": s.side, "images": f"images/{s.name}" if s.side == ACCELERATOR else None,
                 "model": f"host/{s.name}.onnx" if s.side == HOST else f"segments/{s.name}"}
                for s in checked.stages]} if checked.partitioned else {})


def _name(target: str) -> str:
    """The bitstream's basename (and the block design's name): the target's top is the same for any model."""
    return "hlsgen_" + re.sub(r"[^A-Za-z0-9_]", "_", target)


def _copy(source: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, dest)


def _write_bytes(dest: Path, data: bytes) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(data)
