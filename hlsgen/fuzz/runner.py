"""One model through every check, and many in a pool of worker processes.

`check` runs the float reference against onnxruntime (1e-4 relative, on the float twin: onnxruntime does not
run QONNX, and a QDQ rounding boundary that float sums cross differently is no bug), then `hlsgen build
--verify csim[,rtl]`, whose integer reference, C-sim and RTL must agree bit for bit. The outcome is ok,
rejected (a user-facing error: the message is kept), mismatch (float off, or exit 5) or crash (anything else,
a timeout or a killed worker included)."""
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
from ..hls.csim import PORTABLE_ENV
from ..reference import run_graph
from ..rtl.sim import sim_build_dir, simulate
from .onnx_model import INPUT, OUTPUT
from .spec import ModelSpec

OUTCOMES = ("ok", "rejected", "mismatch", "crash")
FLOAT_RTOL = 1e-4
CANCELLATION = 1e-2  # see float_error
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
    onnx.save(spec.to_onnx(), folder / "model.onnx")
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
    return (f"hlsgen build model.onnx --target {target} --calib calib.npz --bits {spec.bits} "
            f"--program {spec.program} --verify {checks} -o out")


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
                               str(spec.bits), program=spec.program, verify=("csim",))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            build(options)
            if rtl:
                simulate(options.out, images=rtl_images(options.out), build_root=sim_build_dir())
    except MismatchError as exc:
        return Result(spec.seed, "mismatch", "build", _line(exc), time.perf_counter() - start, rtl)
    except HlsgenError as exc:
        return Result(spec.seed, "rejected", "build", f"exit {exc.exit_code}: {_line(exc)}", time.perf_counter() - start, rtl)
    except Exception as exc:  # noqa: BLE001 - any other exception is what the fuzzer looks for
        where = traceback.extract_tb(exc.__traceback__)[-1]
        return Result(spec.seed, "crash", "build", f"{type(exc).__name__}: {_line(exc)} "
                      f"({Path(where.filename).name}:{where.lineno})", time.perf_counter() - start, rtl)
    return Result(spec.seed, "ok", "", "", time.perf_counter() - start, rtl)


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
    model = spec.float_twin().to_onnx()
    graph = import_model(model)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    worst = 0.0
    for sample in spec.calibration():
        values = run_graph(graph, {INPUT: sample[None]}, keep_all=True)
        ours = values[OUTPUT].astype(np.float64)
        theirs = session.run([OUTPUT], {INPUT: sample[None]})[0]
        if ours.shape != theirs.shape:
            return float("inf")
        inside = max(float(np.abs(v).max(initial=0.0)) for k, v in values.items() if k not in graph.constants)
        scale = max(float(np.abs(theirs).max(initial=0.0)), CANCELLATION * inside, 1e-6)
        worst = max(worst, float(np.abs(ours - theirs).max(initial=0.0)) / scale)
    return worst


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
