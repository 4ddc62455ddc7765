"""The tool processes a build starts, and stopping every one of them when the build is interrupted.

A tool is often a tree: `make` runs `g++`, which runs `cc1plus` and `as`. Python's subprocess kills only the
process it started, so after a Ctrl-C the grandchildren ran on as orphans, burning both cores and writing
object files into the staging folder while it was being removed (the folder could survive the cleanup).
hlsgen therefore becomes a child subreaper (Linux): orphans of its tools are re-parented to hlsgen instead
of init, so they stay its descendants, and the cleanup kills them all before it removes the folder.
"""
from __future__ import annotations

import ctypes
import os
import signal
import time
from pathlib import Path

_PR_SET_CHILD_SUBREAPER = 36
_PROC = Path("/proc")


def adopt_orphans() -> None:
    """Make this process the subreaper of its descendants (a no-op where the kernel has no such thing)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def stop_descendants() -> None:
    """SIGKILL every process below this one and reap the ones that are its children."""
    for pid in _descendants(os.getpid()):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    while True:  # the subreaper's orphans are its children now: reap them, or they stay zombies
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            if not _descendants(os.getpid()):
                return
            time.sleep(0.01)  # killed, not yet dead


def _descendants(root: int) -> list[int]:
    """The live processes below `root`, from /proc (empty where there is no /proc)."""
    parents: dict[int, list[int]] = {}
    try:
        entries = [entry for entry in _PROC.iterdir() if entry.name.isdigit()]
    except OSError:
        return []
    for entry in entries:
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # ended meanwhile
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) ": state, ppid, ...
        if fields[0] != "Z":
            parents.setdefault(int(fields[1]), []).append(int(entry.name))
    found, queue = [], [root]
    while queue:
        for child in parents.get(queue.pop(), []):
            found.append(child)
            queue.append(child)
    return found
