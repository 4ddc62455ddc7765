"""The `hlsgen` command (and `python -m hlsgen`): the CLI behind a guard for Ctrl-C and SIGTERM.

Loading the CLI takes a second or more (numpy, onnx, the compiler); a Ctrl-C in that time ended in Python's
traceback of the import. Here it ends as during a build: one line, exit 130 (SIGTERM: 143) (hlsgen.guard)."""
from __future__ import annotations

from .guard import guarded


def entry_point() -> None:
    guarded(_load_cli)


def _load_cli():
    from .cli import main
    return main


if __name__ == "__main__":
    entry_point()
