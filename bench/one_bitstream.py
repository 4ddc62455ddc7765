"""One bitstream, many models: builds each model for one target with `--program external`, checks that every
.v file is byte-identical across them, Verilates the target's top once and runs the models one after another
in one simulation (LOAD model A, START its images, check; LOAD model B, START, check; ...), printing per model
the program and weight image bytes, the load cycles, the inference cycles (START to DONE, the AXI RAM at the
port's sustained rate with its own 2-cycle latency) against the performance model's, and bit-exactness.

    python bench/one_bitstream.py [--target systolic16x16] [--models resnet8,ds_cnn] [--images N]
                                  [--backpressure]

Models are hlsgen/architectures.py's, calibrated on their own synthetic inputs.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

import numpy as np  # noqa: E402
import onnx  # noqa: E402

from hlsgen.architectures import ARCHITECTURES, calibration_data  # noqa: E402
from hlsgen.cli import main  # noqa: E402
from hlsgen.rtl.overlay_sim import run_models  # noqa: E402


def build(name: str, target: str, folder: Path) -> tuple[Path, float]:
    model = ARCHITECTURES[name]()
    path, calib = folder / f"{name}.onnx", folder / f"{name}_calib.npz"
    onnx.save_model(model, str(path))
    np.savez(calib, **{model.graph.input[0].name: calibration_data(model, n=16, seed=0)})
    start = time.perf_counter()
    out = folder / name
    code = main(["build", str(path), "--target", target, "--calib", str(calib), "-o", str(out), "-q",
                 "--program", "external"])
    if code:
        raise SystemExit(f"{name} does not build for {target} with --program external (exit {code})")
    return out, time.perf_counter() - start


def bench(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="systolic16x16")
    parser.add_argument("--models", default="resnet8,ds_cnn")
    parser.add_argument("--images", type=int, default=1)
    parser.add_argument("--backpressure", action="store_true")
    args = parser.parse_args(argv)
    names = args.models.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        built = [build(name, args.target, folder) for name in names]
        sources = [sorted((out / "rtl").glob("*.v")) for out, _ in built]
        identical = all(a.read_bytes() == b.read_bytes() for other in sources[1:] for a, b in zip(sources[0], other))
        print(f"target {args.target}: {len(sources[0])} .v files, byte-identical across {', '.join(names)}: "
              f"{'yes' if identical else 'NO'}")
        start = time.perf_counter()
        seconds, runs = run_models([out for out, _ in built], folder / "overlay", args.images, args.backpressure)
        print(f"one Verilator build: {seconds:.1f} s; the models one after another in one simulation: "
              f"{time.perf_counter() - start - seconds:.1f} s")
        print(f"{'model':<22}{'build s':>8}{'program B':>11}{'weights B':>11}{'load cyc':>10}{'inference cyc':>15}"
              f"{'model cyc':>11}{'gap':>8}  bit-exact")
        for name, (_, build_s), run in zip(names, built, runs):
            cycles = max(run.cycles)
            print(f"{name:<22}{build_s:>8.1f}{run.program_bytes:>11,}{run.weight_bytes:>11,}{run.load_cycles:>10,}"
                  f"{cycles:>15,}{run.model_cycles:>11,}{(cycles - run.model_cycles) / run.model_cycles:>+8.1%}  "
                  f"{'yes' if run.mismatches == 0 else f'NO ({run.mismatches} of {run.compared})'}"
                  f" ({run.compared} integers)")


if __name__ == "__main__":
    bench()
