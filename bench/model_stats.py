"""Node counts, parameters, MACs and import+optimize wall time for the bundled and zoo models.

    python bench/model_stats.py [--repeat N]

Params and MACs are those of the optimized graph (BatchNormalization folded into the Convs), per
sample (batch pinned to 1). The time is the median over `--repeat` runs of `hlsgen.load_onnx(path)`
followed by `.optimize()`; zoo models are written to a temporary .onnx file first, so every row
times the same thing.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

import onnx  # noqa: E402

import hlsgen  # noqa: E402
from hlsgen import zoo  # noqa: E402
from hlsgen.analysis import op_label  # noqa: E402

FILES = {
    "digits": ROOT / "examples" / "digits" / "digits.onnx",
    "mnist-8": ROOT / "tests" / "data" / "mnist-8" / "model.onnx",
}


def model_paths(tmp: Path) -> dict[str, Path]:
    paths = dict(FILES)
    for name, build in zoo.ZOO.items():
        paths[name] = tmp / f"{name}.onnx"
        onnx.save_model(build(), str(paths[name]))
    return paths


def stats(path: Path, repeat: int) -> dict:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        model = hlsgen.load_onnx(path)
        fast = model.optimize()
        times.append(time.perf_counter() - start)
    costs = fast.costs()
    return {
        "nodes": len(model.graph.nodes),
        "fused": len(fast.graph.nodes),
        "params": sum(c.params for c in costs),
        "macs": sum(c.macs for c in costs),
        "ms": 1000 * statistics.median(times),
        "ops": Counter(op_label(n) for n in fast.graph.topological()),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per model (median reported)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        rows = {name: stats(path, args.repeat) for name, path in model_paths(Path(tmp)).items()}
    header = f"{'model':<16} {'nodes':>6} {'fused':>6} {'params':>9} {'MACs':>12} {'import+opt ms':>14}"
    print(header)
    print("-" * len(header))
    for name, r in rows.items():
        print(f"{name:<16} {r['nodes']:>6} {r['fused']:>6} {r['params']:>9,} {r['macs']:>12,} {r['ms']:>14.1f}")
    print("\noptimized ops:")
    for name, r in rows.items():
        print(f"  {name:<16} " + ", ".join(f"{op} x{n}" for op, n in r["ops"].items()))


if __name__ == "__main__":
    main()
