"""`hlsgen build` and `hlsgen run BUILD`: artefacts, determinism, and every bad input ending cleanly."""
import filecmp
import json
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from hlsgen.build_folder import load_build
from hlsgen.cli import main
from hlsgen.errors import BudgetError, DataError, PathError, TargetError, UsageError
from hlsgen.quant.report import sqnr_db
from tests.cli.test_errors import assert_one_line_error, run_cli

ROOT = Path(__file__).resolve().parents[2]
MODEL = str(ROOT / "examples" / "digits" / "digits.onnx")
CALIB = str(ROOT / "examples" / "digits" / "calib.npz")
TEST = ROOT / "examples" / "digits" / "test.npz"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("b") / "digits_build"
    assert main(["build", MODEL, "--calib", CALIB, "-o", str(out), "-q"]) == 0
    return out


def test_build_writes_its_artefacts(built):
    for name in ("build.json", "quant.json", "model_qdq.onnx", "integer/graph.json", "float/graph.json",
                 "verify/inputs.npz", "verify/int_inputs.npz", "verify/int_outputs.npz"):
        assert (built / name).is_file(), name
    quant = json.loads((built / "quant.json").read_text())
    assert set(quant["tensors"]["image"]) >= {"scale", "zero_point", "bits", "signed"}
    assert [layer["name"] for layer in quant["layers"]] == ["conv1", "conv2", "fc1", "fc2"]
    for layer in quant["layers"]:
        assert len(layer["multiplier"]) == len(layer["shift"]) == len(layer["weight_scales"])
        assert 8 < layer["accumulator_bits"] <= 32
    assert quant["quality"]["float_accuracy"] - quant["quality"]["int_accuracy"] <= 0.005


def test_two_builds_are_byte_identical(built, tmp_path):
    again = tmp_path / "digits_build"
    assert main(["build", MODEL, "--calib", CALIB, "-o", str(again), "-q"]) == 0
    files = sorted(p.relative_to(built) for p in built.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    assert all(filecmp.cmp(built / f, again / f, shallow=False) for f in files)


def test_run_on_a_build_is_the_integer_reference(built, tmp_path, capsys):
    code, out, _ = run_cli(capsys, "run", str(built), "--inputs", str(TEST), "-o", str(tmp_path / "y.npz"))
    assert code == 0 and "top-1 accuracy" in out
    quantized = load_build(built)
    test = dict(np.load(TEST))
    assert np.array_equal(np.load(tmp_path / "y.npz")["logits"], quantized.run(test)["logits"])
    verify_in = dict(np.load(built / "verify" / "inputs.npz"))
    assert run_cli(capsys, "run", str(built), "--inputs", str(built / "verify" / "inputs.npz"),
                   "-o", str(tmp_path / "raw.npz"), "--raw")[0] == 0
    raw = np.load(tmp_path / "raw.npz")["logits"]
    assert raw.dtype.kind == "i"
    assert np.array_equal(raw, np.load(built / "verify" / "int_outputs.npz")["logits"])
    assert len(raw) == len(verify_in["image"])


def test_qdq_export_runs_in_onnxruntime_close_to_the_integer_reference(built):
    options = ort.SessionOptions()
    # onnxruntime's fused u8s8 kernels saturate on AVX2 machines; the plain QDQ graph is the cross-check.
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(str(built / "model_qdq.onnx"), options, providers=["CPUExecutionProvider"])
    test = dict(np.load(TEST))
    theirs = np.concatenate([session.run(None, {"image": x[None]})[0] for x in test["image"][:100]])
    ours = load_build(built).run({"image": test["image"][:100]})["logits"]
    assert np.mean(theirs.argmax(1) == ours.argmax(1)) >= 0.98
    assert sqnr_db(ours, theirs) > 30


def write_npz(path, **arrays):
    np.savez(path, **arrays)
    return str(path)


@pytest.mark.parametrize(
    "arrays, fragment",
    [
        ({"image": np.zeros((4, 1, 8, 8), np.float32)}, "expected (N, 1, 16, 16)"),
        ({"image": np.zeros((0, 1, 16, 16), np.float32)}, "no samples"),
        ({"image": np.full((2, 1, 16, 16), np.nan, np.float32)}, "NaN/Inf"),
        ({"image": np.zeros((2, 1, 16, 16), np.complex64)}, "dtype complex64"),
        ({"image": np.zeros((2, 1, 16, 16), np.float32), "labels": np.zeros(3, np.int64)}, "'labels' must be 2"),
    ],
)
def test_bad_calibration_data(tmp_path, capsys, arrays, fragment):
    calib = write_npz(tmp_path / "c.npz", **arrays)
    code, _, err = run_cli(capsys, "build", MODEL, "--calib", calib, "-o", str(tmp_path / "out"), "-q")
    assert code == DataError.exit_code
    assert_one_line_error(err, fragment)
    assert list(tmp_path.iterdir()) == [tmp_path / "c.npz"]  # nothing half-written


@pytest.mark.parametrize(
    "extra, fragment, error",
    [
        (["--target", "systolic16x61"], "did you mean 'systolic16x16'", TargetError),
        (["--bits", "9"], "--bits '9'", UsageError),
        (["--bits", "auto", "--min-sqnr", "200"], "budget", BudgetError),
    ],
)
def test_bad_build_options(tmp_path, capsys, extra, fragment, error):
    code, _, err = run_cli(capsys, "build", MODEL, "--calib", CALIB, "-o", str(tmp_path / "out"), "-q", *extra)
    assert code == error.exit_code
    assert_one_line_error(err, fragment)
    assert not (tmp_path / "out").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no leftover temporary folder


def test_build_refuses_to_overwrite_a_folder_that_is_not_a_build(tmp_path, capsys):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    code, _, err = run_cli(capsys, "build", MODEL, "--calib", CALIB, "-o", str(tmp_path / "mine"), "-q")
    assert code == PathError.exit_code
    assert_one_line_error(err, "not an hlsgen build folder")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"


def test_run_rejects_a_folder_that_is_not_a_build(tmp_path, capsys):
    np.savez(tmp_path / "x.npz", image=np.zeros((1, 1, 16, 16), np.float32))
    code, _, err = run_cli(capsys, "run", str(tmp_path), "--inputs", str(tmp_path / "x.npz"), "-o", str(tmp_path / "y.npz"))
    assert code == PathError.exit_code
    assert_one_line_error(err, "not an hlsgen build folder")


def test_qdq_model_file_is_valid_onnx(built):
    onnx.checker.check_model(onnx.load(str(built / "model_qdq.onnx")), full_check=True)


def test_a_failed_verifications_logs_outlive_the_staging_folder(tmp_path):
    from hlsgen.build import _keep_logs
    from hlsgen.errors import ToolError

    staging = tmp_path / ".out.hlsgen-x"
    (staging / "sim").mkdir(parents=True)
    (staging / "sim" / "build.log").write_text("%Error: something\n")
    error = ToolError(f"the Verilator build or simulation failed (exit 2); see {staging}/sim/build.log")
    _keep_logs(error, staging, tmp_path / "out.logs")
    assert str(error) == f"the Verilator build or simulation failed (exit 2); see {tmp_path}/out.logs/sim/build.log"
    assert (tmp_path / "out.logs" / "sim" / "build.log").read_text() == "%Error: something\n"
