"""One model through every check, and many in a pool of worker processes.

`check` runs the float reference against onnxruntime (1e-4 relative, on the float twin: onnxruntime does not
run QONNX, and a QDQ rounding boundary that float sums cross differently is no bug; a model hlsgen cannot
import whole, one with host ops, instead has its folded form run by onnxruntime against the original: fold
equality), then `hlsgen build --verify csim[,rtl]`, whose integer reference, C-sim and RTL must agree bit for
bit (a model partitioned between host and accelerator: every segment, and the RTL of each segment that has
RTL). A model with the exporter-like features (ModelSpec.extended) then runs whole, host stages included,
from its build folder on the stored inputs (hlsgen.partition.whole), and each output must be within
quantization noise of onnxruntime on the original model (whole_error: SQNR >= whole_floor_db). The outcome is
ok, rejected (a user-facing error: the message is kept; a partition over --max-host-macs is one), mismatch
(float or fold off, exit 5, or the whole model off) or crash (anything else, a timeout or a killed worker
included)."""
from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
import time
import traceback
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

from ..build import BuildOptions, build
from ..errors import HlsgenError, MismatchError
from ..frontend import import_model
from ..frontend.fold import fold_shape_code
from ..partition.whole import SingleBuild, WholeModel, is_partitioned, segment_folder
from ..quant.report import sqnr_db
from ..hls.csim import PORTABLE_ENV
from ..reference import run_graph
from ..rtl.sim import sim_build_dir, simulate
from .onnx_model import INPUT, spec_to_onnx
from .spec import ModelSpec

OUTCOMES = ("ok", "rejected", "mismatch", "crash")
FLOAT_RTOL = 1e-4
CANCELLATION = 1e-2  # see float_error
# whole_floor_db: the least SQNR of a whole model's outputs (host ops included) against onnxruntime, by bits.
# 300 ci seeds' extended models measured at least 22 dB at 8 and 7 bits, 10.5 at 6; at 5 bits and fewer a
# correct model reaches 0 dB (a Clip bound rounded a whole step up): no floor there, the other checks remain
WHOLE_SQNR_DB = {8: 10.0, 7: 8.0, 6: 4.0}
RTL_CYCLES = 3_000_000  # simulated cycles one model's RTL check may take: see rtl_images


@dataclass(frozen=True)
class Result:
    seed: int
    outcome: str
    stage: str = ""  # float, build (csim/rtl mismatches name themselves in the message)
    message: str = ""
    seconds: float = 0.0
    rtl: bool = False


def write_inputs(spec: ModelSpec, folder: Path) -> dict[str, str]:
    """model.onnx, calib.npz, spec.json and (for a random target) target.yaml in `folder`: what a build reads."""
    folder.mkdir(parents=True, exist_ok=True)
    onnx.save(spec_to_onnx(spec), folder / "model.onnx")
    np.savez(folder / "calib.npz", **{INPUT: spec.calibration()})
    (folder / "spec.json").write_text(spec.to_json() + "\n")
    target = spec.target.builtin
    if target is None:
        (folder / "target.yaml").write_text(spec.target.to_yaml())
        target = "target.yaml"
    return {"model": "model.onnx", "calib": "calib.npz", "target": target}


def build_command(spec: ModelSpec, rtl: bool) -> str:
    """The one command that replays the build inside a reproducer folder."""
    target = spec.target.builtin or "target.yaml"
    checks = "csim,rtl" if rtl else "csim"
    shapes = "".join(f" --input-shape {name}:{'x'.join(map(str, dims))}" for name, dims in spec.input_shapes())
    return (f"hlsgen build model.onnx --target {target} --calib calib.npz --bits {spec.bits} "
            f"--program {spec.program}{shapes} --verify {checks} -o out")


def check(spec: ModelSpec, workdir: Path, rtl: bool = False) -> Result:
    start = time.perf_counter()
    workdir = Path(workdir)
    try:
        files = write_inputs(spec, workdir)
        off = float_error(spec)
        if off > FLOAT_RTOL:
            return Result(spec.seed, "mismatch", "float", f"float reference vs onnxruntime: relative error {off:.3g} "
                          f"> {FLOAT_RTOL}", time.perf_counter() - start, rtl)
        target = files["target"] if spec.target.builtin else str(workdir / files["target"])
        options = BuildOptions(workdir / files["model"], target, workdir / "out", workdir / files["calib"],
                               str(spec.bits), program=spec.program, verify=("csim",),
                               input_shapes=spec.input_shapes())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            build(options)
            if rtl:
                for folder in rtl_folders(options.out):
                    simulate(folder, images=rtl_images(folder), build_root=sim_build_dir())
            if spec.extended:
                bad = whole_error(spec, workdir / files["model"], options.out)
                if bad:
                    return Result(spec.seed, "mismatch", "whole", bad, time.perf_counter() - start, rtl)
    except MismatchError as exc:
        return Result(spec.seed, "mismatch", "build", _line(exc), time.perf_counter() - start, rtl)
    except HlsgenError as exc:
        return Result(spec.seed, "rejected", "build", f"exit {exc.exit_code}: {_line(exc)}", time.perf_counter() - start, rtl)
    except Exception as exc:  # noqa: BLE001 - any other exception is what the fuzzer looks for
        where = traceback.extract_tb(exc.__traceback__)[-1]
        return Result(spec.seed, "crash", "build", f"{type(exc).__name__}: {_line(exc)} "
                      f"({Path(where.filename).name}:{where.lineno})", time.perf_counter() - start, rtl)
    return Result(spec.seed, "ok", "", "", time.perf_counter() - start, rtl)


def rtl_folders(out: Path) -> list[Path]:
    """The build folders whose RTL the check simulates: the build's own; of a partitioned build, every segment
    that has RTL (report.json of a segment without says why)."""
    out = Path(out)
    if not is_partitioned(out):
        return [out]
    segments = json.loads((out / "report.json").read_text())["segments"]
    return [segment_folder(out, name) for name in segments if (segment_folder(out, name) / "rtl").is_dir()]


def rtl_images(out: Path) -> int:
    """How many of the build's test images the RTL simulates: all of them, unless that takes more than
    RTL_CYCLES simulated cycles, then as many as fit (at least one). A model whose maps stream through
    external memory runs at about 17k cycles/s in Verilator with cocotb's Python AXI RAM (32x32 array), so
    15 images of 0.8M cycles took 12 minutes: a timeout, and no verdict, under the long profile's budget."""
    cycles = json.loads((Path(out) / "report.json").read_text())["total"]["cycles"]
    with np.load(Path(out) / "verify" / "int_inputs.npz") as stored:
        samples = len(stored[stored.files[0]])
    return max(1, min(samples, RTL_CYCLES // max(cycles, 1)))


def float_error(spec: ModelSpec) -> float:
    """Largest relative difference between hlsgen's float reference and onnxruntime over the samples.

    Relative to the output's largest magnitude, or to CANCELLATION of the largest value inside the model if
    that is more: an output that sums terms 1,000 times its size (a last Dense whose products cancel) is as
    exact in float32 as those terms are, and two correct float32 executions differ that much there."""
    model = spec_to_onnx(spec.float_twin())
    try:
        graph = import_model(model, input_shapes=dict(spec.input_shapes()))
    except HlsgenError:  # host ops: hlsgen runs the model in parts, the folded model in onnxruntime
        return fold_error(spec)
    session = _session(model)
    names = [o.name for o in model.graph.output]
    worst = 0.0
    for sample in spec.calibration():
        values = run_graph(graph, {INPUT: sample[None]}, keep_all=True)
        inside = max(float(np.abs(v).max(initial=0.0)) for k, v in values.items() if k not in graph.constants)
        for name, theirs in zip(names, session.run(names, {INPUT: sample[None]})):
            ours = values[name].astype(np.float64)
            if ours.shape != theirs.shape:
                return float("inf")
            scale = max(float(np.abs(theirs).max(initial=0.0)), CANCELLATION * inside, 1e-6)
            worst = max(worst, float(np.abs(ours - theirs).max(initial=0.0)) / scale)
    return worst


def fold_error(spec: ModelSpec) -> float:
    """Largest relative difference between onnxruntime on the float twin folded as the build folds it (input
    shape pinned, shape code as constants: hlsgen.frontend.fold) and on the twin as generated; an integer
    output (ArgMax, TopK indices) must be equal."""
    model = spec_to_onnx(spec.float_twin())
    folded = fold_shape_code(model, dict(spec.input_shapes()))
    names = [o.name for o in model.graph.output]
    original, ours = _session(model), _session(folded)
    worst = 0.0
    for sample in spec.calibration():
        for a, b in zip(original.run(names, {INPUT: sample[None]}), ours.run(names, {INPUT: sample[None]})):
            if a.shape != b.shape or a.dtype != b.dtype:
                return float("inf")
            if not np.issubdtype(a.dtype, np.floating):
                worst = max(worst, float("inf") if np.any(a != b) else 0.0)
                continue
            scale = max(float(np.abs(a).max(initial=0.0)), 1e-6)
            worst = max(worst, float(np.abs(a.astype(np.float64) - b).max(initial=0.0)) / scale)
    return worst


def whole_floor_db(spec: ModelSpec) -> float:
    """The least SQNR a whole model's output may have against onnxruntime on the original: quantization noise
    at `bits`, with margin for outputs that amplify it (an Exp decode, an InstanceNormalization of a near-flat
    map); a boundary tensor quantized with a wrong scale, a wrong layout or a host stage fed the wrong tensor
    lands far below (about 0 dB or less)."""
    return WHOLE_SQNR_DB.get(spec.bits if spec.annotation != "qdq" else 8, float("-inf"))


def whole_error(spec: ModelSpec, model_path: Path, out: Path) -> str:
    """'' when every output of the whole model, run from build folder `out` (WholeModel, or SingleBuild when
    the accelerator took it all) on its stored inputs, has onnxruntime's shape, finite values where onnxruntime's
    are, and is within whole_floor_db of onnxruntime on the original model (the float twin for QONNX, which
    onnxruntime does not run); a partitioned model's run must also repeat the build's own (verify/outputs.npz)
    exactly. Else what is off. An integer output
    (ArgMax, TopK indices) is judged by what it picks: the values onnxruntime's model has at the picked
    indices against the values at its own picks (a near tie picked either way costs nothing)."""
    out = Path(out)
    if is_partitioned(out):
        with np.load(out / "verify" / "inputs.npz") as stored:
            inputs = {k: stored[k] for k in stored.files}
        ours = WholeModel(out).run(inputs)
        with np.load(out / "verify" / "outputs.npz") as stored:  # what the build measured: the same run
            differ = [k for k in stored.files if k in ours and not np.array_equal(stored[k], ours[k])]
        if differ:
            return f"whole model: a second run differs from the build's verify/outputs.npz in {differ}"
    else:
        inputs = {INPUT: spec.calibration()}
        ours = SingleBuild(out).run(inputs)
    model = onnx.load(str(model_path)) if spec.annotation != "qonnx" else spec_to_onnx(spec.float_twin())
    names = [o.name for o in model.graph.output]
    producers = {o: n for n in model.graph.node for o in n.output}
    picked = {name: producers[name] for name in names if producers.get(name) is not None
              and producers[name].op_type in ("ArgMax", "TopK") and name == producers[name].output[-1]}
    extra = [n.input[0] for n in picked.values() if n.input[0] not in names]
    probe = onnx.ModelProto.FromString(model.SerializeToString())
    probe.graph.output.extend(onnx.ValueInfoProto(name=n) for n in extra)
    session = _session(probe)
    wanted = names + extra
    rows = [session.run(wanted, {INPUT: inputs[INPUT][i:i + 1]}) for i in range(len(inputs[INPUT]))]
    theirs = {name: np.concatenate([r[j] for r in rows]) for j, name in enumerate(wanted)}
    floor = whole_floor_db(spec)
    problems = []
    for name in names:
        mine = np.asarray(ours.get(name))
        if mine.shape != theirs[name].shape:
            problems.append(f"{name}: shape {mine.shape} != onnxruntime's {theirs[name].shape}")
            continue
        if name in picked:
            reference, approximation = _picks(picked[name], theirs, mine)
        else:
            reference, approximation = theirs[name], mine
        if not np.all(np.isfinite(approximation)) and np.all(np.isfinite(reference)):
            problems.append(f"{name}: not finite")
            continue
        db = sqnr_db(reference, approximation)
        if db < floor:
            problems.append(f"{name}: SQNR {db:.1f} dB < {floor:g} dB")
    return f"whole model vs onnxruntime: {'; '.join(problems)}" if problems else ""


def _picks(node: onnx.NodeProto, theirs: dict[str, np.ndarray], indices: np.ndarray):
    """onnxruntime's values at its own picks, and at `indices` (ours) of ArgMax/TopK `node`."""
    values = theirs[node.input[0]]
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    if node.op_type == "TopK":
        flat = values.reshape(len(values), -1)
        return theirs[node.output[0]], np.take_along_axis(flat, np.clip(indices, 0, flat.shape[1] - 1), axis=-1)
    axis = attrs.get("axis", 0) % values.ndim
    index = indices if attrs.get("keepdims", 1) else np.expand_dims(indices, axis)
    index = np.clip(index, 0, values.shape[axis] - 1)
    return values.max(axis=axis, keepdims=True), np.take_along_axis(values, index, axis=axis)


def _session(model: onnx.ModelProto):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3  # no warnings about the shape code's initializers folding leaves unused
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def _line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


# ---- the pool ----
def run_all(jobs: list[tuple[ModelSpec, bool]], root: Path, workers: int = 1, timeout: float = 300.0,
            keep: bool = False, progress=None, portable: bool = False) -> list[Result]:
    """Check every (spec, rtl) in its own forked process (its own folder under `root`, its own process group so
    a timeout kills its compilers too), `workers` at a time. The results come back in the order of `jobs` and
    do not depend on `workers`. A worker slot keeps its own Verilator builds (HLSGEN_SIM_BUILD), so the RTL of
    models built for one target with --program external is Verilated once per slot. `portable`: the models
    without RTL compile their C-sim against hlsgen's portable ap_int headers (a seventh of the vendor headers'
    compile time); the RTL models keep the vendor's."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    context = multiprocessing.get_context("fork")
    pending = list(enumerate(jobs))
    running: dict[int, tuple[int, multiprocessing.Process, float, Path]] = {}  # slot -> job index, process, start
    results: list[Result | None] = [None] * len(jobs)
    while pending or running:
        for slot in range(workers):
            if slot in running or not pending:
                continue
            index, (spec, rtl) = pending.pop(0)
            folder = root / f"model-{index}"
            shutil.rmtree(folder, ignore_errors=True)
            process = context.Process(target=_worker, args=(spec, rtl, folder, root / f"verilator-{slot}",
                                                            portable and not rtl))
            process.start()
            running[slot] = (index, process, time.perf_counter(), folder)
        time.sleep(0.05)
        for slot, (index, process, started, folder) in list(running.items()):
            late = time.perf_counter() - started > timeout
            if process.is_alive() and not late:
                continue
            if late:
                _kill(process)
            spec, rtl = jobs[index]
            results[index] = _collect(spec, rtl, folder, process.exitcode, late, time.perf_counter() - started)
            del running[slot]
            if not keep:
                shutil.rmtree(folder, ignore_errors=True)
            if progress is not None:
                progress(results[index])
    return results  # type: ignore[return-value]


def _worker(spec: ModelSpec, rtl: bool, folder: Path, verilator: Path, portable: bool) -> None:
    os.setpgid(0, 0)
    os.environ["HLSGEN_SIM_BUILD"] = str(verilator)
    if portable:
        os.environ[PORTABLE_ENV] = "1"
    result = check(spec, folder, rtl)
    (folder / "result.json").write_text(json.dumps(asdict(result)))
    os._exit(0)  # skip the parent's atexit handlers and buffers inherited through fork


def _kill(process) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.join()


def _collect(spec: ModelSpec, rtl: bool, folder: Path, exitcode, late: bool, seconds: float) -> Result:
    if late:
        return Result(spec.seed, "crash", "timeout", f"no verdict after {seconds:.0f} s", seconds, rtl)
    try:
        return Result(**json.loads((folder / "result.json").read_text()))
    except (OSError, ValueError):
        return Result(spec.seed, "crash", "worker", f"the worker died (exit code {exitcode})", seconds, rtl)
