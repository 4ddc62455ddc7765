"""Measuring an assignment of bit widths: integer models lowered for a BitConfig run on the calibration
samples (all of them, or a fixed, evenly spaced subset), their outputs compared with the float model's."""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from ..errors import MappingError
from ..ir import Graph
from ..npz_io import top1_accuracy
from ..reference import run_graph
from .arith import dequantize
from .calibrate import TensorStats, choose_range
from .knobs import MAX_BITS
from .lower import BitConfig, lower
from .model import QuantizedModel
from .params import TensorQuant
from .search_report import Quality

SENSITIVITY_SAMPLES = 64  # calibration samples used to measure each knob's sensitivity
ERROR_MARGIN = 2.0  # accuracy mode: the budget must also hold with each output error amplified this much


class Evaluator:
    """Runs integer models for a BitConfig on all calibration samples or on the sensitivity subset."""

    def __init__(self, float_graph: Graph, feeds: dict[str, np.ndarray], labels: np.ndarray | None,
                 stats: dict[str, TensorStats], progress: Callable[[int], None] | None = None):
        self.graph, self.stats, self.labels = float_graph, stats, labels
        self.count, self.progress = 0, progress
        total = next(iter(feeds.values())).shape[0]
        batch = float_graph.tensors[float_graph.inputs[0]].shape[0]
        n_sub = max(batch, min(total, SENSITIVITY_SAMPLES) // batch * batch)
        picks = np.linspace(0, total - 1, n_sub).astype(int)  # distinct and evenly spread, n_sub <= total
        # choose_range is most of a lowering's time and depends only on (tensor, bits): a private copy of the
        # graph receives the chosen ranges as pre-quantized activations, which lower() keeps as they are.
        self.baseline_lowered = lower(float_graph, stats, BitConfig(MAX_BITS, MAX_BITS))
        self.calibrated = list(self.baseline_lowered.ranges)
        self._work = float_graph.copy()
        self._ranges: dict[tuple[str, int], TensorQuant] = {}
        self.sets = {"all": (feeds, labels),
                     "subset": ({k: v[picks] for k, v in feeds.items()}, None if labels is None else labels[picks])}
        self.batched = False
        self.float_values = self._run(float_graph, feeds, keep_all=True)
        self.float_out = {"all": [self.float_values[o] for o in float_graph.outputs]}
        self.float_out["subset"] = [v[picks] for v in self.float_out["all"]]
        self.float_accuracy = {k: (None if lab is None else top1_accuracy(self.float_out[k][0], lab))
                               for k, (_, lab) in self.sets.items()}
        self.batched = self._batched_run_agrees(float_graph, feeds)

    def _run(self, graph: Graph, feeds: dict[str, np.ndarray], keep_all: bool = False) -> dict[str, np.ndarray]:
        """All samples at once when that was checked to agree with batch-by-batch runs, else batch by batch."""
        if self.batched:
            return run_graph(graph, feeds, keep_all)
        batch = graph.tensors[graph.inputs[0]].shape[0]
        total = next(iter(feeds.values())).shape[0]
        chunks = [run_graph(graph, {k: v[i : i + batch] for k, v in feeds.items()}, keep_all)
                  for i in range(0, total, batch)]
        return {k: np.concatenate([c[k] for c in chunks]) for k in chunks[0]}

    def _batched_run_agrees(self, float_graph: Graph, feeds: dict[str, np.ndarray]) -> bool:
        """Graphs declare a batch size; running more samples at once is faster where every op allows it."""
        model = self.model(BitConfig())
        sub_feeds = self.sets["subset"][0]
        int_feeds = model.quantize_inputs(sub_feeds)
        reference = self._run(model.graph, int_feeds)
        try:
            together = run_graph(model.graph, int_feeds)
            together_float = run_graph(float_graph, feeds)
        except Exception:  # noqa: BLE001  (an op that insists on the declared batch size)
            return False
        same_int = all(together[k].shape == reference[k].shape and np.array_equal(together[k], reference[k])
                       for k in reference)
        same_float = all(together_float[k].shape == self.float_values[k].shape
                         and np.allclose(together_float[k], self.float_values[k], rtol=1e-4, atol=1e-5)
                         for k in float_graph.outputs)
        return same_int and same_float

    def model(self, bits: BitConfig) -> QuantizedModel:
        for tensor in self.calibrated:
            key = (tensor, bits.activations(tensor))
            if key not in self._ranges:
                self._ranges[key] = choose_range(self.stats[tensor], key[1]).quant
            self._work.quant[tensor] = self._ranges[key]
        return QuantizedModel(lower(self._work, self.stats, bits), self.graph)

    def evaluate(self, bits: BitConfig, which: str = "all") -> Quality | None:
        """The quality of `bits` on "all" samples or on the "subset"; None when it cannot be lowered."""
        try:
            model = self.model(bits)
        except (ValueError, MappingError):  # e.g. a requantization scale out of range at a very narrow width
            return None
        self.count += 1
        if self.progress is not None:
            self.progress(self.count)
        feeds, labels = self.sets[which]
        outputs = model.dequantize_outputs(self._run(model.graph, model.quantize_inputs(feeds)))
        return _quality([outputs[o] for o in self.graph.outputs], self.float_out[which], labels)

    def layer_sqnr(self, bits: BitConfig) -> dict[str, float]:
        """SQNR of every Conv/Dense output tensor against the float one, on all samples."""
        model = self.model(bits)
        values = self._run(model.graph, model.quantize_inputs(self.sets["all"][0]), keep_all=True)
        result = {}
        for layer in model.lowered.layers:
            out = model.graph.nodes[layer.name].outputs[0]
            q = model.graph.quant[out]
            result[layer.name] = _sqnr_db(*_noise([dequantize(values[out], q.scale, q.zero_point)],
                                                  [self.float_values[out]]))
        return result


def _noise(outputs: list[np.ndarray], reference: list[np.ndarray]) -> tuple[float, float]:
    signal = sum(float(np.sum(np.square(r, dtype=np.float64))) for r in reference)
    error = sum(float(np.sum(np.square(np.asarray(o, np.float64) - r))) for o, r in zip(outputs, reference))
    return signal, error


def _sqnr_db(signal: float, error: float) -> float:
    if error == 0:
        return math.inf
    if signal == 0:
        return -math.inf
    return 10 * math.log10(signal / error)


def _quality(outputs: list[np.ndarray], reference: list[np.ndarray], labels: np.ndarray | None) -> Quality:
    """The worst output's SQNR (a detector's boxes may not hide behind its scores), and accuracy by labels."""
    signal, error = min((_noise([o], [r]) for o, r in zip(outputs, reference)),
                        key=lambda noise: _sqnr_db(*noise))
    accuracy = robust = None
    if labels is not None:
        accuracy = top1_accuracy(outputs[0], labels)
        robust = top1_accuracy(reference[0] + ERROR_MARGIN * (outputs[0] - reference[0]), labels)
    return Quality(_sqnr_db(signal, error), error / signal if signal else math.inf, accuracy, robust)
