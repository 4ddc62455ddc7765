"""One machine, one schedule: per model and target, the cycles of the performance model and of the RTL
(the same layer program), the weight ROM bits of the RTL and of the C++ at 8 bits and at the widths
`--bits auto` chose, and what the C++ asks Vitis for (estimated DSP / BRAM_18K of the overlay, against
the per-layer dataflow design's).

    python bench/one_machine.py [--models digits,mnist,residual,mobilenet] [--targets systolic8x8,systolic16x16]
                                [--min-sqnr DB] [--json results.json]

`--bits auto` searches widths within 1 point of float accuracy where the model has labels (the example),
else above --min-sqnr dB (default 20: uniform 8-bit reaches 25.9 dB on the zoo residual network) on every output.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from hlsgen.cli import main  # noqa: E402
from hlsgen.rtl.sim import simulate  # noqa: E402

sys.path.insert(0, str(ROOT / "sim"))
from models import model_files  # noqa: E402


def build(name: str, target: str, folder: Path, extra: list[str]) -> tuple[dict, Path]:
    model, calib, test = model_files(name, folder)
    out = folder / f"build{len(list(folder.glob('build*')))}"
    if main(["build", str(model), "--target", target, "--calib", str(calib), "-o", str(out), "-q", *extra]) != 0:
        raise SystemExit(f"hlsgen build {' '.join(extra)} failed on {name} for {target}")
    return json.loads((out / "report.json").read_text()), out


def row(name: str, target: str, scratch: Path, min_sqnr: float) -> dict:
    folder = scratch / f"{name}_{target}"
    folder.mkdir()
    at8, out8 = build(name, target, folder, [])
    budget = ["--max-accuracy-drop", "0.01"] if name == "digits" else ["--min-sqnr", str(min_sqnr)]
    auto, out_auto = build(name, target, folder, ["--bits", "auto", *budget])
    rows = json.loads((out_auto / "program.json").read_text())["rows"]
    dataflow, _ = build(name, target, folder, ["--hls-design", "dataflow"])
    result = simulate(out8, images=1, build_root=scratch / "sim_build")
    d8, da = at8["designs"], auto["designs"]
    return {
        "model": name, "target": target, "rows": len(at8["layers"]),
        "cycles_model": result.model_cycles, "cycles_rtl": result.cycles_per_inference,
        "gap": round((result.cycles_per_inference - result.model_cycles) / result.model_cycles, 4),
        "bit_exact": not result.mismatches,
        "rtl_rom_bits_8": d8["rtl"].get("weight_rom_bits"), "rtl_rom_bits_auto": da["rtl"].get("weight_rom_bits"),
        "hls_rom_bits_8": d8["hls"]["weight_rom_bits"], "hls_rom_bits_auto": da["hls"]["weight_rom_bits"],
        "auto_weight_bits": [r["bits"]["weights"] for r in rows if r["unit"] == "systolic_array"],
        "hls_dsp": d8["hls"]["dsp"], "hls_bram_18k": d8["hls"]["bram_18k"],
        "dataflow_dsp": dataflow["designs"]["hls"]["dsp"], "dataflow_bram_18k": dataflow["designs"]["hls"]["bram_18k"],
    }


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="digits,mnist,residual,mobilenet")
    parser.add_argument("--targets", default="systolic8x8,systolic16x16")
    parser.add_argument("--min-sqnr", type=float, default=20.0)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    rows = []
    print(f"{'model':<10} {'target':<14} {'rows':>4} {'model cyc':>10} {'RTL cyc':>10} {'gap':>7} "
          f"{'RTL ROM 8b':>11} {'RTL ROM auto':>12} {'C++ ROM 8b':>11} {'C++ ROM auto':>12} "
          f"{'C++ DSP':>8} {'C++ BRAM':>9} {'dataflow DSP':>13}")
    with tempfile.TemporaryDirectory() as tmp:
        for target in args.targets.split(","):
            for name in args.models.split(","):
                r = row(name, target, Path(tmp), args.min_sqnr)
                rows.append(r)
                print(f"{r['model']:<10} {r['target']:<14} {r['rows']:>4} {r['cycles_model']:>10,} "
                      f"{r['cycles_rtl']:>10,} {r['gap']:>7.2%} {r['rtl_rom_bits_8'] or 0:>11,} "
                      f"{r['rtl_rom_bits_auto'] or 0:>12,} {r['hls_rom_bits_8']:>11,} {r['hls_rom_bits_auto']:>12,} "
                      f"{r['hls_dsp']:>8,} {r['hls_bram_18k']:>9,} {r['dataflow_dsp']:>13,}  "
                      f"auto widths {r['auto_weight_bits']}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main_()
