"""The host side's cost per inference: each model built with `--program external` runs through
hlsgen.runtime.Accelerator on the `rtl` backend (the driver's register sequence against the Verilated target's
top in the C++ harness, inputs and outputs through memory) and through the generated C driver linked into the
same harness, printing per model and target:

- the device's cycles per inference (CYCLES: START to DONE, the input read from and the outputs written to
  memory, at the target's read latency) against the performance model's (input stream + layers + output stream);
- the driver's overhead in cycles (the harness's simulated cycles per inference beyond CYCLES: register writes,
  the reads of CONTROL and CYCLES; copies into the harness's memory take no simulated time, as a CPU's stores);
- wall time per inference: the Python runtime on the Verilated RTL, of it the host side alone (quantize, the
  driver's steps, dequantize: the runtime's time outside the harness's calls), and the C driver's application;
- the harness's build time (first and cached).

    python bench/runtime.py [--models digits:systolic8x8,resnet8:systolic16x16,ds_cnn:systolic16x16] [--images N]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

import numpy as np  # noqa: E402
import onnx  # noqa: E402

from hlsgen.architectures import ARCHITECTURES, calibration_data  # noqa: E402
from hlsgen.build_folder import load_build  # noqa: E402
from hlsgen.cli import main  # noqa: E402
from hlsgen.runtime import Accelerator  # noqa: E402
from hlsgen.runtime.c_app import build_app, run_app  # noqa: E402

EXAMPLE = ROOT / "examples" / "digits"


def build(name: str, target: str, folder: Path) -> tuple[Path, dict[str, np.ndarray]]:
    if name == "digits":
        model_path, calib = EXAMPLE / "digits.onnx", EXAMPLE / "calib.npz"
        test = {"image": np.load(EXAMPLE / "test.npz")["image"]}
    else:
        model = ARCHITECTURES[name]()
        model_path, calib = folder / f"{name}.onnx", folder / f"{name}_calib.npz"
        onnx.save_model(model, str(model_path))
        np.savez(calib, **{model.graph.input[0].name: calibration_data(model, n=16, seed=0)})
        test = {model.graph.input[0].name: calibration_data(model, n=32, seed=1)}
    out = folder / f"{name}_{target}"
    if main(["build", str(model_path), "--target", target, "--calib", str(calib), "-o", str(out), "-q",
             "--program", "external"]):
        raise SystemExit(f"{name} does not build for {target} with --program external")
    return out, test


def measure(name: str, target: str, images: int, folder: Path) -> None:
    out, test = build(name, target, folder)
    x = {k: v[:images] for k, v in test.items()}
    quantized = load_build(out)
    model_cycles = int(__import__("json").loads((out / "program.json").read_text())["cycles"]["total"])
    with Accelerator(out, "reference") as reference:
        want = reference.run(x)
    with Accelerator(out, "rtl") as rtl:
        start = time.perf_counter()
        rtl.run({k: v[:1] for k, v in x.items()})  # builds (or finds) the harness, loads the program
        first_s = time.perf_counter() - start
        harness = rtl._platform
        in_harness = timed(harness)
        cycles, overhead = [], []
        start = time.perf_counter()
        got = []
        for k in range(images):
            before = harness.cycles()
            got.append(rtl.run({n: v[k:k + 1] for n, v in x.items()}))
            cycles.append(rtl.last_cycles)
            overhead.append(harness.cycles() - before - rtl.last_cycles)
        rtl_s = (time.perf_counter() - start) / images
        host_s = rtl_s - in_harness[0] / images
    exact = all(np.array_equal(np.concatenate([g[o] for g in got]), want[o]) for o in want)
    work = folder / f"app_{name}"
    start = time.perf_counter()
    app = build_app([out], work)
    app_build_s = time.perf_counter() - start
    start = time.perf_counter()
    ints = quantized.quantize_inputs(x)[quantized.graph.inputs[0]]
    runs = run_app(app, [out], [ints], work)
    app_s = time.perf_counter() - start
    c_cycles = runs[0].cycles
    print(f"{name} on {target}: {images} image(s), bit-exact {'yes' if exact else 'NO'}; program load "
          f"{runs[0].load_cycles:,} cycles")
    print(f"  device cycles per inference (CYCLES) {np.mean(cycles):,.0f} (C driver {np.mean(c_cycles):,.0f}); "
          f"performance model {model_cycles:,} ({(np.mean(cycles) / model_cycles - 1) * 100:+.1f}%)")
    print(f"  driver overhead per inference: {np.mean(overhead):,.0f} cycles beyond CYCLES (register traffic)")
    print(f"  wall per inference: runtime on the RTL {rtl_s * 1e3:,.1f} ms, host side of the runtime "
          f"{host_s * 1e3:,.2f} ms, C driver application "
          f"{app_s / images * 1e3:,.1f} ms (with its load)")
    print(f"  harness: first run (build or cache, load) {first_s:,.1f} s; C application build {app_build_s:,.1f} s")


def timed(harness) -> list[float]:
    """Wrap the harness's operations to add up the wall time spent in them (the simulation and its pipe)."""
    spent = [0.0]
    for name in ("read", "write", "copy_to", "copy_from", "wait"):
        def wrapper(*args, _inner=getattr(harness, name)):
            start = time.perf_counter()
            try:
                return _inner(*args)
            finally:
                spent[0] += time.perf_counter() - start
        setattr(harness, name, wrapper)
    return spent


def bench(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="digits:systolic8x8,resnet8:systolic16x16,ds_cnn:systolic16x16")
    parser.add_argument("--images", type=int, default=8)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("HLSGEN_CACHE", str(Path(tmp) / "cache"))
        for spec in args.models.split(","):
            name, target = spec.split(":")
            measure(name, target, args.images, Path(tmp))


if __name__ == "__main__":
    bench()
