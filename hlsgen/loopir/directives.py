"""Scheduling directives: frozen dataclasses, each placed on a loop, a buffer or a whole nest by name.

Field names and meanings follow the HLS pragmas they become: Pipeline(ii) and Unroll(factor) on a
loop (factor None = completely), Partition(buffer, dim, kind, factor) on a buffer (dim 1-based, kind
cyclic | block | complete; factor unused for complete), Stream(depth) on a buffer that is a FIFO
between concurrent processes, Dependence(kind) on a buffer whose accesses of different iterations
(inter) or of one iteration (intra) never touch the same word, Dataflow on a nest whose processes run
concurrently, Inline on a nest that is a helper of the function that calls it.
"""
from __future__ import annotations

from dataclasses import dataclass

PARTITION_KINDS = ("cyclic", "block", "complete")


@dataclass(frozen=True)
class Pipeline:
    ii: int = 1


@dataclass(frozen=True)
class Unroll:
    factor: int | None = None  # None: unroll completely


@dataclass(frozen=True)
class Partition:
    buffer: str
    dim: int  # 1-based, as in the pragma; 0: every dimension (complete)
    kind: str  # "cyclic", "block" or "complete"
    factor: int = 0  # unused for "complete"

    def __post_init__(self):
        if self.kind not in PARTITION_KINDS:
            raise ValueError(f"partition kind must be one of {PARTITION_KINDS}, got {self.kind!r}")
        if self.dim < 1 and not (self.dim == 0 and self.kind == "complete"):
            raise ValueError("partition dims are 1-based (0: every dimension, complete only)")
        if self.kind != "complete" and self.factor < 1:
            raise ValueError(f"a {self.kind} partition needs a factor >= 1")


@dataclass(frozen=True)
class Dataflow:
    pass


@dataclass(frozen=True)
class Stream:
    depth: int = 2


@dataclass(frozen=True)
class Dependence:
    kind: str = "inter"  # or "intra"


@dataclass(frozen=True)
class Inline:
    pass


def describe(directive) -> str:
    """The directive as the dump shows it."""
    if isinstance(directive, Pipeline):
        return f"pipeline II={directive.ii}"
    if isinstance(directive, Unroll):
        return "unroll" if directive.factor is None else f"unroll x{directive.factor}"
    if isinstance(directive, Partition):
        factor = "" if directive.kind == "complete" else f" {directive.factor}"
        return f"partition dim {directive.dim or 'all'} {directive.kind}{factor}"
    if isinstance(directive, Stream):
        return f"stream depth {directive.depth}"
    if isinstance(directive, Dependence):
        return f"no {directive.kind} dependence"
    return type(directive).__name__.lower()
