"""Throughput mode: cycles per image, images per second and the Dense layers' PE utilization at batch 1 (latency
mode) and batch N, from the layer program's model (hlsgen/hw/batching.py).

    python bench/batch.py [--targets systolic8x8,systolic16x16] [--models digits,mnist-8] [--batches 1,8,32] [--rtl]

Models are quantized as bench/mapping.py quantizes them. Images per second are at the target's clock (the
report's `total.clock` until synthesis measures an Fmax). A batch whose maps do not fit shows the rejection,
which names the largest batch that does. With --rtl each row also builds the model at that batch and simulates
one run in Verilator (bit-exact, else it stops): the RTL's cycles per run and their gap to the model's.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "sim"))

from hlsgen.errors import HlsgenError  # noqa: E402
from hlsgen.hw import load_target, map_model, report_json  # noqa: E402
from mapping import integer_graph  # noqa: E402

SIM_NAMES = {"mnist-8": "mnist"}  # sim/models.py's names


def rtl_cycles(name: str, target: str, batch: int, tmp: Path) -> int:
    """The RTL's cycles of one run of `batch` images (a build at that batch, simulated by Verilator)."""
    from bench import build_root
    from models import model_files

    from hlsgen.cli import main as hlsgen
    from hlsgen.rtl.sim import simulate

    folder = tmp / f"rtl_{name}_{target}_{batch}"
    folder.mkdir()
    model, calib, test = model_files(SIM_NAMES.get(name, name), folder)
    out = folder / "build"
    if hlsgen(["build", str(model), "--target", target, "--calib", str(calib), "-o", str(out), "-q",
               "--batch", str(batch)]) != 0:
        raise SystemExit(f"the build of {name} on {target} at batch {batch} failed")
    result = simulate(out, test, batch, build_root())
    if result.mismatches:
        raise SystemExit(f"{name} on {target} at batch {batch}: the RTL is not bit-exact: {result.mismatches[0]}")
    return result.cycles_per_inference


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="systolic8x8,systolic16x16")
    parser.add_argument("--models", default="digits,mnist-8")
    parser.add_argument("--batches", default="1,8,32")
    parser.add_argument("--rtl", action="store_true", help="also simulate one run of each batch in Verilator")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            graph = integer_graph(name, Path(tmp))
            print(f"== {name}")
            print(f"{'target':<15} {'batch':>5} {'cycles/run':>11} {'cycles/image':>12} {'images/s':>10}  "
                  f"{'RTL cycles/run':>15}  " * args.rtl + "Dense utilization")
            for target_name in args.targets.split(","):
                target = load_target(target_name)
                for batch in (int(b) for b in args.batches.split(",")):
                    try:
                        report = report_json(map_model(graph, target, batch=batch))
                    except HlsgenError as exc:
                        print(f"{target_name:<15} {batch:>5} rejected: {exc}")
                        continue
                    total = report["total"]
                    dense = ", ".join(f"{row['name']} {row['utilization']:.1%}" for row in report["layers"]
                                      if row["kind"] == "dense")
                    rtl = ""
                    if args.rtl:
                        cycles = rtl_cycles(name, target_name, batch, Path(tmp))
                        rtl = f"{cycles:>7,} ({(cycles - total['cycles']) / total['cycles']:+.2%})  "
                    print(f"{target_name:<15} {batch:>5} {total['cycles']:>11,} {total['cycles_per_image']:>12,.0f} "
                          f"{total['images_per_s']:>10,.0f}  {rtl}{dense}")
            print()


if __name__ == "__main__":
    main()
