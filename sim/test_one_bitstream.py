"""One bitstream, many models (--program external): the example (digits: convolutions, a fused MaxPool, a
Dense) and `pools` (padded, overlapping, dilated and ceil-mode pools on the vector unit: divisor tables) built
for systolic8x8 give byte-identical Verilog; one Verilator build of that top runs digits, then pools, then
digits again in one simulation (each loaded by CONTROL.load over the previous one's tables, two images each
under random backpressure), bit-exact against the integer reference; and the stream testbench's cycles of the
loaded program equal those of the same model's own top (rom, weights in external memory) within a few
cycles. Slow: MobileNetV2-0.5 on systolic16x16's top, bit-exact within 3% of the model's cycles."""
import json
from pathlib import Path

import numpy as np
import onnx
import pytest
import yaml

from bench import build_root
from hlsgen import architectures
from hlsgen.cli import main
from hlsgen.hw.target import builtin_targets
from hlsgen.rtl.overlay_sim import run_models
from hlsgen.rtl.sim import simulate
from models import model_files

TARGET = "systolic8x8"


def build(folder: Path, name: str, target: str, program: str) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    model, calib, test = model_files(name, folder)
    out = folder / "build"
    assert main(["build", str(model), "--target", target, "--calib", str(calib), "-o", str(out), "-q",
                 "--program", program]) == 0
    return out, test


@pytest.mark.rtl
def test_two_models_run_one_after_another_on_one_build(tmp_path):
    digits, _ = build(tmp_path / "digits", "digits", TARGET, "external")
    pools, _ = build(tmp_path / "pools", "pools", TARGET, "external")
    seconds, runs = run_models([digits, pools, digits], build_root() / f"overlay_{TARGET}", images=2,
                               backpressure=True)
    for run in runs:
        assert run.mismatches == 0 and run.compared == 20, run
        assert run.load_cycles > run.program_bytes // 8, "a load reads its whole image"
        assert min(run.cycles) > 0.9 * run.model_cycles, run
    assert runs[0].program_bytes == runs[2].program_bytes  # the same image, loaded over pools' tables


@pytest.mark.rtl
def test_a_second_models_rtl_simulation_builds_nothing(tmp_path):
    """The target's top is one Verilog for every model: its Verilator build is cached by content ($HLSGEN_CACHE/
    verilator), so once any model has been simulated on the target, another spends no time in Verilator."""
    digits, digits_test = build(tmp_path / "digits", "digits", TARGET, "external")
    pools, pools_test = build(tmp_path / "pools", "pools", TARGET, "external")
    first = simulate(digits, digits_test, 1)
    second = simulate(pools, pools_test, 1)
    assert not first.mismatches and not second.mismatches
    assert second.build_seconds == 0.0
    assert not (pools / "sim" / "build").exists()  # nothing is built in the build folder


def shrunk(folder: Path, weight_kib: int) -> str:
    data = yaml.safe_load(builtin_targets()[TARGET].read_text())
    data["name"] = f"{TARGET}_w{weight_kib}"
    data["buffers"]["weight"]["kib"] = weight_kib
    path = folder / f"{data['name']}.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


@pytest.mark.rtl
def test_a_loaded_program_takes_the_cycles_of_the_models_own_top(tmp_path):
    """Weights in external memory both ways (16 KiB of weight memory: the model's own top streams them too)."""
    target = shrunk(tmp_path, 16)
    rom, test = build(tmp_path / "rom", "digits", target, "rom")
    loaded, _ = build(tmp_path / "external", "digits", target, "external")
    assert json.loads((rom / "program.json").read_text())["residency"]["weights"] == "external"
    own, overlay = (simulate(out, test, 3, build_root()) for out in (rom, loaded))
    assert not own.mismatches and not overlay.mismatches and overlay.compared == own.compared == 30
    assert overlay.load_cycles > 0 and own.load_cycles is None
    assert all(abs(a - b) <= 4 for a, b in zip(own.cycles, overlay.cycles)), (own.cycles, overlay.cycles)


@pytest.mark.slow  # MobileNetV2-0.5 (128 px): a Verilator build of systolic16x16's top and 580,000 cycles
@pytest.mark.rtl
def test_mobilenet_v2_runs_on_the_targets_top(tmp_path):
    """399 layer-table rows and 762 moves: more than the 256 rows the top held before its tables were sized from
    the target (hlsgen.hw.overlay_tables); loaded from program.bin, bit-exact within 3% of the model's cycles."""
    model = architectures.mobilenet_v2()
    onnx.save(model, str(tmp_path / "model.onnx"))
    key = model.graph.input[0].name
    np.savez(tmp_path / "calib.npz", **{key: architectures.calibration_data(model, n=16, seed=0)})
    np.savez(tmp_path / "test.npz", **{key: architectures.calibration_data(model, n=1, seed=1)})
    out = tmp_path / "build"
    assert main(["build", str(tmp_path / "model.onnx"), "--target", "systolic16x16", "--calib",
                 str(tmp_path / "calib.npz"), "-o", str(out), "-q", "--program", "external"]) == 0
    program = json.loads((out / "program.json").read_text())
    assert sum(row["unit"] != "dma" for row in program["rows"]) > 256
    run = simulate(out, tmp_path / "test.npz", 1, build_root())
    assert not run.mismatches and run.compared == 1000 and run.load_cycles > 0
    assert abs(run.cycles_per_inference - run.model_cycles) <= 0.03 * run.model_cycles, run
