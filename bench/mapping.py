"""Per-layer mapping, cycles and PE utilization from the analytic model (docs/hardware.md).

    python bench/mapping.py [--target systolic16x16] [--models digits,mnist-8,resnet_cifar,mobilenet_cifar]

For each model: the per-layer table on the main target (systolic16x16 by default), then the totals on
the three built-in targets (a model that does not fit a target shows the rejection). Models are
quantized to 8 bits first: digits on examples/digits/calib.npz, mnist-8 on 32 uniform [0, 1] images
(the build's fallback), the zoo models on `zoo.calibration_data`. The map time is the mapping, tile search
and loop-IR legality check only.
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

from hlsgen import zoo  # noqa: E402
from hlsgen.errors import HlsgenError  # noqa: E402
from hlsgen.frontend import read_onnx  # noqa: E402
from hlsgen.hw import format_table, load_target, map_model  # noqa: E402
from hlsgen.loopir import checked_nests  # noqa: E402
from hlsgen.npz_io import read_npz  # noqa: E402
from hlsgen.passes import optimize  # noqa: E402
from hlsgen.quant import BitConfig, quantize  # noqa: E402

TARGETS = ("systolic8x8", "systolic16x16", "systolic32x32")


def integer_graph(name: str, tmp: Path):
    if name == "digits":
        path = ROOT / "examples" / "digits" / "digits.onnx"
        calib = {"image": read_npz(ROOT / "examples" / "digits" / "calib.npz")["image"]}
    elif name == "mnist-8":
        path = ROOT / "tests" / "data" / "mnist-8" / "model.onnx"
        calib = None
    else:
        model = zoo.ZOO[name]()
        path = tmp / f"{name}.onnx"
        onnx.save_model(model, str(path))
        calib = {"image": zoo.calibration_data(model, 32)}
    graph = read_onnx(path)
    optimize(graph)
    if calib is None:
        rng = np.random.default_rng(0)
        calib = {n: rng.uniform(0, 1, (32, *graph.shape(n)[1:])).astype(np.float32) for n in graph.inputs}
    return quantize(graph, calib, BitConfig(8, 8)).graph


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="systolic16x16")
    parser.add_argument("--models", default="digits,mnist-8,resnet_cifar,mobilenet_cifar")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            graph = integer_graph(name, Path(tmp))
            target = load_target(args.target)
            start = time.perf_counter()
            mapping = map_model(graph, target)
            checked_nests(mapping)
            ms = 1000 * (time.perf_counter() - start)
            print(f"== {name} on {target.name} (mapped, tiled and checked in {ms:.0f} ms)")
            print(format_table(mapping))
            print(f"{'target':<15} {'cycles':>9} {'ideal':>9} {'util':>6} {'latency':>10}  {'DSP':>5} {'BRAM':>5}")
            for other in TARGETS:
                t = load_target(other)
                try:
                    m = map_model(graph, t)
                    checked_nests(m)
                except HlsgenError as exc:
                    print(f"{other:<15} rejected: {exc}")
                    continue
                print(f"{other:<15} {m.cycles:>9,} {m.ideal_cycles:>9,} {m.utilization:>6.1%} "
                      f"{m.cycles / t.clock_mhz:>8.1f}us  {m.resources['dsp']:>5} {m.resources['bram_18k']:>5}")
            print()


if __name__ == "__main__":
    main()
