"""`hlsgen deploy` for the ECP5 boards (hlsgen.deploy.soc_boards): check a build against the board, then write
DEPLOY the way builds are written (a staging folder swapped in whole, so a failed or interrupted deploy
leaves DEPLOY as it was):

    rtl/        the accelerator's Verilog and memories (the model's own top: AXI-streams in and out)
    firmware/   the VexRiscv firmware (hlsgen.deploy.firmware) and the ROM image, for the board's SoC
    gateware/   the LiteX SoC for the board (hlsgen.deploy.soc): Verilog, pin constraints, the build script,
                and with the bitstream the .bit, .svf and nextpnr's report (hlsgen.deploy.bitstream)
    sim/        with --simulate: the whole SoC's console in Verilator and its verdict (hlsgen.deploy.soc_sim)
    README.md   how to program the board and read the answers; deploy.json what was made
"""
from __future__ import annotations

import hashlib
import json
import shutil
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import __version__
from ..errors import MappingError, MismatchError, PathError, ToolError
from ..paths import reading_build
from ..progress import silent
from ..hw.dram import pack_gather
from ..rtl.fmap_dma import image_bytes, input_offset, input_words
from ..staging import staging_for
from ..templating import make_environment, render_with
from .bitstream import make_gateware
from .checks import MARKER, check_out
from .firmware import BLOCK, build_firmware, images_header, require_gcc, rom_bytes, stored_images
from .ports import read_ports
from .soc_boards import SocBoard, same_fabric
from .soc_top import CONTROL_BASE, WEIGHTS_OFFSET, ExternalMemory, Master, StreamTop

LITEX_PACKAGES = ("litex litedram litex-boards pythondata-cpu-vexriscv pythondata-software-picolibc "
                  "pythondata-software-compiler_rt meson ninja")
INPUT_PACK = "input_pack.npy"  # DEPLOY/model/: how the host packs an input into the feature-map image
WEIGHTS_FILE = "weights.bin"  # the weight image of a top with external weights (hlsgen.rtl.render)
STORED_IMAGES = 16  # the most test images the firmware carries (the build stores 16)


@dataclass(frozen=True)
class SocBuild:
    """A build folder whose accelerator goes into the board's SoC."""

    folder: Path
    model: str
    target: str
    top: str
    bits: int  # a stream beat: one input or output integer
    inputs: np.ndarray  # the stored test images, one row of beats each (the inputs one after another)
    outputs: np.ndarray  # the integer reference's output beats (two's complement, `bits` wide), a row an image
    rtl_verified: str
    memory: ExternalMemory | None = None  # the top's AXI4 masters and images (None: streams only)
    input_pack: tuple[np.ndarray, np.ndarray] | None = None  # hlsgen.hw.dram.pack_gather of a packed input


@dataclass(frozen=True)
class SimVerdict:
    images: int
    exact: bool
    mismatches: tuple[str, ...]
    accelerator_cycles: int  # per inference, the most of the images
    soc_cycles: int  # per inference with the firmware's copies, registers and wait, the most of the images
    build_s: float
    run_s: float
    built: bool

    def line(self, board: SocBoard) -> str:
        verdict = "bit-exact" if self.exact else f"{len(self.mismatches)} MISMATCHES"
        per_s = board.sys_clk_mhz * 1e6 / self.soc_cycles
        return (f"whole-SoC simulation of {board.name}: {self.images} image(s) {verdict} against the integer "
                f"reference; {self.soc_cycles:,} SoC cycles per inference ({self.accelerator_cycles:,} in the "
                f"accelerator), {per_s:,.0f} images/s at {board.sys_clk_mhz:g} MHz; Verilator "
                f"{'build ' + format(self.build_s, '.1f') + ' s' if self.built else 'model cached'}, simulation "
                f"{self.run_s:.1f} s")


@dataclass(frozen=True)
class SocDeployed:
    out: Path
    files: tuple[str, ...]
    simulation: SimVerdict | None
    bitstream: dict | None  # hlsgen.deploy.bitstream's figures, when it was made


def deploy_soc(build: Path, board: SocBoard, out: Path, simulate: int | None = None, bitstream: bool = True,
               step=None) -> SocDeployed:
    """Check `build` against `board`, write DEPLOY whole (module docstring), simulating the SoC on `simulate`
    stored images first when asked; a simulation that differs from the reference writes nothing (exit 5)."""
    build, out = Path(build), Path(out)
    checked = check_soc_build(build, board)
    check_out(out)
    _require_litex()
    require_gcc()
    step = step or silent
    staging = staging_for(out)
    try:
        staging.folder.chmod(0o755)
        folder = staging.folder
        top = _copy_rtl(checked, folder / "rtl")
        _copy_model(checked, folder / "model")
        images = _board_images(checked, top)
        verdict = None
        if simulate is not None:
            count = min(simulate, STORED_IMAGES, len(checked.inputs))
            with step(f"whole-SoC simulation of {count} image(s)"):
                verdict = _simulate(checked, board, top, count, folder / "sim")
            if not verdict.exact:
                raise MismatchError("the whole-SoC simulation differs from the integer reference: "
                                    + "; ".join(verdict.mismatches[:3]))
        with step("LiteX SoC for " + board.name + (" and its bitstream (Yosys, nextpnr-ecp5)" if bitstream else "")):
            headers = firmware_headers(checked, top, images, board, finish=False)
            figures = make_gateware(board, top, len(images), headers, folder, bitstream)
        _write_readme(folder, out.name, checked, board, top, verdict, figures)
        files = tuple(sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()))
        staging.commit()
    except OSError as exc:
        raise PathError(f"cannot write {out}: {(exc.strerror or str(exc)).lower()}; {out} is left as it was") from None
    finally:
        staging.discard()
    return SocDeployed(out, files, verdict, figures)


def check_soc_build(build: Path, board: SocBoard) -> SocBuild:
    """`build` as the board's SoC takes it: a build folder (else exit 6) for the board's ECP5 fabric with the
    model's own stream top (else exit 3, naming the rebuild)."""
    if not build.is_dir():
        raise PathError(f"{build}: no such build folder; run `hlsgen build` first")
    needed = ("build.json", "report.json", "verify/int_inputs.npz", "verify/int_outputs.npz")
    missing = [f for f in needed if not (build / f).is_file()]
    if missing:
        raise PathError(f"{build} is not an hlsgen build folder (no {', '.join(missing)}); run `hlsgen build` first")
    fix = f"rebuild with --target {board.target} --program rom"
    with reading_build(build):
        report = json.loads((build / "report.json").read_text())
        built = json.loads((build / "build.json").read_text())
        target, rtl = report["target"], report["designs"]["rtl"]
        part, design, program = str(target["part"]), rtl.get("design"), rtl.get("program")
        inputs = dict(np.load(build / "verify" / "int_inputs.npz"))
        outputs = dict(np.load(build / "verify" / "int_outputs.npz"))
        names_in, names_out = list(built["inputs"]), list(built["outputs"])
        verification = (report.get("verification") or {}).get("rtl")
    if not same_fabric(part, board):
        raise MappingError(f"{build} was built for target {target['name']} (part {part}); the {board.name}'s SoC "
                           f"needs an ECP5 85F build: {fix}")
    if design is None:
        raise MappingError(f"{build} has no Verilog RTL ({rtl.get('why') or 'see its report.json'}); {fix}")
    if program != "rom":
        raise MappingError(f"{build}'s RTL is the target's top (--program {program}), which takes more block RAM "
                           f"than the {board.part} has beside the SoC: {fix}")
    tops = [p for p in sorted((build / "rtl").glob("*_top.v")) if not p.name.endswith("_tb.v")]
    if len(tops) != 1:
        raise PathError(f"{build}/rtl holds no single *_top.v; rebuild it with `hlsgen build`")
    top = tops[0].stem
    ports = {p.name: p for p in read_ports(tops[0], top)}
    program = _program(build) if any(_is_master(n) for n in ports) else None
    memory = None if program is None else _external_memory(build, ports, program)
    if "m_axis_tdata" not in ports or memory is None and "s_axis_tdata" not in ports:
        raise MappingError(f"{build}'s top {top} has no AXI-streams for the {board.name}'s SoC; {fix}")
    bits = ports["m_axis_tdata"].width
    count = len(inputs[names_in[0]])
    mask, pack = (1 << bits) - 1, None
    if memory is not None and memory.input_in_fmap:
        packed = input_words(program, np.asarray(inputs[names_in[0]], np.int64))[1]
        x = np.frombuffer(packed, np.uint8).reshape(count, -1).astype(np.int64)
        pack = pack_gather(program.maps[program.input_map], program.rows)
    else:
        x = np.concatenate([np.asarray(inputs[t], np.int64).reshape(count, -1) for t in names_in], axis=1) & mask
    y = np.concatenate([np.asarray(outputs[t], np.int64).reshape(count, -1) for t in names_out], axis=1) & mask
    status = ("verified bit-exact" if isinstance(verification, dict) and verification.get("passed")
              else "not simulated by `hlsgen sim`")
    return SocBuild(build, Path(str(built["model"])).stem, str(target["name"]), top, bits, x, y, status, memory,
                    pack)


def _is_master(port: str) -> bool:
    return port.startswith("m_axi") and not port.startswith("m_axis")


def _external_memory(build: Path, ports: dict, program) -> ExternalMemory:
    """The AXI4 masters of a top that reads weights or feature maps from external memory, and its images."""
    names = sorted({n.rsplit("_", 1)[0] for n in ports if _is_master(n)})
    masters = tuple(Master(name, max(ports[f"{name}_{d}data"].width for d in ("r", "w") if f"{name}_{d}data" in ports),
                           max(ports[f"{name}_{c}id"].width for c in ("ar", "aw") if f"{name}_{c}id" in ports),
                           f"{name}_arvalid" in ports, f"{name}_awvalid" in ports) for name in names)
    weights = build / "rtl" / WEIGHTS_FILE
    offset = input_offset(program) if program.input_in_dram else None
    return ExternalMemory(masters, weights.stat().st_size if weights.is_file() else 0,
                          image_bytes(program) if program.fmaps_external else 0, offset)


def _program(build: Path):
    """The build's layer program, compiled from its program.json as `hlsgen sim` compiles it."""
    from ..build_folder import load_build
    from ..hw.program_io import read_program
    from ..rtl.program import compile_program
    from ..rtl.sim import build_target

    graph = load_build(build).graph
    return compile_program(read_program(build, graph, build_target(build)), graph)


def _copy_rtl(checked: SocBuild, dest: Path):
    """The accelerator's Verilog (no testbench), memories and weight image (weights.bin, which the host uploads
    to a top with external weights) into DEPLOY/rtl; its StreamTop there."""
    dest.mkdir(parents=True)
    for source in sorted((checked.folder / "rtl").iterdir()):
        if source.suffix in (".v", ".mem") and not source.name.endswith("_tb.v") or source.name == WEIGHTS_FILE:
            shutil.copyfile(source, dest / source.name)
    sources = (dest / f"{checked.top}.v", *sorted(p for p in dest.glob("hg_*.v")))
    packed = checked.memory is not None and checked.memory.input_in_fmap  # its beats are the packed bytes
    return StreamTop(checked.top, sources, dest, checked.inputs.shape[1], checked.outputs.shape[1],
                     8 if packed else checked.bits, checked.bits, checked.memory)


MODEL_FILES = ("build.json", "quant.json", "integer", "float")  # what hlsgen.build_folder.load_build reads


def _copy_model(checked: SocBuild, dest: Path) -> None:
    """The build's quantized model into DEPLOY/model: the host quantizes inputs and dequantizes outputs with it
    (`hlsgen run DEPLOY --backend uart:PORT`); with an input the host packs into the feature-map image, the
    packing as a table (INPUT_PACK: hlsgen.hw.dram.pack_gather's source and constant, a row each)."""
    dest.mkdir()
    for name in MODEL_FILES:
        source = checked.folder / name
        shutil.copytree(source, dest / name) if source.is_dir() else shutil.copyfile(source, dest / name)
    if checked.input_pack is not None:
        np.save(dest / INPUT_PACK, np.stack(checked.input_pack).astype(np.int32))  # .npy: byte-identical


def _board_images(checked: SocBuild, top) -> np.ndarray:
    """The test images the board's ROM carries."""
    return checked.inputs[:stored_images(top.in_words, STORED_IMAGES)]


def firmware_headers(checked: SocBuild, top, images: np.ndarray, board: SocBoard, finish: bool,
                     weights_at_reset: bool = False) -> dict[str, str]:
    return {"images.h": images_header(images, top, checked.model, board.name, model_id(top), finish,
                                      weights_at_reset)}


def model_id(top) -> str:
    """The accelerator's identity, which the firmware answers to 'I': its Verilog and memories, hashed."""
    digest = hashlib.sha256()
    for path in sorted(Path(top.mem_dir).iterdir()):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


@contextmanager
def simulated_board(build: Path, board: SocBoard, folder: Path, port: int = 0):
    """`board`'s SoC for `build` in Verilator, with the firmware the board runs (serving the host after its
    stored images) and the UART on TCP `port` (0: a free one): yields (its pyserial URL, the firmware's console
    up to the stored images' "done"). `hlsgen run DEPLOY --backend uart:URL` runs on it as on the board.
    `folder` (new) takes the RTL's copy, the firmware and the simulator's log."""
    from .soc_sim import serve_soc

    checked = check_soc_build(Path(build), board)
    _require_litex()
    require_gcc()
    top = _copy_rtl(checked, Path(folder) / "rtl")
    soc, firmware = _sim_firmware(checked, board, top, _board_images(checked, top), Path(folder), finish=False)
    with serve_soc(soc, firmware.words, top.memories, Path(folder) / "simulator.log", port) as served:
        yield served


def _sim_firmware(checked: SocBuild, board: SocBoard, top, images: np.ndarray, folder: Path, finish: bool):
    """The simulated SoC (finalized) and its firmware: `finish` ends the simulation after the images, the weight
    image in the simulated DRAM at reset (else the host uploads it, as to a board)."""
    from .soc import SimSoC

    dram = _dram_at_reset(top) if finish else None
    soc = SimSoC(top, rom_bytes(len(images), top.in_words), board, dram)
    soc.finalize()
    headers = firmware_headers(checked, top, images, board, finish=finish, weights_at_reset=dram is not None)
    return soc, build_firmware(soc, headers, folder / "firmware")


def _uploads_weights(top) -> bool:
    return top.memory is not None and top.memory.weights_bytes > 0


def _dram_at_reset(top) -> list[int] | None:
    """Main RAM's 32-bit words from its start up to the end of the weight image, which is at WEIGHTS_OFFSET."""
    if not _uploads_weights(top):
        return None
    image = (Path(top.mem_dir) / WEIGHTS_FILE).read_bytes()
    image += bytes(-len(image) % 4)
    return [0] * (WEIGHTS_OFFSET // 4) + np.frombuffer(image, "<u4").tolist()


def _simulate(checked: SocBuild, board: SocBoard, top, count: int, folder: Path) -> SimVerdict:
    from .soc_sim import simulate_soc

    soc, firmware = _sim_firmware(checked, board, top, checked.inputs[:count], folder, finish=True)
    run = simulate_soc(soc, firmware.words, top.memories, folder / "console.log")
    mismatches = []
    for i, want in enumerate(checked.outputs[:count]):
        expected = bytes(int(v) for v in want)
        got = run.inferences[i].outputs[:len(expected)] if i < len(run.inferences) else None
        if got != expected:
            mismatches.append(f"image {i}: SoC {got.hex() if got is not None else 'no answer'}, reference "
                              f"{expected.hex()}")
    verdict = SimVerdict(count, not mismatches, tuple(mismatches),
                         max(r.accelerator_cycles for r in run.inferences),
                         max(r.soc_cycles for r in run.inferences), run.build_s, run.run_s, run.built)
    (folder / "verdict.json").write_text(json.dumps({
        "images": count, "bit_exact": verdict.exact, "mismatches": list(mismatches),
        "accelerator_cycles": [r.accelerator_cycles for r in run.inferences],
        "soc_cycles": [r.soc_cycles for r in run.inferences]}, indent=1) + "\n")
    return verdict


def _write_readme(folder: Path, name: str, checked: SocBuild, board: SocBoard, top, verdict: SimVerdict | None,
                  figures: dict | None) -> None:
    context = dict(board=board, build=checked, version=__version__, verdict=verdict.line(board) if verdict else None,
                   figures=figures, deploy_name=name, host_id=model_id(top), control_base=CONTROL_BASE,
                   stored=len(_board_images(checked, top)),
                   input_bytes=4 * top.in_words,
                   upload_s=(checked.memory.weights_bytes if checked.memory else 0) * 10 / board.baud)
    (folder / "README.md").write_text(render_with(make_environment("deploy"), "deploy", "soc_README.md.j2", **context))
    record = {"board": board.name, "part": board.part, "target": checked.target, "top": checked.top,
              "clock_mhz": board.sys_clk_mhz, "model": checked.model, "hlsgen": __version__,
              "simulation": None if verdict is None else {"images": verdict.images, "bit_exact": verdict.exact,
                                                          "soc_cycles": verdict.soc_cycles,
                                                          "accelerator_cycles": verdict.accelerator_cycles},
              "bitstream": figures,
              # what hlsgen.runtime.uart needs to serve the board's firmware
              "host": {"board": board.name, "model_id": model_id(top), "in_words": top.in_words,
                       "in_width": top.in_width, "out_bytes": top.out_elems * top.out_width // 8, "block": BLOCK,
                       "baud": board.baud, "weights": f"rtl/{WEIGHTS_FILE}" if _uploads_weights(top) else None,
                       "input_pack": f"model/{INPUT_PACK}" if checked.input_pack is not None else None}}
    (folder / MARKER).write_text(json.dumps(record, indent=1) + "\n")


def _require_litex() -> None:
    try:
        import litedram  # noqa: F401
        import litex  # noqa: F401
        import litex_boards  # noqa: F401
        import pythondata_cpu_vexriscv  # noqa: F401
        import pythondata_software_compiler_rt  # noqa: F401
        import pythondata_software_picolibc  # noqa: F401
    except ImportError as exc:
        raise ToolError(f"the ECP5 boards' SoC needs LiteX ({exc.name} is not installed): pip install "
                        f"{LITEX_PACKAGES}") from None
