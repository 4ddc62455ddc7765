"""Checks of user-given paths, with the one-line errors (exit 6) the CLI prints."""
from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

from .errors import HlsgenError, PathError


def require_file(path: str | os.PathLike, what: str = "file") -> Path:
    """`path` as a Path when it names an existing file; otherwise a PathError that says what is wrong."""
    p = Path(path)
    if p.is_dir():
        raise PathError(f"{p}: is a directory, expected {what}")
    if not p.is_file():
        raise PathError(f"{p}: no such {what}")
    return p


def cache_dir(kind: str) -> Path:
    """hlsgen's cache of `kind` (Verilator builds, the runtime's harness): $HLSGEN_CACHE/kind, else
    ~/.cache/hlsgen/kind ($XDG_CACHE_HOME for ~/.cache). Entries are keyed by their content and written
    whole by one rename, so builds running at once share it safely."""
    base = os.environ.get("HLSGEN_CACHE")
    if base:
        return Path(base) / kind
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hlsgen" / kind


def replace_text(path: Path, text: str) -> None:
    """Write `path` whole or not at all: `hlsgen csim/sim/report` rewrite files of a finished build, which a
    full disk or a kill must not leave truncated (write_text truncates first). The text goes to a new file
    beside it that then replaces it in one rename."""
    path = Path(path)
    spare = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        spare.write_text(text)
        os.replace(spare, path)
    except OSError as exc:  # the error names the user's file, not the spare one
        spare.unlink(missing_ok=True)
        raise OSError(exc.errno, exc.strerror, str(path)) from None


@contextmanager
def reading_build(folder: Path):
    """Files of a build folder that do not read back (edited, truncated, written by another version) make it
    a wrong build folder (exit 6), whatever the JSON, zip or numpy reader raised: one line that says to
    rebuild. (An EOFError must not escape either: click would report it as a Ctrl-C.)"""
    try:
        yield
    except HlsgenError:
        raise
    except Exception as exc:
        text = " ".join(str(exc).split())[:120]
        raise PathError(f"{folder} is not a readable hlsgen build folder ({type(exc).__name__}: {text}); "
                        "rebuild it with `hlsgen build`") from None
