"""A fuzzing run: models seed .. seed+count-1 from one profile through `runner.check` in a worker pool, every
failure shrunk to a reproducer folder, and the counts per outcome."""
from __future__ import annotations

import re
import tempfile
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from .generator import random_spec
from .runner import OUTCOMES, Result, run_all
from .shrink import save_reproducer, shrink
from .spec import ModelSpec, TargetSpec


@dataclass(frozen=True)
class Failure:
    result: Result  # the generated model's
    shrunk: Result  # the reproducer's
    folder: Path


@dataclass
class Summary:
    results: list[Result]
    failures: list[Failure] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        counted = Counter(r.outcome for r in self.results)
        return {outcome: counted.get(outcome, 0) for outcome in OUTCOMES}

    def rejects(self) -> list[tuple[str, list[int]]]:
        """Rejection messages (model-specific names cut) and the seeds that hit them, the commonest first."""
        groups: dict[str, list[int]] = {}
        for r in self.results:
            if r.outcome == "rejected":
                groups.setdefault(_generic(r.message), []).append(r.seed)
        return sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))

    @property
    def clean(self) -> bool:
        counts = self.counts()
        return counts["mismatch"] == 0 and counts["crash"] == 0


def specs(seed: int, count: int, profile: str, target: str | None = None) -> list[ModelSpec]:
    chosen = [random_spec(seed + i, profile) for i in range(count)]
    if target is not None:
        chosen = [replace(s, target=TargetSpec(builtin=target)) for s in chosen]
    return chosen


def fuzz_models(seed: int, count: int, profile: str = "ci", rtl_every: int = 0, target: str | None = None,
                jobs: int = 1, out: Path = Path("fuzz-failures"), timeout: float = 300.0, shrink_budget: int = 60,
                progress: Callable[[Result], None] | None = None, portable: bool = False) -> Summary:
    """rtl_every: every k-th model (the first included) also goes through the RTL; 0: none, 1: all.
    portable: C-sim the models without RTL against hlsgen's portable headers (runner.run_all)."""
    chosen = specs(seed, count, profile, target)
    work = [(spec, rtl_every > 0 and i % rtl_every == 0) for i, spec in enumerate(chosen)]
    with tempfile.TemporaryDirectory(prefix="hlsgen-fuzz-") as root:
        summary = Summary(run_all(work, Path(root) / "models", jobs, timeout, progress=progress, portable=portable))
        for i, result in enumerate(summary.results):
            if result.outcome in ("ok", "rejected"):
                continue
            spec, rtl = work[i]
            rtl = rtl and not result.message.startswith("csim:")  # C-sim shows it already: shrink without the RTL
            if result.stage == "timeout":  # each candidate would take the whole timeout: keep the model as it is
                small, shrunk = spec, result
            else:
                small = shrink(spec, _same_failure(result, rtl, Path(root) / f"shrink-{i}", jobs, timeout, portable),
                               batch=jobs, budget=shrink_budget)
                shrunk = run_all([(small, rtl)], Path(root) / f"final-{i}", 1, timeout, portable=portable)[0]
            folder = save_reproducer(small, shrunk, Path(out) / f"{seed}-{i}")
            summary.failures.append(Failure(result, shrunk, folder))
    return summary


def _same_failure(failure: Result, rtl: bool, root: Path, jobs: int, timeout: float, portable: bool):
    def still_fails(candidates: list[ModelSpec]) -> list[bool]:
        results = run_all([(c, rtl) for c in candidates], root, jobs, timeout, portable=portable)
        return [r.outcome == failure.outcome and r.stage == failure.stage for r in results]
    return still_fails


def _generic(message: str) -> str:
    """A rejection without the node names the generator made up, so equal causes group together."""
    return re.sub(r"\b(\w+?)_\d+\b", r"\1", message)[:200]
