"""Calibration a user can trust: no guessed input ranges, degenerate data rejected, figures that name
their data, and run/csim/sim warning about inputs outside the calibrated range."""
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from hlsgen.build_folder import load_build
from hlsgen.errors import DataError, UsageError
from tests.cli.test_errors import assert_one_line_error, run_cli

ROOT = Path(__file__).resolve().parents[2]
DIGITS = str(ROOT / "examples" / "digits" / "digits.onnx")
MNIST = ROOT / "tests" / "data" / "mnist-8"


def mnist_test_sets() -> tuple[np.ndarray, np.ndarray]:
    """The model zoo's three stored inputs (pixels 0..255) and their float outputs."""
    load = lambda path: numpy_helper.to_array(onnx.load_tensor(str(path)))  # noqa: E731
    sets = sorted(MNIST.glob("test_data_set_*"))
    return (np.concatenate([load(s / "input_0.pb") for s in sets]),
            np.concatenate([load(s / "output_0.pb") for s in sets]))


def test_a_float_model_without_calibration_data_is_an_error(tmp_path, capsys):
    code, _, err = run_cli(capsys, "build", str(MNIST / "model.onnx"), "-o", str(tmp_path / "b"), "-q")
    assert code == DataError.exit_code
    assert_one_line_error(err, "no calibration data", "--calib", "--input-range")
    assert list(tmp_path.iterdir()) == []


def test_mnist8_with_its_stated_input_range_says_its_figures_are_synthetic(tmp_path, capsys):
    """mnist-8 reads pixels 0..255 (the old default guessed [0, 1]): stated with --input-range, the build
    runs, and every figure says it came from synthetic data."""
    out = tmp_path / "b"
    code, stdout, err = run_cli(capsys, "build", str(MNIST / "model.onnx"), "--input-range", "0,255", "-o", str(out))
    assert code == 0, err
    assert "synthetic" in err and "--calib" in err  # the warning
    assert "measured on 32 synthetic inputs uniform in [0, 255], from --input-range" in stdout
    assert "32 synthetic inputs uniform in [0, 255]" in (out / "report.html").read_text()
    q = load_build(out).graph.quant["Input3"]
    assert q.qmax * q.scale == pytest.approx(255, rel=0.02)  # the input grid spans the stated range


def test_mnist8_calibrated_on_real_digits_predicts_the_stored_classes(tmp_path, capsys):
    inputs, expected = mnist_test_sets()
    np.savez(tmp_path / "calib.npz", Input3=inputs)
    out = tmp_path / "b"
    code, stdout, _ = run_cli(capsys, "build", str(MNIST / "model.onnx"), "--calib", str(tmp_path / "calib.npz"),
                              "-o", str(out))
    assert code == 0
    assert "measured on calibration set calib.npz, 3 samples" in stdout
    got = load_build(out).run({"Input3": inputs})["Plus214_Output_0"]
    assert (got.argmax(1) == expected.argmax(1)).all()


@pytest.mark.parametrize("value", [0.0, 0.5])
def test_a_constant_calibration_set_is_an_error(tmp_path, capsys, value):
    calib = tmp_path / "c.npz"
    np.savez(calib, image=np.full((8, 1, 16, 16), value, np.float32))
    code, _, err = run_cli(capsys, "build", DIGITS, "--calib", str(calib), "-o", str(tmp_path / "b"), "-q")
    assert code == DataError.exit_code
    assert_one_line_error(err, "every value of array 'image' is", "real samples")


@pytest.mark.parametrize("text", ["1", "a,b", "1,0", "0,inf"])
def test_a_bad_input_range_is_a_usage_error(tmp_path, capsys, text):
    code, _, err = run_cli(capsys, "build", DIGITS, "--input-range", text, "-o", str(tmp_path / "b"), "-q")
    assert code == UsageError.exit_code
    assert_one_line_error(err, "--input-range")


def test_run_warns_about_inputs_beyond_the_calibrated_range(tmp_path, capsys):
    out = tmp_path / "b"
    assert run_cli(capsys, "build", DIGITS, "--input-range", "0,1", "-o", str(out), "-q")[0] == 0
    images = np.random.default_rng(0).uniform(0, 1, (4, 1, 16, 16)).astype(np.float32)
    images[0, 0, 0, :5] = 3.0  # 5 values three times the calibrated maximum
    np.savez(tmp_path / "x.npz", image=images)
    code, _, err = run_cli(capsys, "run", str(out), "--inputs", str(tmp_path / "x.npz"), "-o", str(tmp_path / "y.npz"))
    assert code == 0
    assert "5 value(s) of input 'image'" in err and "3.0x" in err
