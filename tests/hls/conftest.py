"""Builds shared by the HLS tests: each model is built (and its C simulation compiled) once per session."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from hlsgen import zoo
from hlsgen.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "digits"
MNIST = ROOT / "tests" / "data" / "mnist-8"
# The generated networks reach ~23-26 dB at 8 bits on image-like data: the --bits auto budget sits below.
ZOO_SQNR_BUDGET = "18"
AUTOENCODER_HIDDEN = 64


def mnist_inputs() -> np.ndarray:
    """The three test inputs mnist-8 ships with (also its calibration set: there is no other data)."""
    sets = [numpy_helper.to_array(onnx.load_tensor(str(MNIST / f"test_data_set_{i}" / "input_0.pb"))) for i in range(3)]
    return np.concatenate(sets)


def _build(folder: Path, model: Path, calib: Path, bits: str) -> Path:
    args = ["build", str(model), "--calib", str(calib), "-o", str(folder), "--bits", bits, "-q"]
    if bits == "auto" and model.stem in zoo.ZOO:
        args += ["--min-sqnr", ZOO_SQNR_BUDGET]
    assert main(args) == 0, f"hlsgen build {model.name} --bits {bits} failed"
    return folder


class Models:
    """Lazily built models: `get(name, bits)` -> build folder; `extra(name)` -> an npz of further inputs."""

    def __init__(self, root: Path):
        self.root, self.folders = root, {}
        self.sources: dict[str, tuple[Path, Path, Path | None]] = {
            "digits": (EXAMPLE / "digits.onnx", EXAMPLE / "calib.npz", EXAMPLE / "test.npz")}
        data = root / "data"
        data.mkdir()
        np.savez(data / "mnist8.npz", Input3=mnist_inputs())
        onnx.save(onnx.load(str(MNIST / "model.onnx")), str(data / "mnist8.onnx"))
        self.sources["mnist8"] = (data / "mnist8.onnx", data / "mnist8.npz", data / "mnist8.npz")
        for name in ("residual", "mobilenet"):
            model = zoo.ZOO[name]()
            onnx.save(model, str(data / f"{name}.onnx"))
            np.savez(data / f"{name}_calib.npz", image=zoo.calibration_data(model, n=48, seed=0))
            np.savez(data / f"{name}_test.npz", image=zoo.calibration_data(model, n=32, seed=1))
            self.sources[name] = (data / f"{name}.onnx", data / f"{name}_calib.npz", data / f"{name}_test.npz")
        # dense-only (every map 1x1), hidden layers narrowed from 128 to fit the default target's weight memory
        model = zoo.anomaly_autoencoder(hidden=AUTOENCODER_HIDDEN)
        onnx.save(model, str(data / "autoencoder.onnx"))
        np.savez(data / "autoencoder_calib.npz", features=zoo.calibration_data(model, n=48, seed=0))
        np.savez(data / "autoencoder_test.npz", features=zoo.calibration_data(model, n=32, seed=1))
        self.sources["autoencoder"] = tuple(data / f"autoencoder{s}" for s in (".onnx", "_calib.npz", "_test.npz"))

    def get(self, name: str, bits: str) -> Path:
        key = (name, bits)
        if key not in self.folders:
            model, calib, _ = self.sources[name]
            self.folders[key] = _build(self.root / f"{name}_{bits}", model, calib, bits)
        return self.folders[key]

    def extra(self, name: str) -> Path:
        return self.sources[name][2]


@pytest.fixture(scope="session")
def models(tmp_path_factory) -> Models:
    return Models(tmp_path_factory.mktemp("hls_models"))
