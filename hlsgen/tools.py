"""The external programs the simulations run: found on PATH, or a one-line ToolError (exit 4)."""
from __future__ import annotations

import os
import shutil

from .errors import ToolError


def require_tool(name: str, purpose: str, hint: str) -> str:
    """`name` when it is on PATH; otherwise a ToolError saying what needs it and how to get it."""
    if shutil.which(name) is None:
        raise ToolError(f"{name} not found: {purpose} ({hint})")
    return name


def cxx_compiler(purpose: str) -> str:
    """The C++ compiler: $CXX, else g++."""
    return require_tool(os.environ.get("CXX", "g++"), purpose, "install g++, or set CXX to a C++14 compiler")
