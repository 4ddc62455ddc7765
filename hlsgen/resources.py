"""Where the data files that ship with hlsgen live: `templates/`, `hw_models/` and `rtl/`.

A wheel carries them inside the package (`hlsgen/_data/`); a source checkout has them at the top level.
"""
from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def data_dir(kind: str) -> Path:
    """The folder of `kind` ("templates", "hw_models" or "rtl")."""
    for candidate in (_PACKAGE / "_data" / kind, _PACKAGE.parent / kind):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"hlsgen's {kind}/ folder is missing from this installation; reinstall hlsgen")
