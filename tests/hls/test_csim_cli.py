"""`hlsgen csim`: its verdicts and its errors (one line each, the documented exit codes)."""
from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from hlsgen.build_folder import load_build
from hlsgen.errors import DataError, PathError
from hlsgen.hls.csim import vendor_headers
from hlsgen.hls.emit import INPUT_FILE
from hlsgen.hls.trace import first_difference, read_trace
from tests.cli.test_errors import assert_one_line_error, run_cli

pytestmark = pytest.mark.csim

# Rounding half up in the requantizer (docs/numerics.md), and a truncating one that breaks it.
ROUNDING = "half = ap_int<RW>(1) << (s - 1);"
TRUNCATING = "half = 0;"


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
    code, _, err = run_cli(capsys, "csim", str(build_copy), "--portable", "-q")
    assert code == 5
    assert_one_line_error(err, "1 of 160 output integers differ", "image 2: every layer matches the integer "
                          "reference; the expected outputs differ", "mismatch: image 2, logits[4]")
    assert "first wrong value" not in err


def test_a_wrong_weight_is_traced_to_its_layer_image_and_element(build_copy, capsys):
    """The first weight of conv2 (the second program row, its MaxPool fused; the weight ROM holds each row's
    weights from its w_bit field on) moves to the other end of its range: conv1+pool1 still matches the
    reference, output channel 0 of conv2+pool2 does not."""
    program = build_copy / "hls" / "digits_program.h"
    text = program.read_text()
    fields = re.search(r"// Row fields: (.*)", text).group(1).split(", ")
    row = re.search(r"\{ ([^}]*) \},\s+// conv2\+pool2 ->", text).group(1).split(", ")
    bit, width = int(row[fields.index("w_bit")]), int(row[fields.index("wbits")])
    words = re.search(r"wrom\[\d+\] = \{([^}]*)\}", text)
    values = [int(w.rstrip("ULL,"), 16) for w in words.group(1).split()]
    word, shift, mask = bit // 64, bit % 64, (1 << width) - 1
    weight = (values[word] >> shift) & mask
    flipped = (1 << (width - 1)) - 1 if weight >> (width - 1) else 1 << (width - 1) | 1
    values[word] = values[word] & ~(mask << shift) | flipped << shift
    literals = " ".join(f"0x{v:016x}ULL," for v in values)
    program.write_text(text[:words.start(1)] + literals + text[words.end(1):])
    code, _, err = run_cli(capsys, "csim", str(build_copy), "--portable", "-q")
    assert code == 5
    assert_one_line_error(err, "first wrong value: image 0, layer conv2+pool2 (tensor pool2): element [0, ",
                          "(C, H, W) csim ", "mismatch: image 0, logits[")
    assert "layer conv1" not in err


def test_a_rounding_error_in_the_generated_code_is_caught(build_copy, capsys):
    """Truncate instead of rounding half up: the requantizer no longer matches docs/numerics.md."""
    ops = build_copy / "hls" / "hlsgen_ops.h"
    text = ops.read_text()
    assert ROUNDING in text
    ops.write_text(text.replace(ROUNDING, TRUNCATING))
    code, _, err = run_cli(capsys, "csim", str(build_copy), "--portable", "-q")
    assert code == 5
    assert_one_line_error(err, "differ from the integer reference",
                          "first wrong value: image 0, layer conv1+pool1 (tensor pool1)")


@pytest.mark.parametrize("name", ["digits", "residual"])
def test_the_trace_build_compiles_with_the_vendor_headers_and_logs_every_layer(models, tmp_path, name):
    """-Werror: the HLSGEN_TRACE code is warning-free with the vendor headers too; every program row's
    output is logged in row order (a MaxPool fused into its row's writer is part of that row) and equals
    the reference's, and tracing changes nothing (the outputs still match)."""
    if vendor_headers() is None:
        pytest.fail("hls4ml (a dependency carrying the vendor ap_types headers) is not installed: pip install .")
    folder = models.get(name, "8")
    graph = load_build(folder).graph
    verdict = first_difference(folder / "hls", graph, folder / "hls" / INPUT_FILE, 1, tmp_path)
    assert verdict == "image 1: every layer matches the integer reference; the expected outputs differ from it"
    rows = [row["name"] for row in json.loads((folder / "program.json").read_text())["rows"] if row["unit"] != "none"]
    assert [t.layer for t in read_trace(tmp_path / "trace.txt")] == rows


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
    assert code == PathError.exit_code
    assert_one_line_error(err, "has no hls/ folder")


def test_a_folder_that_is_not_a_build_is_one_line(tmp_path, capsys):
    code, _, err = run_cli(capsys, "csim", str(tmp_path))
    assert code == PathError.exit_code
    assert_one_line_error(err, "not an hlsgen build folder")


def test_inputs_that_do_not_fit_the_model_are_one_line(models, tmp_path, capsys):
    import numpy as np

    np.savez(tmp_path / "bad.npz", image=np.zeros((2, 3, 16, 16), np.float32))
    code, _, err = run_cli(capsys, "csim", str(models.get("digits", "8")), "--inputs", str(tmp_path / "bad.npz"))
    assert code == DataError.exit_code
    assert_one_line_error(err, "shape")


def truncating_compiler(folder: Path) -> Path:
    """A C++ compiler (for CXX) that miscompiles the requantizer: it truncates instead of rounding half up.
    It is g++ run after rewriting the rounding line of the hlsgen_ops.h it is given."""
    script = folder / "truncating-g++"
    script.write_text(f"""#!{sys.executable}
import os
import sys
from pathlib import Path

for arg in sys.argv[1:]:
    ops = Path(arg) / "hlsgen_ops.h"
    if ops.is_file():
        ops.write_text(ops.read_text().replace({ROUNDING!r}, {TRUNCATING!r}))
os.execvp("g++", ["g++", *sys.argv[1:]])
""")
    script.chmod(0o755)
    return script


def test_build_verify_csim_runs_before_the_folder_is_written(tmp_path, capsys, monkeypatch):
    from tests.hls.conftest import EXAMPLE

    args = ["build", str(EXAMPLE / "digits.onnx"), "--calib", str(EXAMPLE / "calib.npz"), "--verify", "csim", "-q"]
    code, _, err = run_cli(capsys, *args, "-o", str(tmp_path / "ok"))
    assert code == 0, err
    assert (tmp_path / "ok" / "hls" / "digits.cpp").is_file()

    monkeypatch.setenv("CXX", str(truncating_compiler(tmp_path)))
    code, _, err = run_cli(capsys, *args, "-o", str(tmp_path / "bad"))
    assert code == 5
    assert_one_line_error(err, "differ from the integer reference", "first wrong value: image 0, layer conv1")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok", "truncating-g++"]  # no folder, no staging left


def test_json_summary_for_ci(models, capsys):
    import json

    code, out, err = run_cli(capsys, "csim", str(models.get("digits", "8")), "--portable", "--json")
    assert code == 0 and err == ""
    summary = json.loads(out)
    assert summary["check"] == "csim" and summary["bit_exact"] and summary["output_integers"] == 160
