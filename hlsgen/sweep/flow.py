"""`hlsgen sweep` and `hlsgen regress`: the jobs of a sweep folder, run on a cluster, written as tables."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..errors import HlsgenError, PathError
from ..hw import load_target
from ..paths import require_file
from .cache import target_text, task_key
from .grid import Axes
from .page import write_index
from .runner import Cluster, Progress, run_tasks
from .table import write_csv, write_junit, write_parquet
from .task import Inputs, Task

MARKER = "sweep.json"


@dataclass(frozen=True)
class Calibration:
    """What every model of the sweep is calibrated with (a regression's model may bring its own npz)."""

    calib: Path | None = None
    input_range: tuple[float, float] | None = None
    max_accuracy_drop: float | None = None
    min_sqnr_db: float | None = None


@dataclass(frozen=True)
class Outcome:
    rows: list[dict]
    files: list[Path]

    @property
    def failed(self) -> list[dict]:
        return [r for r in self.rows if r["status"] != "ok"]


class SweepFailed(HlsgenError):
    """`hlsgen regress` with failing rows: exits with the first failure's own code."""

    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.exit_code = exit_code


def run_sweep(models: list[tuple[Path, Path | None]], axes: Axes, calibration: Calibration, out: Path,
              cluster: Cluster, title: str, progress: Callable[[Progress], None] = lambda p: None) -> Outcome:
    """Every model (with its calibration npz, or None for `calibration`'s) on every configuration of
    `axes`; writes OUT/results.csv (+ .parquet), OUT/index.html and OUT/junit.xml."""
    configs = axes.configs()
    _check_out(out)
    targets = {}
    for target in axes.targets:  # an unknown target stops the sweep before any work (exit 9)
        load_target(target)
        targets[target] = target_text(target)
    jobs = []
    for model, calib in models:
        inputs = _inputs(model, calib or calibration.calib, calibration)
        for config in configs:
            description, yaml_text = targets[config.target]
            jobs.append((Task(task_key(inputs, config, description), str(model), config, yaml_text), inputs))
    out.mkdir(parents=True, exist_ok=True)  # only now: a refused sweep leaves no folder behind
    (out / MARKER).write_text(json.dumps({"title": title}, indent=1) + "\n")
    rows = run_tasks(jobs, out, cluster, progress)
    files = [out / "results.csv"]
    write_csv(rows, files[0])
    if write_parquet(rows, out / "results.parquet"):
        files.append(out / "results.parquet")
    write_junit(rows, out / "junit.xml", f"hlsgen {title}")
    files += [write_index(rows, out, title, [f.name for f in files]), out / "junit.xml"]
    return Outcome(rows, files)


def regression_models(folder: Path) -> list[tuple[Path, Path | None]]:
    """Every .onnx under `folder`, each with `<stem>.npz` or else `calib.npz` beside it as calibration."""
    if not folder.is_dir():
        raise PathError(f"{folder} is not a folder of ONNX models; give the folder that holds them")
    models = sorted(folder.rglob("*.onnx"))
    if not models:
        raise PathError(f"{folder} holds no .onnx model (searched its subfolders too)")
    found = []
    for model in models:
        calib = next((p for p in (model.with_suffix(".npz"), model.parent / "calib.npz") if p.is_file()), None)
        found.append((model, calib))
    return found


def failure(outcome: Outcome, out: Path) -> SweepFailed | None:
    if not outcome.failed:
        return None
    first = outcome.failed[0]
    return SweepFailed(f"{len(outcome.failed)} of {len(outcome.rows)} builds failed, first {first['model']} on "
                       f"{first['target']} (bits {first['bits']}): exit {first['exit_code']} {first['category']}: "
                       f"{first['error']}; see {out / 'index.html'}", first["exit_code"])


def _inputs(model: Path, calib: Path | None, calibration: Calibration) -> Inputs:
    data = require_file(model, "ONNX model").read_bytes()
    calib_bytes = require_file(calib, "file (an .npz of calibration inputs)").read_bytes() if calib else None
    return Inputs(model.name, data, calib_bytes, calibration.input_range, calibration.max_accuracy_drop,
                  calibration.min_sqnr_db)


def _check_out(out: Path) -> None:
    """OUT is new, empty, or an earlier sweep (whose rows are the cache); anything else is left alone."""
    if out.exists() and not out.is_dir():
        raise PathError(f"{out} is a file; choose another -o for the sweep folder")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise PathError(f"{out} exists and is not an hlsgen sweep folder; choose another -o or remove it")
