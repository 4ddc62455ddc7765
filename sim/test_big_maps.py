"""Layers over maps the activation memory cannot hold that the mapping used to keep whole (issue 13: the
activation memory's limits become band sizes, not model limits), through the C++ overlay (g++) and the RTL
(Verilator) on systolic8x8 with 16 KiB of activation memory: a global average and a global max pool over a
64 x 64 map in external memory, whose one channel block (32 KiB) is twice the memory, run in bands of input
rows that add to the vector engine's totals. Bit-exact against the integer reference in both, the RTL within
3% of the model's cycles."""
import json
from pathlib import Path

import numpy as np
import onnx
import pytest

from bench import build_root
from hlsgen.cli import main
from hlsgen.rtl.sim import simulate
from test_model_fmaps import CYCLE_TOLERANCE, target_file
from tests.hw.models import big_pool_model

MODELS = {"average_pool": big_pool_model, "max_pool": lambda: big_pool_model("GlobalMaxPool")}


def build(folder: Path, name: str, kib: int) -> tuple[Path, Path, dict]:
    """Build with --verify csim (the C++ overlay bit-exact, or the build fails); the program it mapped."""
    model = MODELS[name]()
    onnx.save(model, str(folder / f"big_{name}.onnx"))
    rng = np.random.default_rng(0)
    np.savez(folder / "calib.npz", x=rng.uniform(0, 1, (8, 3, 64, 64)).astype(np.float32))
    np.savez(folder / "test.npz", x=rng.uniform(0, 1, (1, 3, 64, 64)).astype(np.float32))
    out = folder / "build"
    assert main(["build", str(folder / f"big_{name}.onnx"), "--target", target_file(folder, "systolic8x8", kib),
                 "--calib", str(folder / "calib.npz"), "--verify", "csim", "-o", str(out), "-q"]) == 0
    return out, folder / "test.npz", json.loads((out / "program.json").read_text())


@pytest.mark.rtl
@pytest.mark.parametrize("name", list(MODELS))
def test_a_global_pool_of_a_map_in_external_memory_adds_band_by_band(tmp_path, name):
    out, test, program = build(tmp_path, name, 16)
    pools = [r for r in program["rows"] if r["nodes"] == ["pool"]]
    assert len(pools) > 2 and {r["band"]["count"] for r in pools} == {len(pools)}
    assert sum(r["band"]["in_rows"][1] - r["band"]["in_rows"][0] for r in pools) == 2 * 64  # two channel blocks
    result = simulate(out, test, 1, build_root())
    assert not result.mismatches and result.compared == 10
    gap = (result.cycles_per_inference - result.model_cycles) / result.model_cycles
    assert abs(gap) <= CYCLE_TOLERANCE, f"{result.cycles_per_inference} RTL cycles vs {result.model_cycles} modelled"
