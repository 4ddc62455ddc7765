"""The generated C driver, unmodified, on the Verilated target's top (hlsgen.runtime.c_app): one harness build of
systolic8x8's top with a C++ AXI4 memory and AXI4-Lite master implementing the platform layer runs two different
models back to back (digits, then `pools`: each loaded once by CONTROL.load, then an inference per sample with
its input and outputs through memory), bit-exact against the integer reference. Slow: MLPerf Tiny's ResNet-8
on systolic16x16, whose input the program keeps in the feature-map image (the driver packs it there)."""
from pathlib import Path

import numpy as np
import pytest

from bench import build_root
from hlsgen.build_folder import load_build
from hlsgen.cli import main
from hlsgen.runtime.c_app import build_app, run_app
from models import model_files


def build(folder: Path, name: str, target: str, *extra: str) -> tuple[Path, np.ndarray, np.ndarray]:
    """(build folder, the integer inputs of its test samples, the integer reference's output bytes)."""
    folder.mkdir(parents=True, exist_ok=True)
    model, calib, test = model_files(name, folder)
    out = folder / "build"
    assert main(["build", str(model), "--target", target, "--calib", str(calib), "-o", str(out), "-q",
                 "--program", "external", *extra]) == 0
    quantized = load_build(out)
    x = quantized.quantize_inputs({k: v[:3] for k, v in np.load(test).items() if k != "labels"})
    ref = quantized.run_int(x)
    want = np.concatenate([np.asarray(ref[t], np.int64).reshape(3, -1) for t in quantized.graph.outputs], axis=1)
    return out, x[quantized.graph.inputs[0]], (want & 0xFF).astype(np.uint8)


def check(builds, tmp_path):
    folders = [b[0] for b in builds]
    work = build_root() / "c_driver" / tmp_path.name
    runs = run_app(build_app(folders, work), folders, [b[1] for b in builds], work)
    for (folder, _, want), run in zip(builds, runs):
        got = np.frombuffer(run.outputs, np.uint8).reshape(want.shape)
        assert np.array_equal(got, want), f"{folder}: {np.argwhere(got != want)[:5].tolist()} differ"
        assert run.load_cycles > run.layout.program_bytes // 16 and len(run.cycles) == 3 and min(run.cycles) > 0
    return runs


@pytest.mark.rtl
def test_the_c_driver_runs_two_models_back_to_back(tmp_path):
    check([build(tmp_path / "digits", "digits", "systolic8x8"), build(tmp_path / "pools", "pools", "systolic8x8")],
          tmp_path)


@pytest.mark.slow
@pytest.mark.rtl
def test_the_c_driver_packs_an_input_the_program_keeps_in_memory(tmp_path):
    resnet = build(tmp_path / "resnet8", "resnet8", "systolic16x16")
    digits = build(tmp_path / "digits", "digits", "systolic16x16")
    runs = check([resnet, digits], tmp_path)
    assert runs[0].layout.input_in_fmap
