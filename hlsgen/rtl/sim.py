"""`hlsgen sim`: the whole-model RTL simulation of a build folder, bit-exact against the integer reference.

The generated top and its stream testbench (OUT/rtl/) are built by Verilator once per content: the build
is cached under $HLSGEN_CACHE/verilator (~/.cache/hlsgen/verilator), or $HLSGEN_SIM_BUILD, in a folder named
after the testbench, the target and the hash of its sources and parameters. The target's own top
(`--program external`) is the same Verilog for every model, so a second model's simulation builds nothing.
The testbench streams every input image through the top at one element per beat and
logs each output integer and the cycles of every step, which this module compares and records in
OUT/report.json. A --batch N build runs N images a run: the last run is padded with zero images, whose
outputs are not compared.
"""
from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from ..build_folder import load_build
from ..errors import DataError, MismatchError, TargetError, ToolError
from ..hw import load_target, report_json
from ..hw.cycles import utilization
from ..hw.program_io import read_program
from ..npz_io import read_npz
from ..paths import cache_dir, replace_text
from ..progress import Step, silent
from .cocotb_model import DRAM_VAR, FMAP_VAR, PROGRAM_VAR, WEIGHTS_VAR
from .fmap_dma import image_bytes, input_words
from .program import compile_program
from .render import write_rtl
from .runner import Design, build, prune, run
from .trace import first_difference

KEEP_BUILDS = 6  # recently used Verilator builds kept per testbench and target
MAX_IMAGES = 1024  # images one testbench build holds; more rebuild it larger
CYCLE_BUDGET = 50  # the simulation times out after this many times the model's cycles per image


@dataclass
class SimResult:
    images: int
    compared: int  # output integers
    cycles: list[int]  # per run of `batch` images, its first input beat to its last output beat
    layer_cycles: dict[str, int]  # per RTL layer, of the first image
    input_cycles: int
    model_cycles: int
    build_seconds: float
    run_seconds: float  # the whole simulator process
    sim_seconds: float  # the simulation itself (cocotb's real time), without start-up
    mismatches: list[str] = field(default_factory=list)  # "image i element k: rtl v, reference w"
    load_cycles: int | None = None  # --program external: the program's load (CONTROL.load to its end)
    batch: int = 1  # images per run

    @property
    def cycles_per_inference(self) -> int:
        return max(self.cycles)


def simulate(folder: Path, inputs: Path | None = None, images: int | None = None,
             build_root: Path | None = None, step: Step = silent, backpressure: bool = False) -> SimResult:
    """Simulate the build folder's RTL on its stored test vectors (or the samples of `inputs`). The
    Verilator build is cached under `build_root`, else the user's cache (module docstring); `step`
    reports the Verilator build and the simulation as they run. Weights in external memory come from an
    AXI RAM at the target's sustained rate, with `backpressure` also pausing a random half of the beats."""
    folder = Path(folder)
    quantized = load_build(folder)
    target = build_target(folder)
    graph = quantized.graph
    if inputs is not None:
        int_inputs = quantized.quantize_inputs(read_npz(inputs))
    else:
        int_inputs = dict(np.load(folder / "verify" / "int_inputs.npz"))
    if images is not None:
        int_inputs = {k: v[:images] for k, v in int_inputs.items()}
    reference = quantized.run_int(int_inputs)
    expected = [(t, np.asarray(reference[t])) for t in graph.outputs]  # streamed one after another, in this order
    count = int(expected[0][1].shape[0])
    if count == 0:
        raise DataError("no input images to simulate")

    mapping = read_program(folder, graph, target)
    program = compile_program(mapping, graph)
    files = write_rtl(program, folder / "rtl")
    work = folder / "sim"
    work.mkdir(exist_ok=True)
    for memory in files.memories:
        shutil.copyfile(memory, work / memory.name)
    bits = target.widths.operand_bits
    flat = np.concatenate([np.asarray(int_inputs[t], np.int64).reshape(count, -1) for t in graph.inputs],
                          axis=1) & ((1 << bits) - 1)  # an image's inputs one after another
    flat = np.concatenate([flat, np.zeros((-count % program.images, flat.shape[1]), np.int64)])  # whole runs
    (work / "inputs.mem").write_text("".join(f"{v:x}\n" for v in flat.ravel()))
    log = work / "sim.log"
    log.unlink(missing_ok=True)

    capacity = max(MAX_IMAGES, 1 << (count - 1).bit_length())  # a power of two: few distinct builds
    parameters, model_args = {"MAX_IMAGES": capacity}, []
    if program.overlay is not None:  # the overlay's testbench learns the model's input from plusargs
        parameters["MAX_INPUT"] = max(1 << 20, 1 << (flat.size - 1).bit_length())
        model_args = [f"+in_elems={flat.shape[1]}", f"+in_dram={int(program.input_in_dram)}"]
    plusargs = [f"+images={len(flat)}", *model_args]
    root, name = Path(build_root) if build_root else cache_dir("verilator"), f"{files.tb}_{target.name}"
    design = Design(files.tb, list(files.sources), root, parameters)
    design.build_dir = root / f"{name}_{design.fingerprint()[:12]}"
    try:
        with step("Verilator build of the RTL"):
            build_seconds = build(design, log_file=work / "build.log")
        prune(root, name, KEEP_BUILDS)
        start = time.perf_counter()
        env = {"HLSGEN_SIM_CYCLES": str(CYCLE_BUDGET * mapping.cycles * count + 10_000)}
        if files.weight_image is not None:
            env |= {WEIGHTS_VAR: str(files.weight_image.resolve())}
        if files.program_image is not None:
            env |= {PROGRAM_VAR: str(files.program_image.resolve())}
        if program.fmaps_external:
            env |= {FMAP_VAR: _fmap_setting(program, int_inputs[graph.inputs[0]], work)}
        if files.weight_image is not None or program.fmaps_external:
            env |= {DRAM_VAR: f"{target.external_memory.bytes_per_cycle} {int(backpressure)}"}
        with step(f"RTL simulation of {count} image(s)"):
            tests, failed = run(design, "hlsgen.rtl.cocotb_model", work, env, log_file=work / "run.log",
                                plusargs=plusargs)
        run_seconds = time.perf_counter() - start
    except (SystemExit, RuntimeError) as exc:  # cocotb's runner exits (older) or raises (newer) when a tool fails
        why = f"exit {exc.code}" if isinstance(exc, SystemExit) else str(exc)
        raise ToolError(f"the Verilator build or simulation failed ({why}); see {work}/build.log and "
                        f"{work}/run.log") from None
    if tests == 0 or failed:
        raise MismatchError(f"the RTL simulation did not finish (see {work}/run.log)")
    sim_seconds = _simulation_time(work / "run.log") or run_seconds
    result = _compare(_parse(log), expected, program, target, mapping, count, build_seconds, run_seconds, sim_seconds)
    _record(folder / "report.json", result, program, mapping, backpressure)
    if result.mismatches and program.images > 1:
        raise MismatchError(f"rtl: {len(result.mismatches)} output integer(s) differ from the integer reference: "
                            + "; ".join(result.mismatches[:3]))
    if result.mismatches:
        image = int(result.mismatches[0].split()[1])
        with step(f"RTL trace of image {image} to find the first wrong layer"):
            where = _first_wrong_layer(design, work, env, program, int_inputs, image, model_args)
        raise MismatchError(f"rtl: {len(result.mismatches)} output integer(s) differ from the integer reference: "
                            + "; ".join(result.mismatches[:3]) + (f"; first wrong value: {where}" if where else ""))
    return result


def _fmap_setting(program, images: np.ndarray, work: Path) -> str:
    """The feature-map RAM's size and, when the input lives in it, where and what each image is (a file)."""
    if not program.input_in_dram:
        return f"{image_bytes(program)} 0 0 -"
    offset, words = input_words(program, images)
    path = work / "fmap_inputs.bin"
    path.write_bytes(words)
    return f"{image_bytes(program)} {offset} {len(words) // len(images)} {path.resolve()}"


def _first_wrong_layer(design: Design, work: Path, env: dict, program, int_inputs: dict, image: int,
                       model_args: list[str]) -> str | None:
    """Simulate up to `image` again, logging every activation write, and name the first wrong value."""
    trace = work / "trace.log"
    run(design, "hlsgen.rtl.cocotb_model", work, env, log_file=work / "trace_run.log",
        plusargs=[f"+images={image + 1}", "+trace=1", *model_args])
    (work / "sim.log").replace(trace)
    return first_difference(program, trace.read_text().splitlines(), int_inputs, image)


def build_target(folder: Path):
    """The build's target: as given to `hlsgen build` (a name or a .yaml path, from OUT/config.yaml), else
    the built-in target of that name (OUT/build.json)."""
    names = []
    if (folder / "config.yaml").is_file():
        names.append(str((yaml.safe_load((folder / "config.yaml").read_text()) or {}).get("target", "")))
    names.append(json.loads((folder / "build.json").read_text())["target"])
    for name in filter(None, names):
        try:
            return load_target(name)
        except TargetError:
            continue
    raise TargetError(f"{folder}: cannot find its target {names[-1]!r} (a target .yaml moved since the build?)")


def _parse(log: Path) -> dict:
    """The testbench log as {"out": {image: {index: raw}}, "image": {image: cycles}, "layer": ..., "in": ...}."""
    parsed: dict = {"out": {}, "image": {}, "run": {}, "layer": {}, "move": {}, "in": {}, "load": None}
    for line in log.read_text().splitlines():
        kind, *values = line.split()
        numbers = [int(v) for v in values]
        if kind == "out":
            parsed["out"].setdefault(numbers[0], {})[numbers[1]] = numbers[2]
        elif kind in ("layer", "move"):
            parsed[kind].setdefault(numbers[0], {})[numbers[1]] = numbers[2]
        elif kind in ("image", "run", "in"):
            parsed[kind][numbers[0]] = numbers[1]
        elif kind == "load":
            parsed["load"] = numbers[0]
    return parsed


def _simulation_time(run_log: Path) -> float | None:
    """The REAL TIME column of cocotb's summary line for the test (seconds spent simulating)."""
    for line in run_log.read_text(errors="replace").splitlines():
        fields = line.replace("*", " ").split()
        if len(fields) >= 5 and fields[0].endswith("stream_images") and fields[1] in ("PASS", "FAIL"):
            return float(fields[3])
    return None


def _compare(parsed: dict, expected: list[tuple[str, np.ndarray]], program, target, mapping, count: int,
             build_seconds: float, run_seconds: float, sim_seconds: float) -> SimResult:
    """Each output against the integer reference's, in turn: an image's beats are the outputs' elements one
    output after another (graph-output order), each in the single output's order; a mismatch names its output
    (when the model has several) and the element's index within it."""
    bits = target.widths.operand_bits
    mismatches = []
    several = len(expected) > 1
    compared = 0
    for i in range(count):
        got = parsed["out"].get(i, {})
        first = 0  # the output's first beat of the image
        for (name, want_all), fmap in zip(expected, program.outputs):
            flat = want_all.reshape(count, -1)[i]
            for k, want in enumerate(flat):
                raw = got.get(first + k)
                value = None if raw is None else (raw - (1 << bits) if fmap.quant.signed and raw >> (bits - 1) else raw)
                if value != int(want):
                    where = f"output {name!r} element {k}" if several else f"element {k}"
                    mismatches.append(f"image {i} {where}: rtl {value}, reference {int(want)}")
            first += flat.size
        compared += first
        if len(got) > first:  # beats past the last output's
            mismatches.append(f"image {i}: the RTL sent {len(got)} output integers, the outputs hold {first}")
    cycles = [parsed["run"].get(i, 0) for i in range(-(-count // program.images))]
    # a layer: from the end of the layer before it (its wait for its loads included); a move: its own cycles;
    # a grouped conv's chunks are table rows of one program row: summed
    layer_cycles: dict[str, int] = {}
    for kind, rows in (("layer", program.compute), ("move", program.moves)):
        for i, row in enumerate(rows):
            layer_cycles[row.name] = layer_cycles.get(row.name, 0) + parsed[kind].get(0, {}).get(i, 0)
    return SimResult(count, compared, cycles, layer_cycles, parsed["in"].get(0, 0), mapping.cycles,
                     build_seconds, run_seconds, sim_seconds, mismatches, parsed["load"], program.images)


def _record(path: Path, result: SimResult, program, mapping, backpressure: bool) -> None:
    """The RTL's measured figures in report.json, beside the model's and never in their place (`total` and
    `layers` stay modelled): `rtl_simulation.without_backpressure` or `.with_backpressure`, each run of
    `hlsgen sim` replacing its own mode's."""
    report = json.loads(path.read_text()) if path.is_file() else report_json(mapping)
    rows, cols = program.rows, program.cols
    macs = {entry["name"]: entry["macs"] for entry in report.get("layers", [])}
    layers = {name: {"cycles": cycles, "utilization": round(utilization(macs[name], cycles, rows, cols), 4)}
              for name, cycles in result.layer_cycles.items() if name in macs}  # a Reshape's row has no RTL layer
    measured = {
        "images": result.images, "output_integers": result.compared, "bit_exact": not result.mismatches,
        "cycles": result.cycles_per_inference, "cycles_model": result.model_cycles,
        "utilization": round(utilization(mapping.macs, result.cycles_per_inference, rows, cols), 4),
        "input_cycles": result.input_cycles, "layers": layers, "batch": result.batch,
        "cycles_per_image": round(result.cycles_per_inference / result.batch, 1),
        "verilator_build_s": round(result.build_seconds, 2), "run_s": round(result.run_seconds, 2),
        "simulation_s": round(result.sim_seconds, 3),
        "simulated_cycles_per_s": round(sum(result.cycles) / max(result.sim_seconds, 1e-3)),
    }
    if result.load_cycles is not None:
        measured["program_load_cycles"] = result.load_cycles
    mode = "with_backpressure" if backpressure else "without_backpressure"
    report.setdefault("rtl_simulation", {})[mode] = measured
    replace_text(path, json.dumps(report, indent=1) + "\n")


def sim_build_dir() -> Path | None:
    """HLSGEN_SIM_BUILD: a folder that keeps the Verilator builds instead of $HLSGEN_CACHE/verilator."""
    value = os.environ.get("HLSGEN_SIM_BUILD")
    return Path(value) if value else None
