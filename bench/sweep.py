"""Wall time of a 24-configuration sweep of the example model (3 targets x bits 4,6,8,auto x verify
none/csim) on an embedded LocalCluster of 1 and of 2 worker processes, and of the rerun (all cached).

    python bench/sweep.py [--workers 1,2] [--out DIR] [--json results.json]

Each worker count sweeps into a fresh folder (nothing cached); the rerun repeats the last one.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))  # the workers

from hlsgen.sweep.flow import Calibration, run_sweep  # noqa: E402
from hlsgen.sweep.grid import Axes  # noqa: E402
from hlsgen.sweep.runner import Cluster  # noqa: E402

MODEL = ROOT / "examples" / "digits" / "digits.onnx"
CALIB = ROOT / "examples" / "digits" / "calib.npz"
AXES = Axes(("systolic8x8", "systolic16x16", "systolic32x32"), ("4", "6", "8", "auto"), verify=((), ("csim",)))


def timed_sweep(out: Path, workers: int) -> dict:
    seen = []
    start = time.monotonic()
    outcome = run_sweep([(MODEL, None)], AXES, Calibration(CALIB), out, Cluster(workers=workers), "digits",
                        seen.append)
    seconds = time.monotonic() - start
    return {"workers": workers, "configurations": len(outcome.rows), "failed": len(outcome.failed),
            "cached": seen[-1].cached, "wall_s": round(seconds, 1),
            "build_s": round(sum(r["seconds"] for r in outcome.rows), 1), "folder": str(out)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--out", default=None, help="Keep the sweep folders here [default: a temporary folder].")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    root = Path(args.out or tempfile.mkdtemp(prefix="hlsgen-bench-sweep-"))
    results = []
    for workers in (int(w) for w in args.workers.split(",")):
        results.append(timed_sweep(root / f"workers{workers}", workers))
        print(f"{workers} worker(s): {results[-1]['configurations']} configurations "
              f"({results[-1]['failed']} failed) in {results[-1]['wall_s']} s wall, "
              f"{results[-1]['build_s']} s of builds", flush=True)
    rerun = timed_sweep(Path(results[-1]["folder"]), int(args.workers.split(",")[-1]))
    results.append({**rerun, "rerun": True})
    print(f"rerun: {rerun['cached']} of {rerun['configurations']} configurations from the cache, "
          f"{rerun['wall_s']} s wall")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
