"""RTL benchmark: bit-exactness, cycles (RTL against the performance model), PE utilization, Verilator
build and run times on the test models, and Yosys resources of the example's accelerator.

    python bench/rtl.py [--models digits,mnist,residual,mobilenet] [--targets systolic16x16,systolic8x8]
                        [--images N] [--synth systolic16x16] [--json results.json]

Each model (sim/models.py: the example, mnist-8, the zoo's residual and mobilenet) is built with
`hlsgen build` and simulated by `hlsgen.rtl.sim` on its test images (all of them unless --images): the
Verilator build is timed from scratch (only the Verilator runtime library is shared between builds);
"run s" is the whole simulator process, cycles/s the free-running simulation speed (cocotb's own timing,
without the process start-up). `--synth` runs Yosys `synth_xilinx -flatten` on the example's generated
top for each target named (the target's family: xc7 for Zynq-7000, xcup for UltraScale+).
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from hlsgen.cli import main  # noqa: E402
from hlsgen.hw import load_target  # noqa: E402
from hlsgen.rtl.sim import simulate  # noqa: E402

sys.path.insert(0, str(ROOT / "sim"))
from models import model_files  # noqa: E402


def build(name: str, target: str, scratch: Path) -> tuple[Path, Path]:
    folder = scratch / f"{name}_{target}"
    folder.mkdir()
    model, calib, test = model_files(name, folder)
    out = folder / "build"
    if main(["build", str(model), "--target", target, "--calib", str(calib), "-o", str(out), "-q"]) != 0:
        raise SystemExit(f"hlsgen build failed on {name} for {target}")
    return out, test


def simulate_row(name: str, target: str, scratch: Path, images: int | None) -> dict:
    out, test = build(name, target, scratch)
    result = simulate(out, test, images, scratch / "sim_build")
    report = json.loads((out / "report.json").read_text())
    total, measured = report["total"], report["rtl_simulation"]["without_backpressure"]
    simulated = result.images * result.cycles_per_inference
    return {
        "model": name, "target": target, "images": result.images, "integers": result.compared,
        "bit_exact": not result.mismatches, "cycles_rtl": result.cycles_per_inference,
        "cycles_model": result.model_cycles,
        "gap": round((result.cycles_per_inference - result.model_cycles) / result.model_cycles, 4),
        "utilization_rtl": measured["utilization"], "utilization_model": total["utilization"],
        "verilator_build_s": round(result.build_seconds, 1), "run_s": round(result.run_seconds, 2),
        "sim_s": round(result.sim_seconds, 3), "cycles_per_s": round(simulated / max(result.sim_seconds, 1e-3)),
        "layers": [(layer["name"], layer["cycles"], measured["layers"].get(layer["name"], {}).get("cycles"))
                   for layer in report["layers"]],
    }


def synth_row(target: str, scratch: Path) -> dict:
    from hlsgen.rtl.synth import synthesize

    out, _ = build("digits", target, scratch / "synth")
    files = sorted((out / "rtl").glob("*.v"))
    top = next(f.stem for f in files if f.stem.endswith("_top"))
    family = "xc7" if load_target(target).device.part.startswith("xc7") else "xcup"
    resources = synthesize([f for f in files if not f.stem.endswith("_tb")], top, scratch / f"yosys_{target}",
                           sorted((out / "rtl").glob("*.mem")), family)
    device = load_target(target).device
    return {"target": target, "top": top, "family": family, **resources.to_json(),
            "device": {"part": device.part, "lut": device.lut, "ff": device.ff, "dsp": device.dsp,
                       "bram_18k": device.bram_18k}}


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="digits,mnist,residual,mobilenet")
    parser.add_argument("--targets", default="systolic16x16,systolic8x8")
    parser.add_argument("--images", type=int, default=None)
    parser.add_argument("--synth", default="systolic16x16", help="targets to synthesize the example for ('' for none)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="hlsgen-bench-rtl-"))
    (scratch / "synth").mkdir()
    rows, synth = [], []
    try:
        print(f"{'model':<10} {'target':<14} {'images':>6} {'exact':>5} {'RTL cyc':>8} {'model':>8} {'gap':>6} "
              f"{'util':>6} {'build s':>7} {'run s':>6} {'cyc/s':>8}")
        for target in filter(None, args.targets.split(",")):
            for name in filter(None, args.models.split(",")):
                row = simulate_row(name, target, scratch, args.images)
                rows.append(row)
                print(f"{name:<10} {target:<14} {row['images']:>6} {str(row['bit_exact']):>5} {row['cycles_rtl']:>8,} "
                      f"{row['cycles_model']:>8,} {row['gap']:>+6.1%} {row['utilization_rtl']:>6.1%} "
                      f"{row['verilator_build_s']:>7.1f} {row['run_s']:>6.2f} {row['cycles_per_s']:>8,}", flush=True)
        for target in filter(None, args.synth.split(",")):
            row = synth_row(target, scratch)
            synth.append(row)
            print(f"yosys synth_xilinx ({row['family']}) of {row['top']} for {target}: {row['lut']:,} LUT (+{row['lutram']:,} "
                  f"as RAM, {row['srl']:,} as shift registers), {row['ff']:,} FF, {row['dsp']} DSP, {row['bram_18k']} BRAM18 "
                  f"({row['seconds']:.0f} s)", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps({"simulation": rows, "synthesis": synth}, indent=1) + "\n")


if __name__ == "__main__":
    main_bench()
