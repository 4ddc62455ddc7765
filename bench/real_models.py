"""Real models near the array's limit (issue 28): the ONNX model zoo's mnist-8 and four published architectures
(MLPerf Tiny's image classifier, keyword spotter and visual wake words, MobileNetV2) built on a target twice,
with the model's own top (`hlsgen build`, its default --program auto: rom, or external where the model uses
external memory anyway, as mobilenet_v2 does: the residency's p:r or p:e says which) and with the target's
model-independent top (`--program external`: the layer table and every weight read from external memory).
One row per model,
target and top: the performance model's cycles per inference, ideal cycles (MACs / (R x C)), utilization,
the DRAM bytes per inference (weights + feature maps), where the cycles go and the build's wall time; then a
line per model and target with the target's top's cycles relative to the model's own top's.

Where the cycles go (report.json `total`, hlsgen/hw/report.py and hlsgen/hw/queues.py): the program runs on
two queues. The engines' queue runs the array's rows and the vector unit's rows one after another, so
`array` + `vector` never overlap; an array row's cycles include its waits for weights streamed from external
memory. The DMA queue copies feature-map bands between external memory and the activation memory beside the
engines, so `dma` overlaps them and is not part of the sum. `idle` = cycles - array - vector: the cycles
neither engine runs (the input and output streams, the stream latency, and the engines' waits for the DMA's
copies), so the array is not busy for vector + idle cycles; array + vector + idle = cycles. `idle:wait` is
the part of idle the engines wait on the DMA queue (layer_cycles + overlap - array - vector); the rest is the
streams' (`io_cycles` in the JSON: cycles - layer_cycles - overlap), where `overlap` (report.json
`stream_overlap_cycles`) is the first row's cycles that run while the input streams in (hlsgen.hw.stream_overlap):
the streams' cycles no row runs under. The JSON's `array_cycles_memory_bound` is the cycles of the
array rows whose weight loads from external memory are not hidden (their whole cycles, not only the stall).

With --simulate, each built folder is also run on the RTL with one image (`hlsgen.rtl.sim.simulate`, the AXI
RAM model at the port's sustained rate): the RTL-measured cycles, its utilization (ideal / RTL cycles), the RTL
against the model in %, and the Verilator build and simulation seconds (a build found in the Verilator cache,
$HLSGEN_SIM_BUILD or $HLSGEN_CACHE/verilator, takes 0 s: the target's top is one build for every model).

    python bench/real_models.py [--models mnist,ic_resnet8,kws_ds_cnn,vww_mobilenet_v1,mobilenet_v2]
                                [--targets systolic16x16,...] [--calib-samples N] [--simulate] [--json PATH]

Each build is `hlsgen build MODEL --target T --calib CALIB -o OUT -q [--program external]` (8 bits, no
--verify) in its own process. mnist-8 calibrates on the three test inputs tests/data/mnist-8 ships (pixels
0..255; --calib-samples does not apply), the architectures on `architectures.calibration_data(model, n=N)`.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import numpy_helper  # noqa: E402

from hlsgen import architectures  # noqa: E402

MNIST = ROOT / "tests" / "data" / "mnist-8"
ARCHITECTURES: dict[str, Callable[[], onnx.ModelProto]] = {
    "ic_resnet8": architectures.resnet8,
    "kws_ds_cnn": architectures.ds_cnn,
    "vww_mobilenet_v1": lambda: architectures.mobilenet_v1(alpha=0.25, size=96, classes=2),
    "mobilenet_v2": lambda: architectures.mobilenet_v2(alpha=0.5, size=128),
}
MODELS = ("mnist", *ARCHITECTURES)
TOPS = {"own": [], "target": ["--program", "external"]}  # the model's own top (the default --program) and the target's
RUN_CLI = "import sys; from hlsgen.cli import main; sys.exit(main(sys.argv[1:]))"


def write_model(name: str, folder: Path, samples: int) -> tuple[Path, Path]:
    """The model's .onnx and calibration .npz (written to `folder` unless the model ships with the checkout)."""
    calib = folder / f"{name}_calib.npz"
    if name == "mnist":
        sets = sorted(MNIST.glob("test_data_set_*"))
        images = np.concatenate([numpy_helper.to_array(onnx.load_tensor(str(s / "input_0.pb"))) for s in sets])
        path = MNIST / "model.onnx"
        np.savez(calib, **{onnx.load(str(path)).graph.input[0].name: images})
        return path, calib
    model = ARCHITECTURES[name]()
    path = folder / f"{name}.onnx"
    onnx.save_model(model, str(path))
    np.savez(calib, **{model.graph.input[0].name: architectures.calibration_data(model, n=samples)})
    return path, calib


def build(path: Path, calib: Path, target: str, out: Path, extra: list[str]) -> tuple[int, str, float]:
    """Exit code, the last line hlsgen printed (its one-line error) or "built", and the wall time."""
    start = time.perf_counter()
    argv = ["build", str(path), "--target", target, "--calib", str(calib), "-o", str(out), "-q", *extra]
    done = subprocess.run([sys.executable, "-c", RUN_CLI, *argv], cwd=ROOT, capture_output=True, text=True)
    lines = [line for line in (done.stderr + done.stdout).splitlines() if line.strip()]
    message = "built" if done.returncode == 0 else (lines[-1] if lines else "(no message)")
    return done.returncode, message, time.perf_counter() - start


def figures(out: Path) -> dict:
    """The performance model's figures of a build folder (report.json `total`)."""
    report = json.loads((out / "report.json").read_text())
    total = report["total"]
    cycles, array, vector = total["cycles"], total["array_cycles"], total["vector_cycles"]
    hidden = total["stream_overlap_cycles"]  # the first row's cycles under the input stream
    memory_bound = sum(layer["cycles"] for layer in report["layers"]
                       if layer["unit"] == "systolic_array" and layer["memory_bound"])
    return {"macs": total["macs"], "cycles": cycles, "ideal_cycles": total["ideal_cycles"],
            "utilization": total["utilization"], "dram_bytes": total["dram_bytes_by_what"],
            "array_cycles": array, "vector_cycles": vector, "dma_cycles": total["dma_cycles"],
            "idle_cycles": cycles - array - vector,
            "io_cycles": cycles - total["layer_cycles"] - hidden, "stream_overlap_cycles": hidden,
            "wait_cycles": total["layer_cycles"] + hidden - array - vector,
            "array_cycles_memory_bound": memory_bound,  # of array_cycles: rows whose weight loads are not hidden
            "residency": total["residency"], "weight_bytes": total["weight_bytes"],
            "rows": report["target"]["rows"], "cols": report["target"]["cols"]}


def simulated(out: Path, ideal: int) -> dict:
    """The RTL on one image (the AXI RAM at the port's sustained rate): its cycles against the model's."""
    from hlsgen.rtl.sim import sim_build_dir, simulate
    try:
        r = simulate(out, images=1, build_root=sim_build_dir())
    except Exception as e:  # noqa: BLE001 - the bench reports every failure and goes on
        return {"error": str(e).splitlines()[0][:160]}
    rtl = r.cycles_per_inference
    return {"cycles": rtl, "model_cycles": r.model_cycles, "utilization": round(ideal / rtl, 4) if rtl else 0.0,
            "vs_model": round(rtl / r.model_cycles - 1, 4), "bit_exact": not r.mismatches,
            "program_load_cycles": r.load_cycles, "verilator_build_s": round(r.build_seconds, 2),
            "verilator_cached": r.build_seconds == 0,
            "simulation_s": round(r.sim_seconds, 2), "run_s": round(r.run_seconds, 2)}


def share(part: int, whole: int) -> str:
    return f"{part:>10,} {part / whole:>4.0%}" if whole else f"{part:>10,}    -"


def print_row(row: dict) -> None:
    head = f"{row['model']:<17} {row['target']:<14} {row['top']:<6}"
    if row["exit"] != 0:
        print(f"{head} exit {row['exit']}: {row['message']}", flush=True)
        return
    f, c = row["figures"], row["figures"]["cycles"]
    where = "/".join(f"{k[0]}:{v[0]}" for k, v in f["residency"].items())
    print(f"{head} {c:>10,} {f['ideal_cycles']:>9,} {f['utilization']:>6.1%} {f['dram_bytes']['weights']:>10,} "
          f"{f['dram_bytes']['feature_maps']:>10,} {share(f['array_cycles'], c)} {share(f['vector_cycles'], c)} "
          f"{share(f['dma_cycles'], c)} {share(f['idle_cycles'], c)} {f['wait_cycles']:>9,} {row['build_s']:>6.1f}  "
          f"[{where}]", flush=True)
    rtl = row.get("rtl")
    if rtl is None:
        return
    if "error" in rtl:
        print(f"{'':<17}   rtl FAILED: {rtl['error']}", flush=True)
        return
    load = f", program load {rtl['program_load_cycles']:,} cycles" if rtl["program_load_cycles"] is not None else ""
    verilator = "cached" if rtl["verilator_cached"] else f"{rtl['verilator_build_s']:.1f} s"
    print(f"{'':<17}   rtl {rtl['cycles']:,} cycles (model {rtl['model_cycles']:,}, {rtl['vs_model']:+.1%}), "
          f"util {rtl['utilization']:.1%}, {'bit-exact' if rtl['bit_exact'] else 'MISMATCHES'}{load}; "
          f"Verilator build {verilator}, simulation {rtl['simulation_s']:.2f} s "
          f"(simulator process {rtl['run_s']:.1f} s)", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated: " + ", ".join(MODELS))
    parser.add_argument("--targets", default="systolic16x16", help="comma-separated target names")
    parser.add_argument("--calib-samples", type=int, default=16, help="calibration samples per architecture")
    parser.add_argument("--simulate", action="store_true", help="also run every built folder on the RTL (1 image)")
    parser.add_argument("--json", default=None, metavar="PATH", help="also write every figure to PATH")
    args = parser.parse_args(argv)
    models, targets = args.models.split(","), args.targets.split(",")
    unknown = [m for m in models if m not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; choose from {', '.join(MODELS)}")
    print(f"{'model':<17} {'target':<14} {'top':<6} {'cycles':>10} {'ideal':>9} {'util':>6} {'DRAM w B':>10} "
          f"{'DRAM fm B':>10} {'array':>15} {'vector':>15} {'dma (overlaps)':>15} {'idle':>15} {'idle:wait':>9} "
          f"{'s':>6}  "
          "[residency w/fm/in/prog]")
    rows, relative = [], {}
    with tempfile.TemporaryDirectory(prefix="hlsgen-bench-real-") as tmp:
        scratch = Path(tmp)
        for name in models:
            path, calib = write_model(name, scratch, args.calib_samples)
            for target in targets:
                cycles = {}
                for top, extra in TOPS.items():
                    out = scratch / f"{name}_{target}_{top}"
                    code, message, seconds = build(path, calib, target, out, extra)
                    row = {"model": name, "target": target, "top": top, "argv_extra": extra, "exit": code,
                           "message": message, "build_s": round(seconds, 2)}
                    if code == 0:
                        row["figures"] = figures(out)
                        cycles[top] = row["figures"]["cycles"]
                        if args.simulate:
                            row["rtl"] = simulated(out, row["figures"]["ideal_cycles"])
                    rows.append(row)
                    print_row(row)
                if len(cycles) == 2:
                    relative.setdefault(name, {})[target] = {"own": cycles["own"], "target": cycles["target"],
                                                             "change": round(cycles["target"] / cycles["own"] - 1, 4)}
    print("\nthe target's top against the model's own top (performance model cycles per inference):")
    for name, per_target in relative.items():
        for target, r in per_target.items():
            print(f"{name:<17} {target:<14} {r['change']:+.1%}  ({r['target']:,} vs {r['own']:,} cycles)")
    if args.json:
        Path(args.json).write_text(json.dumps({"models": models, "targets": targets,
                                               "calib_samples": args.calib_samples, "simulate": args.simulate,
                                               "rows": rows, "target_top_vs_own": relative}, indent=1) + "\n")


if __name__ == "__main__":
    main()
