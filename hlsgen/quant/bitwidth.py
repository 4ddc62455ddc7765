"""Bit-width tuning (`hlsgen build --bits auto`): per-layer weight widths and per-tensor activation
widths, as narrow as a quality budget allows.

Hardware cost
-------------
`hardware_cost` reports two figures for an integer model, both in bits:

    weight_storage_bits = sum over Conv/Dense layers of  weight_count * weight_bits
    mac_cost            = sum over Conv/Dense layers of  MACs * weight_bits * input_bits / 64

`MACs` are the multiply-accumulates of one inference (`hlsgen.analysis.graph_costs`; a ChannelAffine
lowered to a depthwise 1x1 QConv counts one per output element) and `input_bits` is the width of the
layer's input tensor. A multiplier's area grows with the product of its operand widths, so the MAC
term is normalised to read "MACs" for an 8x8-bit layer (8 * 8 / 64 = 1). `total` is their sum.

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
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..analysis import graph_costs
from ..errors import BudgetError, DataError, UsageError
from ..ir import Graph
from ..npz_io import match_inputs, top1_accuracy
from ..reference import run_graph
from .arith import dequantize
from .calibrate import TensorStats, choose_range, collect_stats
from .lower import BitConfig, Lowered, lower
from .model import QuantizedModel
from .params import TensorQuant

MIN_BITS, MAX_BITS = 2, 8
DEFAULT_MAX_ACCURACY_DROP = 0.01
DEFAULT_MIN_SQNR_DB = 30.0
SENSITIVITY_SAMPLES = 64  # calibration samples used to measure each knob's sensitivity
ERROR_MARGIN = 2.0  # accuracy mode: the budget must also hold with each output error amplified this much
_MATMUL_OPS = ("QConv", "QDense")


# ---- hardware cost ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Cost:
    weight_storage_bits: int
    mac_cost: float  # sum of MACs * weight_bits * input_bits / 64

    @property
    def total(self) -> float:
        return self.weight_storage_bits + self.mac_cost

    def to_json(self) -> dict:
        return {"weight_storage_bits": self.weight_storage_bits, "mac_cost": self.mac_cost, "total": self.total}


def hardware_cost(lowered: Lowered, float_graph: Graph) -> Cost:
    """The weight storage and the width-weighted MAC cost of an integer model (formulas: module docstring)."""
    macs = _layer_macs(float_graph)
    storage, mac_cost = 0, 0.0
    for layer in lowered.layers:
        node = lowered.graph.nodes[layer.name]
        input_bits = lowered.graph.quant[node.inputs[0]].bits
        storage += layer.weight_count * layer.weight_bits
        mac_cost += macs.get(layer.name, 0) * layer.weight_bits * input_bits / 64
    return Cost(int(storage), float(mac_cost))


def _layer_macs(float_graph: Graph) -> dict[str, int]:
    macs = {c.name: c.macs for c in graph_costs(float_graph)}
    for node in float_graph.nodes.values():
        if node.op == "ChannelAffine":  # becomes a depthwise 1x1 convolution: one MAC per output element
            macs[node.name] = int(np.prod(float_graph.shape(node.outputs[0]), dtype=np.int64))
    return macs


# ---- results ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Quality:
    """How an integer model's outputs compare with the float model's on a set of samples."""

    sqnr_db: float  # of all outputs against the float outputs; inf when identical
    noise: float  # sum (q - f)^2 / sum f^2, the inverse of the SQNR as a power ratio
    accuracy: float | None  # top-1 on the first output, when labels are known
    robust_accuracy: float | None = None  # top-1 of f + ERROR_MARGIN * (q - f), when labels are known

    def to_json(self) -> dict:
        return {"sqnr_db": _finite(self.sqnr_db), "accuracy": self.accuracy, "robust_accuracy": self.robust_accuracy}


@dataclass(frozen=True)
class LayerRow:
    layer: str
    op: str
    weight_bits: int
    input_bits: int
    output_bits: int
    sqnr_db: float  # the layer's output tensor against the float one, with the chosen assignment
    effect: float  # vs uniform 8-bit, only this layer's widths (weights, input, output) as chosen
    weight_storage_bits: int
    bits_saved: int  # against 8-bit weights

    def to_json(self) -> dict:
        return {"layer": self.layer, "op": self.op, "weight_bits": self.weight_bits,
                "input_bits": self.input_bits, "output_bits": self.output_bits,
                "sqnr_db": _finite(self.sqnr_db), "effect": self.effect,
                "weight_storage_bits": self.weight_storage_bits, "bits_saved": self.bits_saved}


@dataclass
class SearchResult:
    config: BitConfig  # the chosen widths, every tuned knob listed explicitly
    mode: str  # "accuracy" or "sqnr"
    budget: float  # max accuracy drop (fraction) or min SQNR (dB)
    float_accuracy: float | None  # float model on the calibration set (accuracy mode)
    baseline: Quality  # uniform 8-bit, calibration set
    quality: Quality  # the chosen assignment, calibration set
    baseline_cost: Cost
    cost: Cost
    evaluations: int  # integer-model evaluations (sensitivity subset and full checks)
    seconds: float
    rows: list[LayerRow] = field(default_factory=list)

    @property
    def storage_saving(self) -> float:
        """Fraction of weight storage saved against uniform 8-bit."""
        return 1.0 - self.cost.weight_storage_bits / max(self.baseline_cost.weight_storage_bits, 1)

    @property
    def effect_label(self) -> str:
        return "acc drop (pts)" if self.mode == "accuracy" else "SQNR loss (dB)"

    def to_json(self) -> dict:
        return {
            "mode": self.mode,
            "budget": self.budget,
            "weight_bits": dict(self.config.layer_weight_bits),
            "activation_bits": dict(self.config.tensor_act_bits),
            "float_accuracy": self.float_accuracy,
            "uniform_8bit": self.baseline.to_json(),
            "chosen": self.quality.to_json(),
            "uniform_8bit_cost": self.baseline_cost.to_json(),
            "cost": self.cost.to_json(),
            "weight_storage_saving": self.storage_saving,
            "evaluations": self.evaluations,
            "seconds": self.seconds,
            "effect": self.effect_label,
            "layers": [row.to_json() for row in self.rows],
        }


def format_table(result: SearchResult) -> str:
    """The per-layer table plus a summary, plain text with fixed-width columns."""
    headers = ("layer", "op", "w bits", "in bits", "out bits", "out SQNR dB", result.effect_label,
               "w storage bits", "bits saved")
    rows = [(r.layer, r.op, str(r.weight_bits), str(r.input_bits), str(r.output_bits), _db(r.sqnr_db),
             f"{r.effect:.2f}", str(r.weight_storage_bits), str(r.bits_saved)) for r in result.rows]
    base, cost = result.baseline_cost, result.cost
    rows.append(("total", "", "", "", "", "", "", str(cost.weight_storage_bits),
                 str(base.weight_storage_bits - cost.weight_storage_bits)))
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(headers)]

    def line(cells) -> str:
        return "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    out = [line(headers), line(["-" * w for w in widths])]
    out += [line(row) for row in rows]
    if result.mode == "accuracy":
        out.append(f"accuracy on calibration: float {_pct(result.float_accuracy)}, "
                   f"8-bit {_pct(result.baseline.accuracy)}, chosen {_pct(result.quality.accuracy)} "
                   f"(budget: at most {100 * result.budget:g} point(s) below float)")
    out.append(f"output SQNR on calibration: 8-bit {_db(result.baseline.sqnr_db)} dB, chosen "
               f"{_db(result.quality.sqnr_db)} dB" + ("" if result.mode == "accuracy" else
                                                       f" (budget: at least {result.budget:g} dB)"))
    out.append(f"weight storage {cost.weight_storage_bits} bits vs {base.weight_storage_bits} at 8 bits "
               f"({100 * result.storage_saving:.1f}% saved); MAC cost {cost.mac_cost:.0f} vs {base.mac_cost:.0f}")
    out.append(f"{result.evaluations} evaluations in {result.seconds:.1f} s")
    return "\n".join(out)


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def _db(x: float) -> str:
    return f"{x:.1f}" if math.isfinite(x) else "inf"


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}%"


# ---- evaluation ------------------------------------------------------------------------------------
class _Evaluator:
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
        except ValueError:  # e.g. a requantization scale out of range at a very narrow width
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
    signal, error = _noise(outputs, reference)
    accuracy = robust = None
    if labels is not None:
        accuracy = top1_accuracy(outputs[0], labels)
        robust = top1_accuracy(reference[0] + ERROR_MARGIN * (outputs[0] - reference[0]), labels)
    return Quality(_sqnr_db(signal, error), error / signal if signal else math.inf, accuracy, robust)


# ---- budget ----------------------------------------------------------------------------------------
class _Budget:
    def __init__(self, mode: str, limit: float, float_accuracy: dict[str, float | None]):
        self.mode, self.limit, self.float_accuracy = mode, limit, float_accuracy

    def loss(self, quality: Quality, which: str = "all") -> float:
        """Accuracy points lost against float, or minus the output SQNR in dB (differences are dB lost)."""
        if self.mode == "accuracy":
            return 100 * (self.float_accuracy[which] - quality.accuracy)
        return -quality.sqnr_db

    def ok(self, quality: Quality | None, which: str = "all", margin: bool = True) -> bool:
        if quality is None:
            return False
        if self.mode == "accuracy":
            worst = min(quality.accuracy, quality.robust_accuracy) if margin else quality.accuracy
            return self.float_accuracy[which] - worst <= self.limit + 1e-12
        return quality.sqnr_db >= self.limit

    def describe(self) -> str:
        if self.mode == "accuracy":
            return (f"accuracy at most {100 * self.limit:g} point(s) below the float model's "
                    f"{100 * self.float_accuracy['all']:.2f}%")
        return f"output SQNR at least {self.limit:g} dB"


# ---- search ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Knob:
    kind: str  # "weight" (a layer) or "act" (a tensor)
    name: str


def _config(assignment: dict[_Knob, int]) -> BitConfig:
    return BitConfig(
        weight_bits=MAX_BITS, act_bits=MAX_BITS,
        layer_weight_bits={k.name: b for k, b in assignment.items() if k.kind == "weight"},
        tensor_act_bits={k.name: b for k, b in assignment.items() if k.kind == "act"},
    )


class _CostModel:
    """hardware_cost from an assignment without lowering: which knobs set each layer's operand widths."""

    def __init__(self, float_graph: Graph, lowered: Lowered, knobs: list[_Knob]):
        macs = _layer_macs(float_graph)
        act_knobs = {k.name: k for k in knobs if k.kind == "act"}
        weight_knobs = {k.name: k for k in knobs if k.kind == "weight"}
        self.layers = []  # (weight count, MACs, weight knob or fixed bits, input knob or fixed bits)
        for layer in lowered.layers:
            x = lowered.graph.nodes[layer.name].inputs[0]
            source = _quant_source(float_graph, lowered, x)
            w = weight_knobs.get(layer.name, layer.weight_bits)
            fixed = lowered.graph.quant[x].bits  # a pre-quantized input keeps its width
            a = act_knobs.get(source, fixed) if source is not None else fixed
            self.layers.append((layer.weight_count, macs.get(layer.name, 0), w, a))

    def __call__(self, assignment: dict[_Knob, int]) -> Cost:
        def bits(knob):
            return assignment[knob] if isinstance(knob, _Knob) else knob

        storage = sum(count * bits(w) for count, _, w, _ in self.layers)
        mac_cost = sum(m * bits(w) * bits(a) / 64 for _, m, w, a in self.layers)
        return Cost(int(storage), float(mac_cost))


def _quant_source(float_graph: Graph, lowered: Lowered, tensor: str) -> str | None:
    """The calibrated tensor whose quantization `tensor` shares (pools, reshapes, clamps pass it on)."""
    seen = set()
    while tensor not in lowered.ranges:
        producer = float_graph.producer(tensor)
        if producer is None or tensor in seen or not producer.inputs:
            return None
        seen.add(tensor)
        source = producer.inputs[0]
        if lowered.graph.quant.get(source) != lowered.graph.quant.get(tensor):
            return None
        tensor = source
    return tensor


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

    ev = _Evaluator(float_graph, feeds, labels, stats, progress)
    budget = _Budget(mode, float(limit), ev.float_accuracy)

    base_bits = BitConfig(MAX_BITS, MAX_BITS)
    baseline = ev.evaluate(base_bits)
    if not budget.ok(baseline, margin=False):
        raise BudgetError(_budget_message(budget, baseline))
    base_lowered = ev.baseline_lowered

    knobs = [_Knob("weight", layer.name) for layer in base_lowered.layers
             if not isinstance(float_graph.quant.get(float_graph.nodes[layer.name].inputs[1]), tuple)]
    knobs += [_Knob("act", t) for t in base_lowered.ranges]
    cost_of = _CostModel(float_graph, base_lowered, knobs)
    assignment = {k: MAX_BITS for k in knobs}
    base_total = cost_of(assignment).total  # a knob that saves nothing (e.g. a graph output) stays at 8 bits
    knobs = [k for k in knobs if cost_of({**assignment, k: MAX_BITS - 1}).total < base_total]

    # 1. Sensitivity: the added output noise of each knob alone at each narrower width (subset).
    base_sub = ev.evaluate(base_bits, "subset")
    added: dict[_Knob, dict[int, float]] = {}
    for knob in knobs:
        added[knob] = {MAX_BITS: 0.0}
        for bits in levels[1:]:
            quality = ev.evaluate(_config({**assignment, knob: bits}), "subset")
            if not budget.ok(quality, "subset"):
                break
            added[knob][bits] = max(quality.noise - base_sub.noise, 0.0)

    # 2. Greedy descent: best cost saving per unit of added noise, each step checked on all samples.
    quality = baseline
    frozen: set[_Knob] = set()
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
        trial_quality = ev.evaluate(_config(trial))
        if budget.ok(trial_quality):
            assignment, quality = trial, trial_quality
        else:
            frozen.add(knob)

    chosen = _config(assignment)
    chosen_lowered = lower(float_graph, stats, chosen)
    rows = _rows(ev, budget, baseline, float_graph, chosen_lowered, assignment, knobs)
    return SearchResult(
        config=chosen, mode=mode, budget=float(limit), float_accuracy=ev.float_accuracy["all"],
        baseline=baseline, quality=quality,
        baseline_cost=hardware_cost(base_lowered, float_graph), cost=hardware_cost(chosen_lowered, float_graph),
        evaluations=ev.count, seconds=time.perf_counter() - start, rows=rows,
    )


def _rows(ev: _Evaluator, budget: _Budget, baseline: Quality, float_graph: Graph, lowered: Lowered,
          assignment: dict[_Knob, int], knobs: list[_Knob]) -> list[LayerRow]:
    """One row per layer; its effect is the quality loss against uniform 8-bit with only the layer's own
    widths (weights, input and output activations) as chosen."""
    sqnr = ev.layer_sqnr(_config(assignment))
    rows = []
    for layer in lowered.layers:
        node = lowered.graph.nodes[layer.name]
        x, y = node.inputs[0], node.outputs[0]
        own = {}
        for knob in knobs:
            if (knob.kind == "weight" and knob.name == layer.name) or (
                knob.kind == "act" and knob.name in (_quant_source(float_graph, lowered, x), y)
            ):
                own[knob] = assignment[knob]
        if any(b != MAX_BITS for b in own.values()):
            alone = ev.evaluate(_config({**{k: MAX_BITS for k in knobs}, **own}))
            effect = budget.loss(alone) - budget.loss(baseline) if alone is not None else math.inf
        else:
            effect = 0.0
        storage = layer.weight_count * layer.weight_bits
        rows.append(LayerRow(layer.name, layer.op, layer.weight_bits, lowered.graph.quant[x].bits,
                             lowered.graph.quant[y].bits, sqnr[layer.name], effect + 0.0, storage,
                             layer.weight_count * MAX_BITS - storage))
    return rows


def _budget_message(budget: _Budget, baseline: Quality | None) -> str:
    if baseline is None:
        achieved = "uniform 8-bit cannot be lowered"
    elif budget.mode == "accuracy":
        achieved = (f"uniform 8-bit reaches {100 * baseline.accuracy:.2f}% "
                    f"({100 * (budget.float_accuracy['all'] - baseline.accuracy):.2f} points lost)")
    else:
        achieved = f"uniform 8-bit reaches {_db(baseline.sqnr_db)} dB"
    fix = ("allow a larger drop (--max-accuracy-drop) or check the calibration labels"
           if budget.mode == "accuracy" else "lower --min-sqnr (the search tries nothing wider than 8 bits)")
    return f"bit-width budget cannot be met: {budget.describe()}, but {achieved}; {fix}"
