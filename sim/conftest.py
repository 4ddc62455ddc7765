"""Fixtures of the whole-model benches: build folders of the test models, made once per session."""
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from bench import ROOT
from hlsgen import zoo
from hlsgen.cli import main

EXAMPLE = ROOT / "examples" / "digits"
MNIST = ROOT / "tests" / "data" / "mnist-8"


def mnist_images() -> np.ndarray:
    load = lambda i: numpy_helper.to_array(onnx.load_tensor(str(MNIST / f"test_data_set_{i}" / "input_0.pb")))  # noqa: E731
    return np.concatenate([load(i) for i in range(3)])


def model_files(name: str, folder: Path) -> tuple[Path, Path, Path]:
    """(model.onnx, calibration npz, test-image npz) of a test model."""
    if name == "digits":
        return EXAMPLE / "digits.onnx", EXAMPLE / "calib.npz", EXAMPLE / "test.npz"
    if name == "mnist":
        images = folder / "mnist_images.npz"
        np.savez(images, Input3=mnist_images())  # all mnist-8 ships with: calibration and test set at once
        return MNIST / "model.onnx", images, images
    model = zoo.ZOO[name]()
    path = folder / f"{name}.onnx"
    onnx.save(model, str(path))
    np.savez(folder / "calib.npz", image=zoo.calibration_data(model, n=48, seed=0))
    np.savez(folder / "test.npz", image=zoo.calibration_data(model, n=32, seed=1))
    return path, folder / "calib.npz", folder / "test.npz"


@pytest.fixture(scope="session")
def build_folder(tmp_path_factory):
    made = {}

    def make(name: str, target: str) -> tuple[Path, Path]:
        if (name, target) not in made:
            folder = tmp_path_factory.mktemp(f"{name}_{target}")
            model, calib, test = model_files(name, folder)
            out = folder / "build"
            assert main(["build", str(model), "--target", target, "--calib", str(calib), "-o", str(out), "-q"]) == 0
            made[name, target] = out, test
        return made[name, target]

    return make
