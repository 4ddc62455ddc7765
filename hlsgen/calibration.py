"""Where a build's calibration samples come from, checked, and a name for them that the reports print.

hlsgen never guesses a float model's input range: the samples are the user's (`--calib`), or drawn from a
range the user states (`--input-range`), or, for a model that quantizes its own inputs, from the range its
input grid covers. Every quality figure names the data it was measured on (`Calibration.source`).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import DataError, UsageError
from .ir import Graph
from .npz_io import LABELS_KEY, check_labels, match_inputs, read_npz
from .quant.params import TensorQuant

SYNTHETIC_SAMPLES = 32


@dataclass(frozen=True)
class Calibration:
    feeds: dict[str, np.ndarray]  # graph input -> N stacked samples (the file's arrays for Graph.input_steps)
    labels: np.ndarray | None
    source: str  # what the samples are, for every figure measured on them
    synthetic: bool

    @property
    def samples(self) -> int:
        return int(next(iter(self.feeds.values())).shape[0])


def parse_input_range(text: str) -> tuple[float, float]:
    """`LO,HI` (e.g. `0,1`, `0,255`, `-1,1`) as two floats with LO < HI."""
    try:
        lo, hi = (float(part) for part in text.split(","))
    except ValueError:
        raise UsageError(f"--input-range {text!r}: give LO,HI, e.g. 0,1 or 0,255") from None
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise UsageError(f"--input-range {text!r}: LO must be below HI and both finite")
    return lo, hi


def calibration(graph: Graph, path: Path | None, input_range: tuple[float, float] | None) -> Calibration:
    """The calibration samples of a build (checked), or an error that says what to pass."""
    if path is not None:
        return _from_file(graph, path)
    if input_range is not None:
        lo, hi = input_range
        return Calibration(_uniform(graph, {n: input_range for n in graph.inputs}), None,
                           f"{SYNTHETIC_SAMPLES} synthetic inputs uniform in [{lo:g}, {hi:g}], from --input-range", True)
    model_ranges = {n: _grid_range(graph.quant[n]) for n in graph.inputs if isinstance(graph.quant.get(n), TensorQuant)}
    if len(model_ranges) == len(graph.inputs):
        described = ", ".join(f"{n} [{lo:g}, {hi:g}]" for n, (lo, hi) in model_ranges.items())
        return Calibration(_uniform(graph, model_ranges), None,
                           f"{SYNTHETIC_SAMPLES} synthetic inputs uniform in the model's own input range: {described}",
                           True)
    raise DataError("no calibration data: hlsgen does not guess a float model's input range; pass --calib "
                    "CALIB.npz with real samples (best), or --input-range LO,HI to state it (e.g. 0,1 or 0,255)")


def _grid_range(quant: TensorQuant) -> tuple[float, float]:
    return (quant.qmin - quant.zero_point) * quant.scale, (quant.qmax - quant.zero_point) * quant.scale


def _uniform(graph: Graph, ranges: dict[str, tuple[float, float]]) -> dict[str, np.ndarray]:
    """SYNTHETIC_SAMPLES samples per input, rounded up to whole batches of the graph's batch size."""
    rng = np.random.default_rng(0)
    batch = graph.shape(graph.inputs[0])[0]
    count = -(-SYNTHETIC_SAMPLES // batch) * batch
    feeds = {}
    for n in graph.inputs:
        steps = graph.input_steps.get(n)
        if steps is not None and np.issubdtype(np.dtype(steps.dtype), np.integer):  # the file's integers,
            limits = np.iinfo(np.dtype(steps.dtype))  # through the model's own preprocessing
            ints = rng.integers(limits.min, limits.max, (count, *steps.shape[1:]), endpoint=True)
            feeds[n] = ints.astype(steps.dtype)
        else:
            feeds[n] = rng.uniform(*ranges[n], (count, *graph.shape(n)[1:])).astype(graph.tensors[n].dtype)
    return feeds


def _as_model_takes(graph: Graph, name: str, arrays: dict[str, np.ndarray], feed: np.ndarray) -> np.ndarray:
    """An input with absorbed preprocessing (Graph.input_steps) keeps the file's array, as the model takes it
    (run_graph and quantize_inputs run the steps; verify/inputs.npz and model_qdq.onnx take it so)."""
    steps = graph.input_steps.get(name)
    data = [v for k, v in arrays.items() if k != LABELS_KEY]
    array = np.asarray(arrays[name] if name in arrays else data[0])
    if steps is None or not steps.takes(array):
        return feed
    return array.astype(steps.dtype, copy=False)


def _from_file(graph: Graph, path: Path) -> Calibration:
    arrays = read_npz(path)
    feeds = match_inputs(graph, arrays, f"calibration data {path}")
    feeds = {n: _as_model_takes(graph, n, arrays, v) for n, v in feeds.items()}
    labels = arrays.get(LABELS_KEY)
    count = next(iter(feeds.values())).shape[0]
    if labels is not None:
        check_labels(labels, count, f"calibration data {path}")
    for name, value in feeds.items():
        if np.issubdtype(value.dtype, np.floating):
            bad = int((~np.isfinite(value)).sum())
            if bad:
                raise DataError(f"calibration data {path}: array {name!r} holds {bad} NaN/Inf value(s); clean it first")
        if value.size and value.min() == value.max():
            raise DataError(f"calibration data {path}: every value of array {name!r} is {float(value.flat[0]):g}; "
                            "calibrate on real samples")
    return Calibration(feeds, labels, f"calibration set {path.name}, {count} samples", False)
