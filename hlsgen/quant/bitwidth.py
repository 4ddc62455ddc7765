"""Bit-width tuning (`hlsgen build --bits auto`): per-layer weight widths and per-tensor activation
widths, as narrow as a quality budget allows.

Hardware cost
-------------
The search minimizes `hlsgen.quant.cost.hardware_cost(...).total`: weight storage bits plus the MACs
weighted by weight_bits * input_bits / 64.

Quality budget
--------------
With labels and `max_accuracy_drop`: top-1 accuracy on the calibration set may fall at most that much
(a fraction: 0.01 is one point) below the FLOAT model's accuracy on the same samples. Calibration
samples are often easier than unseen ones (larger logit margins), so while searching the same budget
also applies to a "robust accuracy": the accuracy of the logits f + ERROR_MARGIN * (q - f), i.e. with
every sample's quantization error amplified. A sample counts only if it would survive ERROR_MARGIN
times its error. (On the digits example, calibration samples have top-1 logit margins of 3 or more,
while test samples go down to 0.05; without this margin the search overshoots on the test set.)
Without labels: the SQNR of the outputs against the float outputs, 10*log10(sum f^2 / sum (q - f)^2)
over all samples, must stay at least `min_sqnr_db`.

Search
------
The knobs are the weight width of every Conv/Dense layer and the width of every activation tensor that
the lowering calibrates (graph inputs included), each over the candidate widths (8 down to 2). A knob
that cannot lower the cost (an activation that feeds no Conv/Dense, such as a graph output) stays at 8.

1. Sensitivity, on a fixed, evenly spaced subset of the calibration samples: each knob is stepped down
   alone (everything else at 8 bits) and the output noise power relative to the float output is
   measured. A knob stops stepping at the first width that alone already breaks the budget on the
   subset; that width and narrower ones are never tried.
2. Greedy descent: the noise of the knobs is taken to add up. Among the moves "one knob one candidate
   narrower", pick the one with the largest cost saving per unit of added noise, lower that knob and
   check the budget with the whole assignment on all calibration samples. A move that breaks the
   budget is undone and its knob is frozen. Stop when no knob can move. Every accepted assignment has
   passed the full check, so the result never breaks the budget on the calibration set.

Everything is deterministic: fixed subset, fixed knob order, ties broken by that order.
"""
from __future__ import annotations

import math
import time
from typing import Callable

import numpy as np

from ..errors import BudgetError, DataError, UsageError
from ..ir import Graph
from ..npz_io import match_inputs
from .budget import Budget, unmet_budget_message
from .calibrate import TensorStats, collect_stats
from .cost import hardware_cost
from .evaluate import Evaluator
from .knobs import MAX_BITS, MIN_BITS, AssignmentCost, Knob, bit_config, quant_source
from .lower import BitConfig, Lowered, lower
from .search_report import LayerRow, Quality, SearchResult

DEFAULT_MAX_ACCURACY_DROP = 0.01
DEFAULT_MIN_SQNR_DB = 30.0


def search_bit_widths(
    float_graph: Graph,
    calibration: dict[str, np.ndarray],
    labels: np.ndarray | None = None,
    max_accuracy_drop: float | None = None,
    min_sqnr_db: float | None = None,
    candidates=(8, 7, 6, 5, 4, 3, 2),
    stats: dict[str, TensorStats] | None = None,
    progress: Callable[[int], None] | None = None,
) -> SearchResult:
    """Choose per-layer weight and per-tensor activation widths for the lowest hardware cost inside the
    budget (see the module docstring). Accuracy mode needs `labels`; otherwise the SQNR budget applies.
    Raises BudgetError when uniform 8-bit already breaks the budget. `progress` is told the evaluation count."""
    start = time.perf_counter()
    levels = sorted({int(c) for c in candidates}, reverse=True)
    if not levels or levels[-1] < MIN_BITS or levels[0] > MAX_BITS:
        raise UsageError(f"candidate bit widths must lie in {MIN_BITS}..{MAX_BITS}, got {tuple(candidates)}")
    if levels[0] != MAX_BITS:
        levels.insert(0, MAX_BITS)
    feeds = match_inputs(float_graph, calibration, "calibration data")
    total = next(iter(feeds.values())).shape[0]
    if labels is not None:
        labels = np.asarray(labels).reshape(-1)
        if len(labels) != total:
            raise DataError(f"calibration data: {len(labels)} labels for {total} samples")
    if labels is not None and (max_accuracy_drop is not None or min_sqnr_db is None):
        mode, limit = "accuracy", DEFAULT_MAX_ACCURACY_DROP if max_accuracy_drop is None else max_accuracy_drop
    else:
        mode, limit = "sqnr", DEFAULT_MIN_SQNR_DB if min_sqnr_db is None else min_sqnr_db
    if stats is None:
        stats = collect_stats(float_graph, feeds)

    ev = Evaluator(float_graph, feeds, labels, stats, progress)
    budget = Budget(mode, float(limit), ev.float_accuracy)

    base_bits = BitConfig(MAX_BITS, MAX_BITS)
    baseline = ev.evaluate(base_bits)
    if not budget.ok(baseline, margin=False):
        raise BudgetError(unmet_budget_message(budget, baseline))
    base_lowered = ev.baseline_lowered

    knobs = [Knob("weight", layer.name) for layer in base_lowered.layers
             if not isinstance(float_graph.quant.get(float_graph.nodes[layer.name].inputs[1]), tuple)]
    knobs += [Knob("act", t) for t in base_lowered.ranges]
    cost_of = AssignmentCost(float_graph, base_lowered, knobs)
    assignment = {k: MAX_BITS for k in knobs}
    base_total = cost_of(assignment).total  # a knob that saves nothing (e.g. a graph output) stays at 8 bits
    knobs = [k for k in knobs if cost_of({**assignment, k: MAX_BITS - 1}).total < base_total]

    # 1. Sensitivity: the added output noise of each knob alone at each narrower width (subset).
    base_sub = ev.evaluate(base_bits, "subset")
    added: dict[Knob, dict[int, float]] = {}
    for knob in knobs:
        added[knob] = {MAX_BITS: 0.0}
        for bits in levels[1:]:
            quality = ev.evaluate(bit_config({**assignment, knob: bits}), "subset")
            if not budget.ok(quality, "subset"):
                break
            added[knob][bits] = max(quality.noise - base_sub.noise, 0.0)

    # 2. Greedy descent: best cost saving per unit of added noise, each step checked on all samples.
    quality = baseline
    frozen: set[Knob] = set()
    floor = max(base_sub.noise, 1e-12) * 1e-3
    while True:
        current = cost_of(assignment).total
        moves = []
        for index, knob in enumerate(knobs):
            if knob in frozen:
                continue
            narrower = [b for b in added[knob] if b < assignment[knob]]
            if not narrower:
                continue
            bits = max(narrower)
            saving = current - cost_of({**assignment, knob: bits}).total
            if saving <= 0:
                continue
            extra = max(added[knob][bits] - added[knob][assignment[knob]], floor)
            moves.append((-saving / extra, index, knob, bits))
        if not moves:
            break
        _, _, knob, bits = min(moves)
        trial = {**assignment, knob: bits}
        trial_quality = ev.evaluate(bit_config(trial))
        if budget.ok(trial_quality):
            assignment, quality = trial, trial_quality
        else:
            frozen.add(knob)

    chosen = bit_config(assignment)
    chosen_lowered = lower(float_graph, stats, chosen)
    rows = _rows(ev, budget, baseline, float_graph, chosen_lowered, assignment, knobs)
    return SearchResult(
        config=chosen, mode=mode, budget=float(limit), float_accuracy=ev.float_accuracy["all"],
        baseline=baseline, quality=quality,
        baseline_cost=hardware_cost(base_lowered, float_graph), cost=hardware_cost(chosen_lowered, float_graph),
        evaluations=ev.count, seconds=time.perf_counter() - start, rows=rows,
    )


def _rows(ev: Evaluator, budget: Budget, baseline: Quality, float_graph: Graph, lowered: Lowered,
          assignment: dict[Knob, int], knobs: list[Knob]) -> list[LayerRow]:
    """One row per layer; its effect is the quality loss against uniform 8-bit with only the layer's own
    widths (weights, input and output activations) as chosen."""
    sqnr = ev.layer_sqnr(bit_config(assignment))
    rows = []
    for layer in lowered.layers:
        node = lowered.graph.nodes[layer.name]
        x, y = node.inputs[0], node.outputs[0]
        own = {}
        for knob in knobs:
            if (knob.kind == "weight" and knob.name == layer.name) or (
                knob.kind == "act" and knob.name in (quant_source(float_graph, lowered, x), y)
            ):
                own[knob] = assignment[knob]
        if any(b != MAX_BITS for b in own.values()):
            alone = ev.evaluate(bit_config({**{k: MAX_BITS for k in knobs}, **own}))
            effect = budget.loss(alone) - budget.loss(baseline) if alone is not None else math.inf
        else:
            effect = 0.0
        storage = layer.weight_count * layer.weight_bits
        rows.append(LayerRow(layer.name, layer.op, layer.weight_bits, lowered.graph.quant[x].bits,
                             lowered.graph.quant[y].bits, sqnr[layer.name], effect + 0.0, storage,
                             layer.weight_count * MAX_BITS - storage))
    return rows
