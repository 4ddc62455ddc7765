"""The external programs the simulations run: found on PATH, or a one-line ToolError (exit 4)."""
from __future__ import annotations

import errno
import os
import shutil

from .errors import PathError, ToolError

# How a tool says the disk it writes to is full (the C library's words, as tools print them)
_FULL_DISK = tuple(os.strerror(code) for code in (errno.ENOSPC, errno.EDQUOT))


def require_tool(name: str, purpose: str, hint: str) -> str:
    """`name` when it is on PATH; otherwise a ToolError saying what needs it and how to get it."""
    if shutil.which(name) is None:
        raise ToolError(f"{name} not found: {purpose} ({hint})")
    return name


def cxx_compiler(purpose: str) -> str:
    """The C++ compiler: $CXX, else g++."""
    return require_tool(os.environ.get("CXX", "g++"), purpose, "install g++, or set CXX to a C++14 compiler")


def refuse_full_disk(tool: str, output: str) -> None:
    """A tool that failed because its disk is full is a path problem (exit 6), not a bug or a missing tool:
    raise a PathError naming the tool's own line (which names the file it could not write)."""
    line = next((line for line in output.splitlines() if any(words in line for words in _FULL_DISK)), None)
    if line is not None:
        raise PathError(f"{tool} could not write its files: {line.strip()}; free space there (a full TMPDIR: point "
                        "it at a folder with room) and run again")
