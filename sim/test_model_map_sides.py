"""Whole models with map sides above 255 (tests/map_sides.py) through the generated RTL, bit-exact against
the integer reference and within 3% of the model's cycles: a 1000 x 320 px image network on the shipped
systolic16x16 (bands through external memory, also under random pauses on every AXI channel; slow), a
4096-long 1-D sequence on chip (no external memory: nothing to pause), and a 300-row map's padded average
pools in bands of 32 KiB of activation memory (also under random pauses)."""
import json
from pathlib import Path

import numpy as np
import onnx
import pytest
import yaml

from hlsgen.cli import main
from hlsgen.hw.target import builtin_targets
from tests import map_sides
from test_model_fmaps import check


def build(folder: Path, name: str, target: str, input_kib: int | None = None) -> tuple[Path, Path, dict]:
    """The model built for `target` (with `input_kib` of activation memory): (build folder, test images,
    program)."""
    model = getattr(map_sides, name)()
    onnx.save(model, str(folder / f"{name}.onnx"))  # the file's name names the top (and its Verilator build)
    np.savez(folder / "calib.npz", **map_sides.feeds(model, 4, 0))
    np.savez(folder / "test.npz", **map_sides.feeds(model, 1, 1))
    if input_kib is not None:
        data = yaml.safe_load(builtin_targets()[target].read_text())
        data["name"] = f"{target}_a{input_kib}"
        data["buffers"]["input"]["kib"] = input_kib
        target = str(folder / f"{data['name']}.yaml")
        Path(target).write_text(yaml.safe_dump(data))
    out = folder / "build"  # the model's own top: its widths are the map sides' (the target's top has 4096)
    assert main(["build", str(folder / f"{name}.onnx"), "--target", target, "--calib", str(folder / "calib.npz"),
                 "-o", str(out), "-q", "--program", "rom"]) == 0
    return out, folder / "test.npz", json.loads((out / "program.json").read_text())


def widths(out: Path) -> str:
    return next((out / "rtl").glob("*_top.v")).read_text()


@pytest.mark.slow  # make test: its C-sim (tests/hls/test_overlay_map_sides.py) and geometry (tests/rtl)
@pytest.mark.rtl
def test_a_4096_long_sequence_on_chip_is_bit_exact(tmp_path):
    out, test, program = build(tmp_path, "long_1d", "systolic16x16")
    assert program["residency"]["feature_maps"] == "on_chip"
    assert "localparam integer DIM_W = 13;" in widths(out)
    check(out, test, 10, backpressure=False)


@pytest.mark.slow
@pytest.mark.rtl
def test_a_tall_map_pooled_in_bands_is_bit_exact(tmp_path):
    out, test, program = build(tmp_path, "tall_pools", "systolic16x16", input_kib=32)
    assert program["residency"]["feature_maps"] == "external"
    assert "localparam integer DIM_W = 8;" in widths(out)
    check(out, test, 10)


@pytest.mark.rtl
@pytest.mark.slow
def test_a_1000_by_320_image_in_bands_is_bit_exact(tmp_path):
    out, test, program = build(tmp_path, "wide_tall", "systolic16x16")
    assert program["residency"] == {"weights": "on_chip", "feature_maps": "external", "input": "external",
                                    "program": "rom"}
    assert "localparam integer DIM_W = 9;" in widths(out)
    check(out, test, 10)
