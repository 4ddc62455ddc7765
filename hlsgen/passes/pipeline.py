"""Named graph passes and the pipeline that runs them to a fixpoint.

A pass is a function `(graph) -> bool` that edits the graph in place and returns whether it changed
anything. The pipeline records which passes fired and can run the IR verifier after every pass.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..ir import Graph
from ..reference import verify_graph

PassFn = Callable[[Graph], bool]


@dataclass(frozen=True)
class Pass:
    name: str
    fn: PassFn
    doc: str

    def __call__(self, graph: Graph) -> bool:
        return self.fn(graph)


def graph_pass(fn: PassFn) -> Pass:
    """Decorator: turn `def fold_batchnorm(graph) -> bool` into the named pass 'fold_batchnorm'."""
    return Pass(fn.__name__, fn, (fn.__doc__ or "").strip().splitlines()[0] if fn.__doc__ else "")


@dataclass
class PassLog:
    """How often each pass changed the graph, in pipeline order."""

    fired: dict[str, int] = field(default_factory=dict)
    rounds: int = 0

    def record(self, name: str, changed: bool) -> None:
        self.fired.setdefault(name, 0)
        if changed:
            self.fired[name] += 1


def run_pipeline(graph: Graph, passes: list[Pass], verify_each: bool = False, max_rounds: int = 20) -> PassLog:
    """Run `passes` in order, repeatedly, until none changes the graph."""
    log = PassLog()
    for _ in range(max_rounds):
        log.rounds += 1
        changed_any = False
        for p in passes:
            changed = bool(p(graph))
            log.record(p.name, changed)
            if changed:
                graph.prune_tensors()
                if verify_each:
                    verify_graph(graph)
            changed_any |= changed
        if not changed_any:
            break
    graph.sort()
    return log
