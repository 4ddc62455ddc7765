"""The checks of `hlsgen deploy` (hlsgen.deploy.zynq): that a build folder (or every segment of a partitioned
one) is a complete build of the target's top (--program external) for the board's part that fits its device,
and that DEPLOY may be replaced; each failure a one-line error with its exit code (docs/deploy.md)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..build_folder import is_build_folder
from ..errors import MappingError, PathError
from ..hw import load_target
from ..partition.plan import ACCELERATOR, HOST, Partition
from ..partition.whole import PARTITION_FILE, is_partitioned, segment_folder
from ..paths import reading_build
from ..rtl.emit import design_verilog
from .boards import Board, same_device
from .ports import TopInterfaces, interfaces, read_ports

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
    first_verilog = design_verilog(segment_folder(build, first))
    for name in segments[1:]:
        other = design_verilog(segment_folder(build, name))
        differs = sorted(f for f in set(first_verilog) | set(other) if first_verilog.get(f) != other.get(f))
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


def check_out(out: Path) -> None:
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
