"""Whole-model benches: build a model with `hlsgen build`, stream its images through the generated
top (Verilator, through cocotb's runner) and require every output integer to equal the integer
reference; the RTL's cycles must stay within 5% of the performance model.

The default suite runs the example on systolic16x16 and mnist-8 on systolic8x8, a few images each;
`make test-slow` runs the four test models on both targets, with every test image.
"""
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from bench import ROOT, build_root
from hlsgen import zoo
from hlsgen.cli import main
from hlsgen.rtl.sim import simulate

EXAMPLE = ROOT / "examples" / "digits"
MNIST = ROOT / "tests" / "data" / "mnist-8"
CYCLE_TOLERANCE = 0.05


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


@pytest.fixture(scope="module")
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


def check(build_folder, name: str, target: str, images: int | None) -> None:
    out, test = build_folder(name, target)
    result = simulate(out, test, images, build_root() / f"model_{name}_{target}")
    assert not result.mismatches and result.compared == result.images * 10
    gap = abs(result.cycles_per_inference - result.model_cycles) / result.model_cycles
    assert gap <= CYCLE_TOLERANCE, f"{result.cycles_per_inference} RTL cycles vs {result.model_cycles} modelled"
    assert len(set(result.cycles)) == 1, "every image takes the same number of cycles"


@pytest.mark.rtl
@pytest.mark.parametrize("name, target", [("digits", "systolic16x16"), ("mnist", "systolic8x8")])
def test_model_is_bit_exact_on_a_few_images(build_folder, name, target):
    check(build_folder, name, target, 3)


@pytest.mark.rtl
@pytest.mark.slow
@pytest.mark.parametrize("target", ["systolic16x16", "systolic8x8"])
@pytest.mark.parametrize("name", ["digits", "mnist", "residual", "mobilenet"])
def test_model_is_bit_exact_on_every_test_image(build_folder, name, target):
    check(build_folder, name, target, None)
