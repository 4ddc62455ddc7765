"""What the bit-width search reports: the quality and cost of the chosen widths against uniform 8-bit,
one row per layer, as JSON (quant.json) and as a plain-text table (bits.txt)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from .cost import Cost
from .lower import BitConfig


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
    rows = [(r.layer, r.op, str(r.weight_bits), str(r.input_bits), str(r.output_bits), db(r.sqnr_db),
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
    out.append(f"output SQNR on calibration: 8-bit {db(result.baseline.sqnr_db)} dB, chosen "
               f"{db(result.quality.sqnr_db)} dB" + ("" if result.mode == "accuracy" else
                                                      f" (budget: at least {result.budget:g} dB)"))
    out.append(f"weight storage {cost.weight_storage_bits} bits vs {base.weight_storage_bits} at 8 bits "
               f"({100 * result.storage_saving:.1f}% saved); MAC cost {cost.mac_cost:.0f} vs {base.mac_cost:.0f}")
    out.append(f"{result.evaluations} evaluations in {result.seconds:.1f} s")
    return "\n".join(out)


def db(x: float) -> str:
    """A decibel figure for text: one decimal, or "inf" when it is not finite."""
    return f"{x:.1f}" if math.isfinite(x) else "inf"


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}%"
