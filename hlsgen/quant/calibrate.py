"""Calibration: run the float graph on sample inputs, keep per-tensor statistics, choose clipping ranges."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import DataError
from ..ir import Graph
from ..reference import run_graph
from .params import TensorQuant

SAMPLE_CAP = 65536  # values kept per tensor to choose its clipping range
PERCENTILES = (99.9, 99.99)
MSE_GRID = 24


@dataclass
class TensorStats:
    lo: float
    hi: float
    sample: np.ndarray  # a deterministic subsample of the tensor's values


@dataclass(frozen=True)
class RangeChoice:
    quant: TensorQuant
    method: str  # "minmax", "percentile 99.99", "mse"
    mse: float


def collect_stats(graph: Graph, feeds: dict[str, np.ndarray]) -> dict[str, TensorStats]:
    """Run every sample (batched as the graph's input shape says) and keep each tensor's range and a sample
    of its non-zero values (zeros quantize exactly on every grid hlsgen chooses).

    Memory stays bounded whatever the number of samples: one batch's activations at a time, plus at most
    SAMPLE_CAP (+ one per batch) values per tensor. The sample is a quantile sketch, so it depends only on
    the values, not on their order or on exact zeros elsewhere in the tensor (a pruned channel changes
    nothing).
    """
    batch = graph.tensors[graph.inputs[0]].shape[0]
    total = next(iter(feeds.values())).shape[0]
    starts = range(0, total, batch)
    per_batch = -(-SAMPLE_CAP // len(starts))
    ranges: dict[str, tuple[float, float]] = {}
    kept: dict[str, list[np.ndarray]] = {}
    nonfinite: set[str] = set()
    for start in starts:
        values = run_graph(graph, {k: v[start : start + batch] for k, v in feeds.items()}, keep_all=True)
        for name, value in values.items():
            if name in graph.constants:
                continue
            flat = np.asarray(value, np.float32).ravel()
            if not np.isfinite(flat).all():  # a NaN would slip through min() and max() below
                nonfinite.add(name)
            lo, hi = ranges.get(name, (math.inf, -math.inf))
            ranges[name] = (min(lo, float(flat.min())), max(hi, float(flat.max())))
            kept.setdefault(name, []).append(_quantiles(flat[flat != 0], per_batch))
        del values
    _check_finite(graph, nonfinite)
    return {name: TensorStats(*ranges[name], _quantiles(np.concatenate(chunks), SAMPLE_CAP))
            for name, chunks in kept.items()}


def _check_finite(graph: Graph, nonfinite: set[str]) -> None:
    """No grid holds an Inf or a NaN: name the first tensor (in graph order) the calibration drives there."""
    for node in graph.topological():
        for name in node.outputs:
            if name in nonfinite:
                raise DataError(f"calibration: tensor {name!r} (output of {node.name!r}, {node.op}) holds Inf or "
                                "NaN on the calibration data, past float32; check the model's weights and the "
                                "data's scale")


def _quantiles(values: np.ndarray, count: int) -> np.ndarray:
    """At most `count` evenly spaced order statistics of `values` (all of them, sorted, when fewer)."""
    ordered = np.sort(values)
    if ordered.size <= count:
        return ordered
    return ordered[np.linspace(0, ordered.size - 1, count).round().astype(np.int64)]


def fake_quant_error(sample: np.ndarray, quant: TensorQuant) -> float:
    q = np.clip(np.rint(sample / quant.scale) + quant.zero_point, quant.qmin, quant.qmax)
    return float(np.mean(((q - quant.zero_point) * quant.scale - sample) ** 2))


def choose_range(stats: TensorStats, bits: int) -> RangeChoice:
    """The symmetric clipping range with the lowest quantization MSE on the sample.

    Candidates: the full range (min/max), high percentiles of |x|, and a grid for the MSE optimum.
    Tensors that are never negative get an unsigned grid.
    """
    signed = stats.lo < 0
    magnitude = np.abs(stats.sample)
    full = max(abs(stats.lo), abs(stats.hi), 1e-8)
    if not magnitude.size:  # zero on every sample: any grid is exact
        return RangeChoice(TensorQuant.symmetric(full, bits, signed), "minmax", 0.0)
    candidates = [("minmax", full)]
    candidates += [(f"percentile {p:g}", float(np.percentile(magnitude, p))) for p in PERCENTILES]
    candidates += [("mse", full * f) for f in np.linspace(0.3, 1.0, MSE_GRID, endpoint=False)]
    best = None
    for method, clip in candidates:
        if clip <= 0:
            continue
        quant = TensorQuant.symmetric(clip, bits, signed)
        error = fake_quant_error(stats.sample, quant)
        if best is None or error < best.mse:
            best = RangeChoice(quant, method, error)
    return best
