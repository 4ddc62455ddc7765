"""A whole model built with `hlsgen build --verify csim,rtl` in a test's folder: its report, once the C-sim and
the RTL have matched the integer reference bit for bit and the RTL has taken exactly the model's cycles."""
import json
from pathlib import Path

import onnx

from hlsgen.cli import main


def verified_build(model: onnx.ModelProto, folder: Path, name: str, *flags: str) -> dict:
    """Build `model` saved as `name`.onnx (the file's name names the top and its Verilator build) with
    `flags`; returns report.json."""
    path, out = folder / f"{name}.onnx", folder / "build"
    onnx.save(model, str(path))
    assert main(["build", str(path), "-o", str(out), "-q", "--verify", "csim,rtl", *flags]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["verification"]["csim"]["passed"] and report["verification"]["rtl"]["passed"]
    measured = report["rtl_simulation"]["without_backpressure"]
    assert measured["bit_exact"] and measured["cycles"] == measured["cycles_model"] == report["total"]["cycles"]
    return report
