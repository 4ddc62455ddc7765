"""Whole models on host + accelerator: the exporter-made models of tests/data/exporters built on a target,
with their partition (segments, host nodes, MACs on the accelerator), whole-model quality per output (float
vs quantized, host ops included), the segments' cycles and PE utilization (the array's ideal cycles for the
MACs it runs over the cycles taken), and the wall times of the build, of the C simulation
of every segment and of the RTL simulation of the segments that have RTL.

    python bench/whole_models.py [--models fpn_detector,ssd_uint8_nhwc,...] [--target systolic16x16] [--rtl]
                                 [--json results.json]
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

from hlsgen.cli import main  # noqa: E402
from hlsgen.hls.verify import csim_build  # noqa: E402
from hlsgen.partition.whole import is_partitioned, segment_folder  # noqa: E402
from hlsgen.rtl.sim import sim_build_dir, simulate  # noqa: E402

DATA = ROOT / "tests" / "data" / "exporters"
MODELS = {"fpn_detector": ["--input-shape", "input:1x3x64x64"], "ssd_uint8_nhwc": [], "shufflenet_block": [],
          "conv1d_audio": [], "espcn_sr": ["--input-shape", "input:1x1x32x32"], "focus_silu": [],
          "cls_head_decode": [], "unet_decoder": ["--max-host-macs", "100"], "se_mobilenetv3": [],
          "fpn_bilinear": [], "dwsep_audio1d": []}


def segments_of(out: Path) -> dict[str, Path]:
    if not is_partitioned(out):
        return {"segment0": out}
    report = json.loads((out / "report.json").read_text())
    return {name: segment_folder(out, name) for name in report["segments"]}


def row(name: str, target: str, scratch: Path, rtl: bool) -> dict:
    out = scratch / name
    start = time.perf_counter()
    if main(["build", str(DATA / f"{name}.onnx"), "--calib", str(DATA / f"{name}_calib.npz"), "--target", target,
             "-o", str(out), "-q", *MODELS[name]]) != 0:
        return {"model": name, "error": "build failed"}
    build_s = time.perf_counter() - start
    report = json.loads((out / "report.json").read_text())
    partition = report["partition"]
    quality = report.get("quality") or json.loads((out / "quant.json").read_text())["quality"]
    segments = segments_of(out)
    cycles, ideal, csim_s, rtl_s, rtl_done = 0, 0, 0.0, 0.0, []
    for seg_name, folder in segments.items():
        seg_report = json.loads((folder / "report.json").read_text())
        cycles += seg_report["total"]["cycles"]
        ideal += seg_report["total"]["ideal_cycles"]
        start = time.perf_counter()
        csim_build(folder)
        csim_s += time.perf_counter() - start
        if rtl and (folder / "rtl").is_dir():
            start = time.perf_counter()
            result = simulate(folder, images=2, build_root=sim_build_dir())
            rtl_s += time.perf_counter() - start
            rtl_done.append(f"{seg_name}: {result.cycles_per_inference:,}")
    return {"model": name, "segments": len(segments), "host_nodes": len(partition["host_nodes"]),
            "host_ops": sorted({op for n, op in partition.get("node_ops", {}).items() if n in partition["host_nodes"]}),
            "macs_total": partition["macs_total"],
            "macs_on_accelerator": partition["macs_on_accelerator"], "cycles": cycles,
            "utilization": round(ideal / cycles, 4) if cycles else 0.0,
            "sqnr_db": quality["sqnr_db"], "build_s": round(build_s, 2), "csim_s": round(csim_s, 2),
            "rtl_segments": f"{sum((segments_of(out)[s] / 'rtl').is_dir() for s in segments)}/{len(segments)}",
            "rtl_s": round(rtl_s, 2), "rtl_cycles": rtl_done}


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--target", default="systolic16x16")
    parser.add_argument("--rtl", action="store_true", help="also simulate the segments that have RTL (2 images)")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="hlsgen-bench-whole-") as scratch:
        for name in args.models.split(","):
            r = row(name, args.target, Path(scratch), args.rtl)
            rows.append(r)
            if "error" in r:
                print(f"{name}: {r['error']}")
                continue
            share = r["macs_on_accelerator"] / r["macs_total"]
            sqnr = ", ".join(f"{k} {v:.1f}" for k, v in r["sqnr_db"].items())
            print(f"{name:<18} {r['segments']} segment(s), {r['host_nodes']:>2} host nodes "
                  f"({', '.join(r['host_ops']) or '-'}); MACs on accelerator {share:.1%} of {r['macs_total']:,}; "
                  f"{r['cycles']:,} cycles, PE utilization {r['utilization']:.1%}; SQNR dB {sqnr}; build {r['build_s']} s, csim {r['csim_s']} s; "
                  f"RTL segments {r['rtl_segments']}" + (f", rtl {r['rtl_s']} s ({'; '.join(r['rtl_cycles'])})"
                                                          if args.rtl else ""))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main_()
