"""The quality budget of the bit-width search: top-1 accuracy at most so far below the float model's, or
an output SQNR of at least so many dB."""
from __future__ import annotations

from .search_report import Quality, db


class Budget:
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


def unmet_budget_message(budget: Budget, baseline: Quality | None) -> str:
    """Why the search cannot start (uniform 8-bit already breaks the budget) and what to change."""
    if baseline is None:
        achieved = "uniform 8-bit cannot be lowered"
    elif budget.mode == "accuracy":
        achieved = (f"uniform 8-bit reaches {100 * baseline.accuracy:.2f}% "
                    f"({100 * (budget.float_accuracy['all'] - baseline.accuracy):.2f} points lost)")
    else:
        achieved = f"uniform 8-bit reaches {db(baseline.sqnr_db)} dB"
    fix = ("allow a larger drop (--max-accuracy-drop) or check the calibration labels"
           if budget.mode == "accuracy" else "lower --min-sqnr (the search tries nothing wider than 8 bits)")
    return f"bit-width budget cannot be met: {budget.describe()}, but {achieved}; {fix}"
