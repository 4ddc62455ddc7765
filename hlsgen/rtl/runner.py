"""Build a Verilator model once and run cocotb benches on it, through cocotb's Python runner.

A build is cached in its folder: a stamp holds the hash of every source, parameter and flag, and a
matching stamp next to the executable skips Verilator and make altogether. A build is made in a scratch
folder and renamed into place, so concurrent builds of one design are safe. Verilator's runtime library
(the same for every design, four fifths of a small design's compile time) is compiled once per
Verilator version and copied into each new build folder, where make finds it up to date.

Only the top module's signals are made visible to cocotb (a Verilator control file), not the whole
hierarchy as cocotb's runner would: that keeps Verilator free to optimize inside, for about a third of
the C++ and five times the simulation speed on a whole accelerator.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from .toolchain import require_build_tools, use_tools

STAMP = "hlsgen_build.json"
# -Wall lint stays on, but warnings never stop a simulation build (lint runs separately, strictly).
BUILD_ARGS = ("-Wno-fatal", "-O3", "--x-assign", "fast", "--x-initial", "fast")
# Design-independent objects of the Verilator runtime (cocotb's verilator.o includes Vtop.h: not shared).
RUNTIME_OBJECTS = ("verilated", "verilated_dpi", "verilated_vpi", "verilated_threads")


@dataclass
class Design:
    """A Verilog top with its sources and parameters, built into `build_dir`."""

    toplevel: str
    sources: list[Path]
    build_dir: Path
    parameters: dict = field(default_factory=dict)
    build_args: tuple[str, ...] = BUILD_ARGS

    def fingerprint(self) -> str:
        """Of the sources' names and contents (not their folder: a build folder may be moved), parameters
        and flags."""
        digest = hashlib.sha256()
        for src in self.sources:
            digest.update(Path(src).name.encode() + b"\0" + Path(src).read_bytes())
        digest.update(json.dumps([self.toplevel, sorted(self.parameters.items()), list(self.build_args)],
                                 default=str).encode())
        return digest.hexdigest()


def _verilator_runner():
    from cocotb_tools.runner import Verilator

    class _SharedRuntime(Verilator):
        """cocotb's Verilator runner, plus one step between Verilator and make: the copied runtime
        objects are touched so that make, which makes them depend on the fresh Vtop.mk, keeps them."""

        def _build_command(self):
            verilate, *rest = super()._build_command()
            control = self.build_dir / "public_top.vlt"
            control.write_text(f'`verilator_config\npublic_flat_rw -module "{self.hdl_toplevel}" -var "*"\n')
            verilate = [arg for arg in verilate if arg != "--public-flat-rw"] + [str(control)]
            objects = [str(self.build_dir / f"{name}.{ext}") for name in RUNTIME_OBJECTS for ext in ("d", "o")]
            return [verilate, ["touch", "-c", *objects], *rest]

    return _SharedRuntime()


def build(design: Design, log_file: Path | None = None) -> float:
    """Verilate and compile `design` unless an identical build exists; returns the seconds spent. The build is
    made in a scratch folder beside `build_dir` and renamed into place whole, so processes building the same
    design at once (test workers, two `hlsgen build --verify rtl`) never see a half-made one."""
    stamp = design.build_dir / STAMP
    key = design.fingerprint()
    if _built(design, key):
        os.utime(stamp)  # its last use: prune() keeps the recently used builds
        return 0.0
    require_build_tools()
    use_tools()
    start = time.perf_counter()
    final = design.build_dir
    scratch = final.with_name(f".{final.name}.{os.getpid()}")
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    shared = _runtime_cache(final.parent)
    copy_objects(shared, scratch)
    try:
        _verilator_runner().build(
            sources=[str(s) for s in design.sources], hdl_toplevel=design.toplevel, parameters=design.parameters,
            build_dir=str(scratch), build_args=list(design.build_args), log_file=log_file,
        )
        copy_objects(scratch, shared)
        for header in scratch.glob("*.gch"):  # precompiled headers: ~100 MB each, useless after the build
            header.unlink()
        seconds = time.perf_counter() - start
        (scratch / STAMP).write_text(json.dumps({"key": key, "seconds": seconds}) + "\n")
        if final.exists() and not _built(design, key):  # a stale or unfinished build of another design
            shutil.rmtree(final)
        try:
            scratch.rename(final)
        except OSError:  # another process renamed its identical build into place first
            pass
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return seconds


def _built(design: Design, key: str) -> bool:
    stamp = design.build_dir / STAMP
    try:
        return (design.build_dir / design.toplevel).is_file() and json.loads(stamp.read_text()).get("key") == key
    except (OSError, ValueError):
        return False


def prune(root: Path, prefix: str, keep: int) -> None:
    """Delete all but the `keep` most recently used builds `root/prefix_*` (a cache keyed by content grows
    by one folder per design)."""
    def last_use(folder: Path) -> float:
        try:
            return (folder / STAMP).stat().st_mtime
        except OSError:
            return 0.0

    builds = sorted(root.glob(f"{prefix}_*"), key=last_use, reverse=True)
    for folder in builds[keep:]:
        shutil.rmtree(folder, ignore_errors=True)


def _runtime_cache(root: Path) -> Path | None:
    """Where this Verilator/cocotb/compiler combination keeps its compiled runtime (None with waves on)."""
    if os.environ.get("WAVES", "0") not in ("", "0"):
        return None
    import cocotb

    from .toolchain import verilator_root

    key = "|".join([str(verilator_root()), (verilator_root() / "include" / "verilated.mk").read_text(),
                    cocotb.__version__, shutil.which("c++") or "", os.environ.get("CXXFLAGS", "")])
    return root / f"_runtime_{hashlib.sha1(key.encode()).hexdigest()[:12]}"


def copy_objects(src: Path | None, dst: Path | None, names=RUNTIME_OBJECTS, touch: bool = False) -> None:
    """Copy Verilator's runtime objects `names` (each .d before its .o, each by an atomic rename: a build running
    at the same time sees a whole object or none); `touch`: newer than the makefile that will depend on them."""
    if src is None or dst is None or not src.is_dir():
        return
    dst.mkdir(parents=True, exist_ok=True)
    for name in names:
        obj, dep = src / f"{name}.o", src / f"{name}.d"
        if obj.is_file() and dep.is_file() and not (dst / obj.name).is_file():
            for path in (dep, obj):
                partial = dst / f".{path.name}.{os.getpid()}"
                shutil.copy2(path, partial)
                partial.replace(dst / path.name)
                if touch:
                    (dst / path.name).touch()


def run(design: Design, test_module: str | Path, test_dir: Path, env: dict[str, str] | None = None,
        testcase: str | None = None, log_file: Path | None = None, seed: int | None = None,
        plusargs: list[str] | None = None) -> tuple[int, int]:
    """Run the cocotb tests of `test_module` (a .py file, or an importable module's dotted name) on the
    built design: (tests, failures)."""
    from cocotb_tools.check_results import get_results
    from cocotb_tools.runner import get_runner

    name = str(test_module)
    if name.endswith(".py"):
        module = Path(name)
        if str(module.parent) not in sys.path:  # the runner hands sys.path to the simulator's Python
            sys.path.insert(0, str(module.parent))
        name = module.stem
    use_tools()
    test_dir.mkdir(parents=True, exist_ok=True)
    runner = get_runner("verilator")
    results = runner.test(
        test_module=name, hdl_toplevel=design.toplevel, hdl_toplevel_lang="verilog", build_dir=str(design.build_dir),
        test_dir=str(test_dir), extra_env=env or {}, testcase=testcase, log_file=log_file, seed=seed,
        results_xml=str(test_dir / f"results_{name.rsplit('.', 1)[-1]}.xml"), plusargs=plusargs or [],
    )
    return get_results(Path(results))
