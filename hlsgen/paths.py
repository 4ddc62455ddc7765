"""Checks of user-given paths, with the one-line errors (exit 6) the CLI prints."""
from __future__ import annotations

import os
from pathlib import Path

from .errors import PathError


def require_file(path: str | os.PathLike, what: str = "file") -> Path:
    """`path` as a Path when it names an existing file; otherwise a PathError that says what is wrong."""
    p = Path(path)
    if p.is_dir():
        raise PathError(f"{p}: is a directory, expected {what}")
    if not p.is_file():
        raise PathError(f"{p}: no such {what}")
    return p
