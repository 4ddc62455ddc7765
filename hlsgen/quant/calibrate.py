"""Calibration: run the float graph on sample inputs, keep per-tensor statistics, choose clipping ranges."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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
    """Run every sample (batched as the graph's input shape says) and keep each tensor's range and values."""
    batch = graph.tensors[graph.inputs[0]].shape[0]
    total = next(iter(feeds.values())).shape[0]
    parts: dict[str, list[np.ndarray]] = {}
    for start in range(0, total, batch):
        chunk = {k: v[start : start + batch] for k, v in feeds.items()}
        values = run_graph(graph, chunk, keep_all=True)
        for name, value in values.items():
            if name not in graph.constants:
                parts.setdefault(name, []).append(np.asarray(value, np.float32).ravel())
    stats = {}
    rng = np.random.default_rng(0)  # a strided subsample would alias with the tensor layout
    for name, chunks in parts.items():
        values = np.concatenate(chunks)
        sample = values if values.size <= SAMPLE_CAP else rng.choice(values, SAMPLE_CAP, replace=False)
        stats[name] = TensorStats(float(values.min()), float(values.max()), sample)
    return stats


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
