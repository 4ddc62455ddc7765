"""C simulation without vendor tools: compile OUT/hls/ and its testbench with g++ and run it.

Headers: the real Xilinx ap_types headers (Apache-2.0) as the hls4ml wheel installs them, when that
package is present; otherwise, or with `portable=True`, hlsgen's own C++14 subset (OUT/hls/portable/).
"""
from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import HlsgenError, MismatchError, PathError
from ..tools import cxx_compiler, refuse_full_disk

PORTABLE_ENV = "HLSGEN_CSIM_PORTABLE"
WARNINGS = ("-Wall", "-Wextra", "-Werror")
# The vendor headers' ap_private constructors read the value they are about to initialize
# (clearUnusedBits); gcc reports that at the generated code's call sites even under -isystem.
VENDOR_WARNING_SWITCHES = ("-Wno-uninitialized", "-Wno-maybe-uninitialized")
SUMMARY = re.compile(r"csim: compared (\d+) output integers of (\d+) samples: (\d+) mismatch")


class CsimMismatch(MismatchError):
    """The design's outputs differ from the integer reference."""


class CsimBuildError(HlsgenError):
    """The generated C++ does not compile or the testbench cannot run: a bug in hlsgen."""

    exit_code = 70


@dataclass(frozen=True)
class Headers:
    kind: str  # "vendor" or "portable"
    flags: tuple[str, ...]
    description: str


@dataclass(frozen=True)
class CsimResult:
    compared: int
    samples: int
    mismatches: int
    log: str
    headers: Headers
    compile_seconds: float
    run_seconds: float


def vendor_headers() -> Path | None:
    """The ap_types folder of an installed hls4ml wheel (holding ap_int.h), if any."""
    try:
        dist = importlib.metadata.distribution("hls4ml")
    except importlib.metadata.PackageNotFoundError:
        return None
    folder = Path(str(dist.locate_file("hls4ml/templates/vivado/ap_types")))
    return folder if (folder / "ap_int.h").is_file() and (folder / "hls_stream.h").is_file() else None


def choose_headers(hls_dir: Path, portable: bool = False) -> Headers:
    vendor = None if portable or os.environ.get(PORTABLE_ENV, "") not in ("", "0") else vendor_headers()
    if vendor is not None:
        version = importlib.metadata.version("hls4ml")
        return Headers("vendor", ("-isystem", str(vendor), *VENDOR_WARNING_SWITCHES),
                       f"Xilinx ap_types headers from hls4ml {version}")
    return Headers("portable", ("-DHLSGEN_PORTABLE", "-I", str(hls_dir / "portable")),
                   "hlsgen's portable ap_int/hls::stream headers")


def top_name(hls_dir: Path) -> str:
    benches = sorted(Path(hls_dir).glob("*_tb.cpp"))
    if len(benches) != 1:
        raise PathError(f"{hls_dir}: expected one *_tb.cpp testbench, found {len(benches)}; rerun `hlsgen build`")
    return benches[0].name[: -len("_tb.cpp")]


def compile_csim(hls_dir: Path, binary: Path, portable: bool = False, trace: bool = False) -> tuple[Headers, float]:
    """Compile the design and its testbench into `binary`; returns the headers used and the seconds taken.
    `trace` defines HLSGEN_TRACE: the top function then logs every layer's output (see trace.py)."""
    hls_dir = Path(hls_dir)
    compiler = cxx_compiler("`hlsgen csim` compiles the C testbench with it")
    top = top_name(hls_dir)
    headers = choose_headers(hls_dir, portable)
    tracing = ("-DHLSGEN_TRACE",) if trace else ()
    # -pthread: a design whose queues overlap runs them on two threads (hlsgen_dataflow.h)
    command = [compiler, "-std=c++14", "-O2", "-pthread", *WARNINGS, *headers.flags, *tracing, "-I", str(hls_dir),
               str(hls_dir / f"{top}.cpp"), str(hls_dir / f"{top}_tb.cpp"), "-o", str(binary)]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        refuse_full_disk(compiler, done.stderr)
        errors = [line for line in done.stderr.splitlines() if "error" in line] or done.stderr.splitlines()
        raise CsimBuildError(f"the generated C++ in {hls_dir} does not compile with {headers.description} "
                             f"(a bug in hlsgen, please report it): {errors[0] if errors else 'no message'}")
    return headers, time.perf_counter() - start


def run_csim(binary: Path, inputs: Path, expected: Path, headers: Headers, compile_seconds: float = 0.0,
             env: dict[str, str] | None = None) -> CsimResult:
    """Run a compiled testbench on a pair of data files (see tbdata) and parse its verdict; `env` adds
    environment variables."""
    start = time.perf_counter()
    done = subprocess.run([str(binary), str(inputs), str(expected)], capture_output=True, text=True,
                          env={**os.environ, **(env or {})})
    seconds = time.perf_counter() - start
    log = done.stdout + done.stderr
    match = SUMMARY.search(done.stdout)
    if match is None or done.returncode not in (0, 1):
        last = log.strip().splitlines()[-1] if log.strip() else f"exit status {done.returncode}"
        raise CsimBuildError(f"the C testbench failed to run: {last}")
    compared, samples, mismatches = map(int, match.groups())
    if (mismatches == 0) != (done.returncode == 0):
        raise CsimBuildError(f"the C testbench's exit status {done.returncode} contradicts its report: {match.group(0)}")
    return CsimResult(compared, samples, mismatches, log, headers, compile_seconds, seconds)
