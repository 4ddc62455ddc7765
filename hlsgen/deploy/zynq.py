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
from ..errors import PathError
from ..npz_io import LABELS_KEY
from ..partition.plan import ACCELERATOR, HOST
from ..rtl.emit import design_verilog
from ..staging import staging_for
from ..templating import make_environment, render_with
from .boards import Board, size_text
from .checks import (IMAGES, MARKER, MODEL_FILES, MODEL_FOLDERS, WHOLE_FILES, WHOLE_FOLDERS, CheckedBuild,
                     check_build, check_out)
from .ports import CONTROL

VIVADO = "2023.2"  # the version the tcl is written for (its IP versions are looked up, not named)
CONTROL_BYTES = 64  # the control port's 6 address bits (hlsgen.rtl.control.ADDR_BITS)


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
    check_out(out)
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
    for file, text in design_verilog(checked.programs[0].folder).items():  # every program's, checked byte-identical
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
