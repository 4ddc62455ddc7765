"""One configuration's build, as a dask worker runs it: the model, calibration and target travel with the
task (a worker needs only `pip install hlsgen`, no shared file system), the build goes to a private folder,
and what comes back is its row and its report files. Every failure is a row, never an exception."""
from __future__ import annotations

import json
import os
import socket
import tempfile
import time
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path

from .. import __version__
from ..errors import INTERNAL_ERROR_EXIT, HlsgenError
from .grid import Config

# what a finished task brings back of its build folder: the page the sweep's table links to and its data
KEPT_FILES = ("report.html", "report.json", "quant.json", "build.json", "bits.txt")


@dataclass(frozen=True)
class Inputs:
    """A model and what it is built with, as bytes: scattered to the cluster once, read by every task."""

    name: str  # the model's file name (its stem names the build)
    model: bytes
    calib: bytes | None = None
    input_range: tuple[float, float] | None = None
    max_accuracy_drop: float | None = None
    min_sqnr_db: float | None = None


@dataclass(frozen=True)
class Task:
    key: str  # hlsgen.sweep.cache.task_key: the row's file name and the cache's key
    model: str  # the model's path as the user gave it (rows and commands name it)
    config: Config
    target_yaml: str | None = None  # a target given as a file: its text (a name is built in)


@dataclass(frozen=True)
class Outcome:
    row: dict
    files: dict[str, bytes]


def run_task(task: Task, inputs: Inputs) -> Outcome:
    """Build `task` from `inputs` in a temporary folder; the row holds its figures or its error."""
    from ..build import BuildOptions, build

    start = time.monotonic()
    row = base_row(task)
    with tempfile.TemporaryDirectory(prefix="hlsgen-sweep-") as work:
        root = Path(work)
        model = root / inputs.name
        model.write_bytes(inputs.model)
        calib = None
        if inputs.calib is not None:
            calib = root / "calib.npz"
            calib.write_bytes(inputs.calib)
        target = task.config.target
        if task.target_yaml is not None:
            target = str(root / Path(task.config.target).name)
            Path(target).write_text(task.target_yaml)
        extra = {"synth": True} if task.config.synth else {}  # only asked for where BuildOptions has it (grid)
        options = BuildOptions(model, target, root / "build", calib, task.config.bits, inputs.max_accuracy_drop,
                               inputs.min_sqnr_db, inputs.input_range, verify=task.config.verify,
                               batch=task.config.batch, **extra)
        files: dict[str, bytes] = {}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = build(options)
            row.update(figures(result.quality, json.loads((root / "build" / "report.json").read_text())))
            files = {name: (root / "build" / name).read_bytes() for name in KEPT_FILES
                     if (root / "build" / name).is_file()}
        except HlsgenError as exc:
            row.update(status="failed", exit_code=exc.exit_code, category=type(exc).__name__,
                       error=str(exc).replace(str(root), "<build>"))
        except Exception as exc:  # a bug in hlsgen: one row says so, the sweep goes on
            row.update(status="failed", exit_code=INTERNAL_ERROR_EXIT, category="InternalError",
                       error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc(limit=-3))
    row["seconds"] = round(time.monotonic() - start, 2)
    return Outcome(row, files)


def base_row(task: Task) -> dict:
    c = task.config
    return {"key": task.key, "model": task.model, "target": Path(c.target).stem, "bits": c.bits, "batch": c.batch,
            "verify": ",".join(c.verify) or "none", "synth": c.synth, "status": "ok", "exit_code": 0,
            "category": "", "error": "", "hlsgen": __version__, "worker": f"{socket.gethostname()}:{os.getpid()}"}


def figures(quality: dict, report: dict) -> dict:
    """A build's row: quality, performance, memory, resources, verification and synthesis results."""
    total = report["total"]
    resources = total.get("resources", {})
    row = {"sqnr_db": min(quality["sqnr_db"].values()), "float_accuracy": quality.get("float_accuracy"),
           "int_accuracy": quality.get("int_accuracy"), "cycles": total["cycles"],
           "cycles_per_image": total.get("cycles_per_image"), "latency_us": total.get("latency_us"),
           "images_per_s": total.get("images_per_s"), "clock_mhz": total.get("clock", {}).get("mhz"),
           "utilization": total["utilization"], "dram_bytes": total.get("dram_bytes"),
           "weight_bits": total.get("weight_storage", {}).get("bits"),
           **{key: resources.get(key) for key in ("dsp", "lut", "ff", "bram_18k")},
           "fits": total.get("fit", {}).get("ok")}
    for check, verdict in report.get("verification", {}).items():
        row[check] = "bit-exact" if verdict["passed"] else "mismatch"
    synth = report.get("synth")
    if synth:
        measured = synth.get("measured", {})
        row.update(fmax_mhz=synth.get("fmax_mhz"),
                   **{f"synth_{k}": measured.get(k) for k in ("lut", "ff", "dsp", "bram")})
    return row
