"""Does `hlsgen build` take the published architectures of hlsgen/architectures.py, and how fast do they
run? One line per model and target: the exit code and the one-line message (or "built"), the model's
parameters and MACs, the build time, the performance model's cycles per inference, ideal cycles
(MACs / (R x C)) and utilization, the DRAM bytes per inference (weights + feature maps) and residency.
With --simulate, each built design is also run: C-sim (g++ compile and run seconds, bit-exact) and the
RTL on one image against the AXI RAM model at the port's sustained rate (Verilator build and run seconds,
RTL cycles against the model's, RTL-measured utilization) and again with random backpressure on every
channel (bit-exact, slower).

    python bench/architectures.py [--models resnet8,ds_cnn,...] [--targets systolic8x8,...] [--calib-samples N]
                                  [--simulate]

Each build is `hlsgen build MODEL --target T --calib CALIB -o OUT -q` (8 bits, no --verify) in its own
process, calibrated on the model's own synthetic inputs (`architectures.calibration_data`).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

import numpy as np  # noqa: E402
import onnx  # noqa: E402

import hlsgen  # noqa: E402
from hlsgen.architectures import ARCHITECTURES, calibration_data  # noqa: E402

TARGETS = ("systolic8x8", "systolic16x16", "systolic32x32")
RUN_CLI = "import sys; from hlsgen.cli import main; sys.exit(main(sys.argv[1:]))"


def write_model(name: str, folder: Path, samples: int) -> tuple[Path, Path, int, int]:
    """The model's .onnx and calibration .npz in `folder`, and its parameters and MACs (hlsgen's optimized graph)."""
    model = ARCHITECTURES[name]()
    path, calib = folder / f"{name}.onnx", folder / f"{name}_calib.npz"
    onnx.save_model(model, str(path))
    np.savez(calib, **{model.graph.input[0].name: calibration_data(model, n=samples)})
    costs = hlsgen.load_onnx(path).optimize().costs()
    return path, calib, sum(c.params for c in costs), sum(c.macs for c in costs)


def build(path: Path, calib: Path, target: str, out: Path) -> tuple[int, str, float]:
    """Exit code, the last line hlsgen printed (its one-line error) or "built", and the wall time."""
    start = time.perf_counter()
    argv = ["build", str(path), "--target", target, "--calib", str(calib), "-o", str(out), "-q"]
    done = subprocess.run([sys.executable, "-c", RUN_CLI, *argv], cwd=ROOT, capture_output=True, text=True)
    lines = [line for line in (done.stderr + done.stdout).splitlines() if line.strip()]
    message = "built" if done.returncode == 0 else (lines[-1] if lines else "(no message)")
    return done.returncode, message, time.perf_counter() - start


def performance(out: Path) -> str:
    """The performance model's figures of a build folder (report.json)."""
    total = json.loads((out / "report.json").read_text())["total"]
    moved = total["dram_bytes_by_what"]
    where = "/".join(f"{k[0]}:{v}" for k, v in total["residency"].items())
    return (f"cycles {total['cycles']:,} ideal {total['ideal_cycles']:,} util {total['utilization']:.1%} "
            f"DRAM {moved['weights']:,} w + {moved['feature_maps']:,} fm bytes [{where}]")


def simulated(out: Path, rows: int, cols: int, macs: int) -> str:
    """C-sim and RTL (one image, AXI RAM with backpressure) of a build folder: times, cycles, verdicts."""
    from hlsgen.hls.verify import csim_build
    from hlsgen.rtl.sim import simulate
    parts = []
    try:
        c = csim_build(out)
        parts.append(f"csim {c.compile_seconds:.0f}+{c.run_seconds:.0f} s exact {c.compared:,}")
    except Exception as e:  # noqa: BLE001 - the bench reports every failure and goes on
        parts.append(f"csim FAILED: {str(e).splitlines()[0][:100]}")
    try:
        r = simulate(out, images=1)  # the DRAM model at the port's sustained rate: the cycles to compare
        jammed = simulate(out, images=1, backpressure=True)  # random pauses on every channel: still exact?
        bad = len(r.mismatches) + len(jammed.mismatches)
        ok = "exact" if not bad else f"{bad} MISMATCHES"
        rtl = r.cycles_per_inference
        parts.append(f"rtl {r.build_seconds:.0f}+{r.run_seconds:.0f} s {ok} cycles {rtl:,} "
                     f"(model {r.model_cycles:,}, {rtl / r.model_cycles - 1:+.1%}; backpressure "
                     f"{jammed.cycles_per_inference:,}) util {macs / (rtl * rows * cols):.1%}")
    except Exception as e:  # noqa: BLE001
        parts.append(f"rtl FAILED: {str(e).splitlines()[0][:100]}")
    return "; ".join(parts)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(ARCHITECTURES), help="comma-separated architecture names")
    parser.add_argument("--targets", default=",".join(TARGETS), help="comma-separated target names")
    parser.add_argument("--calib-samples", type=int, default=16, help="calibration samples per model")
    parser.add_argument("--simulate", action="store_true", help="also run C-sim and the RTL on every built design")
    args = parser.parse_args(argv)
    print(f"{'model':<20} {'target':<14} {'params':>11} {'MACs':>14} {'exit':>4} {'s':>6}  message")
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        for name in args.models.split(","):
            path, calib, params, macs = write_model(name, scratch, args.calib_samples)
            for target in args.targets.split(","):
                out = scratch / f"{name}_{target}"
                code, message, seconds = build(path, calib, target, out)
                if code == 0:
                    message = performance(out)
                    if args.simulate:
                        side = int(target.removeprefix("systolic").split("x")[0])
                        message += "\n" + " " * 72 + simulated(out, side, side, macs)
                print(f"{name:<20} {target:<14} {params:>11,} {macs:>14,} {code:>4} {seconds:>6.1f}  {message}",
                      flush=True)


if __name__ == "__main__":
    main()
