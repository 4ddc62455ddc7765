"""Layers over maps the activation memory cannot hold that the mapping used to keep whole (issue 13: the
activation memory's limits become band sizes, not model limits), through the C++ overlay (g++) and the RTL
(Verilator) on systolic8x8 with 16 KiB of activation memory: a global average and a global max pool over a
64 x 64 map in external memory, whose one channel block (32 KiB) is twice the memory, run in bands of input
rows that add to the vector engine's totals; a Concat of channels or of columns and a constant Pad (its last
band wholly in the bottom padding) of 64 KiB maps, run in bands of output rows; a model output written band by band on chip from an input in external memory.
Bit-exact against the integer
reference in both, the RTL within 3% of the model's cycles."""
import json
from pathlib import Path

import numpy as np
import onnx
import pytest

from bench import build_root
from hlsgen.cli import main
from hlsgen.rtl.sim import simulate
from test_model_fmaps import CYCLE_TOLERANCE, target_file
from tests.hw.models import big_copies_model, big_output_model, big_pool_model

MODELS = {"average_pool": big_pool_model, "max_pool": lambda: big_pool_model("GlobalMaxPool"),
          "channel_copies": big_copies_model, "column_copies": lambda: big_copies_model(3),
          "big_output": big_output_model}


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


def check(out: Path, test: Path, compared: int = 10) -> None:
    result = simulate(out, test, 1, build_root())
    assert not result.mismatches and result.compared == compared
    gap = (result.cycles_per_inference - result.model_cycles) / result.model_cycles
    assert abs(gap) <= CYCLE_TOLERANCE, f"{result.cycles_per_inference} RTL cycles vs {result.model_cycles} modelled"


def bands(program: dict, node: str) -> list[dict]:
    rows = [r["band"] for r in program["rows"] if r["nodes"] == [node]]
    assert len(rows) > 2 and {band["count"] for band in rows} == {len(rows)}
    return rows


@pytest.mark.rtl
@pytest.mark.parametrize("name", ["average_pool", "max_pool"])
def test_a_global_pool_of_a_map_in_external_memory_adds_band_by_band(tmp_path, name):
    out, test, program = build(tmp_path, name, 16)
    pools = bands(program, "pool")
    assert sum(band["in_rows"][1] - band["in_rows"][0] for band in pools) == 2 * 64  # two channel blocks
    check(out, test)


@pytest.mark.rtl
@pytest.mark.parametrize("name", ["channel_copies", pytest.param("column_copies", marks=pytest.mark.slow)])
def test_copies_of_maps_in_external_memory_run_in_bands(tmp_path, name):
    out, test, program = build(tmp_path, name, 16)
    assert bands(program, "cat") and bands(program, "pad")[-1]["pad_top"] < 0
    check(out, test)


@pytest.mark.rtl
def test_a_model_output_too_big_to_share_the_memory_with_its_input_is_written_band_by_band_on_chip(tmp_path):
    """The last Conv's input (64 KiB) lives in external memory and the Conv runs in bands; its output, the
    model's (32 KiB), stays on chip: each band writes its own rows of it (no store rows)."""
    out, test, program = build(tmp_path, "big_output", 64)
    last = bands(program, "conv2")
    assert [band["written_row"] for band in last] == [band["out_rows"][0] for band in last]
    assert not any(r["move"] and r["move"]["tensor"] == "y" for r in program["rows"])
    assert all(r["output"] == "y" for r in program["rows"] if r["nodes"] == ["conv2"])
    check(out, test, 4 * 64 * 64)
