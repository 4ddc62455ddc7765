"""The generated C driver, unmodified, on the Verilated target's top (hlsgen.runtime.c_app): one harness build of
a target's top with a C++ AXI4 memory and AXI4-Lite master implementing the platform layer runs two different
models back to back (digits, then `pools`: each loaded once by CONTROL.load, then an inference per sample, the
outputs through memory), bit-exact against the integer reference: on systolic8x8 the inputs come through memory
too (IO, INPUT_BASE); with 2 KiB of activation memory both programs keep their input in the feature-map image and
the driver packs it there, and two more whose images the host folds (hlsgen.passes.input_fold: pixel blocks, and a stem's windows), too. Slow: MLPerf Tiny's ResNet-8 and DS-CNN on the shipped systolic16x16."""
from pathlib import Path

import numpy as np
import onnx
import pytest
import yaml

from bench import build_root
from hlsgen.architectures import ARCHITECTURES, calibration_data
from hlsgen.build_folder import load_build
from hlsgen.hw.target import builtin_targets
from hlsgen.cli import main
from hlsgen.runtime.c_app import build_app, run_app
from models import model_files


def build(folder: Path, name: str, target: str, *extra: str) -> tuple[Path, np.ndarray, np.ndarray]:
    """(build folder, the integer inputs of its test samples, the integer reference's output bytes)."""
    folder.mkdir(parents=True, exist_ok=True)
    if name in ARCHITECTURES:
        model, calib, test = folder / f"{name}.onnx", folder / "calib.npz", folder / "test.npz"
        onnx.save(ARCHITECTURES[name](), str(model))
        key = onnx.load(str(model)).graph.input[0].name
        np.savez(calib, **{key: calibration_data(onnx.load(str(model)), n=16, seed=0)})
        np.savez(test, **{key: calibration_data(onnx.load(str(model)), n=3, seed=1)})
    else:
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


def small_maps(folder: Path) -> str:
    """systolic8x8 with 2 KiB of activation memory: the programs keep their input in the feature-map image."""
    data = yaml.safe_load(builtin_targets()["systolic8x8"].read_text())
    data["name"] = "systolic8x8_in2"
    data["buffers"]["input"]["kib"] = 2
    path = folder / "systolic8x8_in2.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


@pytest.mark.rtl
@pytest.mark.parametrize("packed", [False, True], ids=["input_through_memory", "input_packed"])
def test_the_c_driver_runs_two_models_back_to_back(tmp_path, packed):
    target = small_maps(tmp_path) if packed else "systolic8x8"
    names = ["digits", "pools", *(["fold_stem", "window_stem"] if packed else [])]
    runs = check([build(tmp_path / name, name, target) for name in names], tmp_path)
    assert all(run.layout.input_in_fmap == packed for run in runs)
    folds = [run.layout.input_fold and (run.layout.input_fold.kernel, run.layout.input_fold.strides) for run in runs]
    assert folds == [None, None, *([((2, 2), (2, 2)), ((3, 3), (2, 2))] if packed else [])]


@pytest.mark.slow
@pytest.mark.rtl
def test_the_c_driver_runs_mlperf_tiny_models(tmp_path):
    check([build(tmp_path / "resnet8", "resnet8", "systolic16x16"),
           build(tmp_path / "ds_cnn", "ds_cnn", "systolic16x16")], tmp_path)
