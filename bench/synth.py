"""Resources measured by open-tool synthesis against the performance model's estimate, Fmax after routing and
images/s at that clock, per target and model (`hlsgen build` then `hlsgen synth`).

    python bench/synth.py [--targets systolic8x8,ecp5_8x8] [--models digits] [--batch 8] [--json out.json]

Xilinx targets run Yosys synth_xilinx (resources; no router, so images/s stays at the target's clock);
ECP5 targets run synth_ecp5 and nextpnr-ecp5 (minutes each). Images/s at batch N are the cycles of a --batch N
build of the same model at the batch-1 build's measured clock (the batched RTL differs only in its sequencer's
image counts; it is not synthesized again). Models are the bundled digits
example (calibrated on examples/digits/calib.npz) and hlsgen/architectures.py's on their synthetic inputs.
"""
from __future__ import annotations

import argparse
import json
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
from hlsgen.synth_flow import synthesize_build  # noqa: E402

KEYS = ("lut", "ff", "dsp", "bram")


def model_files(name: str, scratch: Path) -> tuple[Path, Path]:
    """(model.onnx, calib.npz) of a bench model."""
    if name == "digits":
        return ROOT / "examples" / "digits" / "digits.onnx", ROOT / "examples" / "digits" / "calib.npz"
    model = ARCHITECTURES[name]()
    path = scratch / f"{name}.onnx"
    onnx.save(model, path)
    np.savez(scratch / f"{name}_calib.npz", **{model.graph.input[0].name: calibration_data(model, n=16, seed=0)})
    return path, scratch / f"{name}_calib.npz"


def build(model: Path, calib: Path, target: str, out: Path, batch: int = 1) -> float:
    start = time.perf_counter()
    code = main(["build", str(model), "--target", target, "--calib", str(calib), "--batch", str(batch),
                 "-o", str(out), "-q"])
    if code != 0:
        raise SystemExit(f"hlsgen build {model.name} --target {target} --batch {batch} failed (exit {code})")
    return time.perf_counter() - start


def row(name: str, target: str, batch: int, scratch: Path) -> dict:
    model, calib = model_files(name, scratch)
    out = scratch / f"{name}_{target}"
    build(model, calib, target, out)
    start = time.perf_counter()
    synth = synthesize_build(out)
    seconds = time.perf_counter() - start
    total = json.loads((out / "report.json").read_text())["total"]
    result = {"model": name, "target": target, "flow": synth["flow"], "measured": synth["measured"],
              "estimated": synth["estimated"], "device": synth["device"], "fmax_mhz": synth["fmax_mhz"],
              "clock": total["clock"], "timing_met": synth["timing_met"], "critical_path": synth["critical_path"],
              "images_per_s": {"1": total["images_per_s"]}, "tool_seconds": synth["seconds"],
              "wall_seconds": round(seconds, 1)}
    if batch > 1:
        batched = scratch / f"{name}_{target}_b{batch}"
        build(model, calib, target, batched, batch)
        cycles = json.loads((batched / "report.json").read_text())["total"]["cycles"]
        result["images_per_s"][str(batch)] = round(batch * total["clock"]["mhz"] * 1e6 / cycles, 1)
    return result


def show(r: dict) -> None:
    cells = "  ".join(f"{k.upper()} {r['measured'][k]:,}/{r['estimated'][k]:,}/{r['device'][k]:,}" for k in KEYS)
    fmax = f"Fmax {r['fmax_mhz']:g} MHz ({'met' if r['timing_met'] else 'NOT met'})" if r["fmax_mhz"] else \
        "Fmax: no router"
    rates = ", ".join(f"batch {b}: {v:,.0f}" for b, v in r["images_per_s"].items())
    tools = ", ".join(f"{k} {v:g} s" for k, v in r["tool_seconds"].items() if v is not None)
    print(f"{r['model']:<10} {r['target']:<14} {r['flow']}")
    print(f"    measured/estimated/device: {cells}")
    print(f"    {fmax}; images/s at {r['clock']['mhz']:g} MHz ({r['clock']['source']}): {rates}; {tools}")
    if r["critical_path"]:
        print(f"    critical path {r['critical_path']['from']} -> {r['critical_path']['to']} "
              f"({r['critical_path']['ns']:g} ns)")


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", default="systolic8x8,ecp5_8x8")
    parser.add_argument("--models", default="digits")
    parser.add_argument("--batch", type=int, default=8, help="also images/s at this batch (1: latency mode only)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="hlsgen-bench-synth-") as scratch:
        for name in args.models.split(","):
            for target in args.targets.split(","):
                rows.append(row(name, target, args.batch, Path(scratch)))
                show(rows[-1])
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main_bench()
