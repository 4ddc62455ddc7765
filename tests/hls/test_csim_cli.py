"""`hlsgen csim`: its verdicts and its errors (one line each, the documented exit codes)."""
from __future__ import annotations

import shutil

import pytest

from tests.cli.test_errors import assert_one_line_error, run_cli

pytestmark = pytest.mark.csim


@pytest.fixture
def build_copy(models, tmp_path):
    """A private copy of the 8-bit digits build, free to break."""
    return shutil.copytree(models.get("digits", "8"), tmp_path / "digits_build")


def test_a_wrong_expected_value_fails_with_exit_5(build_copy, capsys):
    data = build_copy / "hls" / "tb_expected.dat"
    lines = data.read_text().splitlines()
    values = lines[3].split()
    values[4] = str(int(values[4]) + 1)
    data.write_text("\n".join([*lines[:3], " ".join(values), *lines[4:]]) + "\n")
    code, _, err = run_cli(capsys, "csim", str(build_copy), "--portable")
    assert code == 5
    assert_one_line_error(err, "1 of 160 output integers differ", "sample 2, logits[4]")


def test_a_rounding_error_in_the_generated_code_is_caught(build_copy, capsys):
    """Truncate instead of rounding half up: the requantizer no longer matches docs/numerics.md."""
    ops = build_copy / "hls" / "hlsgen_ops.h"
    text = ops.read_text()
    assert "half = ap_int<RW>(1) << (s - 1);" in text
    ops.write_text(text.replace("half = ap_int<RW>(1) << (s - 1);", "half = 0;"))
    code, _, err = run_cli(capsys, "csim", str(build_copy), "--portable")
    assert code == 5 and "differ from the integer reference" in err


def test_the_portable_header_can_be_forced_by_the_environment(models, capsys, monkeypatch):
    monkeypatch.setenv("HLSGEN_CSIM_PORTABLE", "1")
    code, out, _ = run_cli(capsys, "csim", str(models.get("digits", "8")))
    assert code == 0 and "hlsgen's portable ap_int" in out


def test_a_missing_compiler_is_one_line(models, capsys, monkeypatch):
    monkeypatch.setenv("CXX", "no-such-g++")
    code, _, err = run_cli(capsys, "csim", str(models.get("digits", "8")))
    assert code == 4
    assert_one_line_error(err, "no-such-g++ not found", "install g++")


def test_a_build_without_hls_sources_is_one_line(build_copy, capsys):
    shutil.rmtree(build_copy / "hls")
    code, _, err = run_cli(capsys, "csim", str(build_copy))
    assert code == 2
    assert_one_line_error(err, "has no hls/ folder")


def test_a_folder_that_is_not_a_build_is_one_line(tmp_path, capsys):
    code, _, err = run_cli(capsys, "csim", str(tmp_path))
    assert code == 2
    assert_one_line_error(err, "not an hlsgen build folder")


def test_inputs_that_do_not_fit_the_model_are_one_line(models, tmp_path, capsys):
    import numpy as np

    np.savez(tmp_path / "bad.npz", image=np.zeros((2, 3, 16, 16), np.float32))
    code, _, err = run_cli(capsys, "csim", str(models.get("digits", "8")), "--inputs", str(tmp_path / "bad.npz"))
    assert code == 2
    assert_one_line_error(err, "shape")


def test_build_verify_csim_runs_before_the_folder_is_written(tmp_path, capsys, monkeypatch):
    from tests.hls.conftest import EXAMPLE

    args = ["build", str(EXAMPLE / "digits.onnx"), "--calib", str(EXAMPLE / "calib.npz"), "--verify", "csim", "-q"]
    code, _, err = run_cli(capsys, *args, "-o", str(tmp_path / "ok"))
    assert code == 0, err
    assert (tmp_path / "ok" / "hls" / "digits.cpp").is_file()

    from hlsgen.hls import verify

    def mismatch(folder, *_):
        raise verify.CsimMismatch("csim: 1 of 160 output integers differ from the integer reference")

    monkeypatch.setattr(verify, "csim_build", mismatch)
    code, _, err = run_cli(capsys, *args, "-o", str(tmp_path / "bad"))
    assert code == 5 and not (tmp_path / "bad").exists()
    assert_one_line_error(err, "differ from the integer reference")
