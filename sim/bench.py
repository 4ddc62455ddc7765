"""Shared plumbing of the cocotb benches: build a module with Verilator (cached under sim_build/),
run the cocotb tests of a bench file on it, and hand them their configuration.

The same file holds a bench's cocotb coroutines and the pytest function that runs them; the coroutines
read their configuration with `config()`.
"""
from __future__ import annotations

import hashlib
import json
import os
import random
from pathlib import Path

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles

from hlsgen.rtl import rtl_sources
from hlsgen.rtl.runner import Design, build, run

ROOT = Path(__file__).resolve().parent.parent
CONFIG_VAR = "HLSGEN_BENCH"


def build_root() -> Path:
    """Where the benches' Verilator builds are cached: a folder per pytest-xdist worker, so that two workers
    never build one design folder at once."""
    root = Path(os.environ.get("HLSGEN_SIM_BUILD", ROOT / "sim_build"))
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    return root / worker if worker else root


def design(toplevel: str, parameters: dict | None = None, sources: list[Path] | None = None) -> Design:
    parameters = dict(parameters or {})
    tag = hashlib.sha1(json.dumps(sorted(parameters.items())).encode()).hexdigest()[:10]
    return Design(toplevel, sources or rtl_sources(), build_root() / f"{toplevel}_{tag}", parameters)


def run_bench(bench_file: str, toplevel: str, parameters: dict | None = None, config: dict | None = None,
              testcase: str | None = None) -> None:
    """Build `toplevel` with `parameters` and run the cocotb tests in `bench_file`; fail on any failure."""
    d = design(toplevel, parameters)
    build(d)
    full = {"parameters": parameters or {}, **(config or {})}
    tests, failed = run(d, bench_file, d.build_dir / "run", {CONFIG_VAR: json.dumps(full)}, testcase=testcase,
                        seed=full.get("seed", 1))
    assert tests > 0 and failed == 0, f"{failed} of {tests} cocotb test(s) failed on {toplevel} {parameters}"


def config() -> dict:
    """Inside the simulator: the configuration run_bench passed."""
    return json.loads(os.environ.get(CONFIG_VAR, "{}"))


async def start(dut, reset: str | None = "rst", cycles: int = 2) -> None:
    """Start a 10 ns clock on dut.clk and hold `reset` high for a few cycles."""
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    if reset is not None:
        getattr(dut, reset).value = 1
        await ClockCycles(dut.clk, cycles)
        getattr(dut, reset).value = 0


def pack(values, width: int) -> int:
    """Lanes (lane 0 in the low bits) of two's-complement `width`-bit integers, as one integer."""
    word, mask = 0, (1 << width) - 1
    for i, v in enumerate(values):
        word |= (int(v) & mask) << (i * width)
    return word


def unpack(word: int, lanes: int, width: int, signed: bool = True) -> list[int]:
    mask = (1 << width) - 1
    out = []
    for i in range(lanes):
        v = (int(word) >> (i * width)) & mask
        out.append(v - (1 << width) if signed and v >> (width - 1) else v)
    return out


def rng() -> random.Random:
    return random.Random(config().get("seed", 1))


def random_output_range(gen: random.Random, bits: int) -> tuple[int, int, int]:
    """A requantizer's (zero point, lo, hi) for a random signed or unsigned `bits`-wide output: mostly the
    full range with zero point 0, sometimes a narrower clamp (a fused ReLU/Clip) or another zero point."""
    signed = gen.random() < 0.5
    qlo, qhi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    zp = gen.randint(qlo, qhi) if gen.random() < 0.3 else 0
    lo = gen.randint(qlo, qhi) if gen.random() < 0.3 else qlo
    hi = gen.randint(lo, qhi) if gen.random() < 0.3 else qhi
    return zp, lo, hi
