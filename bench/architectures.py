"""Does `hlsgen build` take the published architectures of hlsgen/architectures.py? One line per model and
target: the exit code and the one-line message (or "built"), with the model's parameters and MACs. This is
the baseline issue 13 burns down.

    python bench/architectures.py [--models resnet8,ds_cnn,...] [--targets systolic8x8,...] [--calib-samples N]

Each build is `hlsgen build MODEL --target T --calib CALIB -o OUT -q` (8 bits, no --verify) in its own
process, calibrated on the model's own synthetic inputs (`architectures.calibration_data`).
"""
from __future__ import annotations

import argparse
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(ARCHITECTURES), help="comma-separated architecture names")
    parser.add_argument("--targets", default=",".join(TARGETS), help="comma-separated target names")
    parser.add_argument("--calib-samples", type=int, default=16, help="calibration samples per model")
    args = parser.parse_args(argv)
    print(f"{'model':<20} {'target':<14} {'params':>11} {'MACs':>14} {'exit':>4} {'s':>6}  message")
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        for name in args.models.split(","):
            path, calib, params, macs = write_model(name, scratch, args.calib_samples)
            for target in args.targets.split(","):
                code, message, seconds = build(path, calib, target, scratch / f"{name}_{target}")
                print(f"{name:<20} {target:<14} {params:>11,} {macs:>14,} {code:>4} {seconds:>6.1f}  {message}",
                      flush=True)


if __name__ == "__main__":
    main()
