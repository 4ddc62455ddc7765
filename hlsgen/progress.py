"""Progress for the steps that can take more than a second. A `Step` is called with a step's name and
returns a context manager that yields a callable for live details ("37 evaluations")."""
from __future__ import annotations

import contextlib
import time
from typing import Callable, ContextManager, Iterator

from rich.console import Console

Detail = Callable[[str], None]
Step = Callable[[str], ContextManager[Detail]]


@contextlib.contextmanager
def silent(name: str) -> Iterator[Detail]:
    """The Step of library calls: no output."""
    yield lambda detail: None


def console_steps(console: Console) -> Step:
    """A spinner with the step's name (and its latest detail) while it runs, its time when done."""

    @contextlib.contextmanager
    def step(name: str) -> Iterator[Detail]:
        start = time.perf_counter()
        with console.status(f"{name}...") as status:
            yield lambda detail: status.update(f"{name}: {detail}")
        console.print(f"[green]done[/] {name} ({time.perf_counter() - start:.1f} s)")

    return step
