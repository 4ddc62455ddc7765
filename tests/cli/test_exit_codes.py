"""The failure-path audit: each category of the README's exit-code table, reached through the real CLI,
ends in one line naming what to do, its own exit code, and nothing written. (Details of each category
are tested beside the code that raises it: test_errors.py, test_build.py, test_config.py, hw/, hls/.)"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from onnx import helper, numpy_helper

import hlsgen.errors as errors
from hlsgen.errors import (EXIT_CODES, INTERRUPTED_EXIT, USAGE_EXIT, DataError, ModelFileError, PathError,
                           TargetError, UnsupportedModelError)
from tests.builders import tensor_value
from tests.cli.test_build import CALIB, MODEL, ROOT
from tests.cli.test_errors import assert_one_line_error, run_cli

ERROR_CLASSES = [cls for cls in vars(errors).values()
                 if isinstance(cls, type) and issubclass(cls, errors.HlsgenError) and cls.__doc__]


def test_every_category_has_its_own_code():
    leaves = {cls.exit_code: cls for cls in ERROR_CLASSES if "what" in vars(cls) or cls is errors.HlsgenError}
    assert len(leaves) == len({cls.exit_code for cls in ERROR_CLASSES})
    assert set(EXIT_CODES) == {0, *leaves, errors.INTERNAL_ERROR_EXIT, INTERRUPTED_EXIT, errors.TERMINATED_EXIT}


def test_the_readme_table_is_the_exit_code_table():
    readme = (ROOT / "README.md").read_text()
    rows = dict(re.findall(r"^\| (\d+) \| (.+) \|$", readme, re.MULTILINE))
    assert {int(k): v for k, v in rows.items()} == EXIT_CODES


def test_the_help_lists_the_exit_codes(capsys):
    code, out, _ = run_cli(capsys, "--help")
    assert code == 0
    for number, what in EXIT_CODES.items():
        assert f"{number:>3}  {what}" in out


def _save(path: Path, nodes, inputs, outputs, initializers=()) -> str:
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 10
    path.write_bytes(model.SerializeToString())
    return str(path)


def _weights(shape) -> numpy_helper.TensorProto:
    return numpy_helper.from_array(np.ones(shape, np.float32), "W")


def _image(name="x", shape=(1, 3, 8, 8)):
    return tensor_value(name, list(shape))


MALFORMED = {  # ONNX's checker rejects these (exit 7) before hlsgen imports anything
    "undefined input": ([helper.make_node("Relu", ["nope"], ["y"])], [_image()], [_image("y")], [],
                        "'nope'"),
    "shapes that cannot broadcast": ([helper.make_node("Add", ["x", "z"], ["y"])],
                                     [_image(), _image("z", (1, 4, 7, 8))], [_image("y")], [],
                                     "Incompatible dimensions"),
    "two producers of a tensor": ([helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Relu", ["x"], ["y"])],
                                  [_image()], [_image("y")], [], "single static assignment"),
    "no outputs": ([helper.make_node("Relu", ["x"], ["y"])], [_image()], [], [], "declares no outputs"),
    "weights of the wrong channel count": ([helper.make_node("Conv", ["x", "W"], ["y"])], [_image("x", (1, 5, 8, 8))],
                                           [_image("y", (1, 4, 6, 6))], [_weights((4, 3, 3, 3))],
                                           "inputs do not fit together"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_model_is_exit_7(tmp_path, capsys, case):
    nodes, inputs, outputs, inits, fragment = MALFORMED[case]
    path = _save(tmp_path / "bad.onnx", nodes, inputs, outputs, inits)
    code, _, err = run_cli(capsys, "build", path, "-o", str(tmp_path / "out"), "-q")
    assert code == ModelFileError.exit_code
    assert_one_line_error(err, fragment)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.onnx"]


def test_missing_external_data_is_exit_7(tmp_path, capsys):
    import onnx

    graph = helper.make_graph([helper.make_node("Conv", ["x", "W"], ["y"])], "g", [_image()],
                              [_image("y", (1, 4, 6, 6))], [_weights((4, 3, 3, 3))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save_model(model, str(tmp_path / "m.onnx"), save_as_external_data=True, location="m.data",
                    size_threshold=0)
    (tmp_path / "m.data").unlink()
    code, _, err = run_cli(capsys, "inspect", str(tmp_path / "m.onnx"))
    assert code == ModelFileError.exit_code
    assert_one_line_error(err, "m.data", "external data files beside it")


def test_a_scalar_input_is_exit_8(tmp_path, capsys):
    path = _save(tmp_path / "s.onnx", [helper.make_node("Relu", ["x"], ["y"])], [tensor_value("x", [])],
                 [tensor_value("y", [])])
    code, _, err = run_cli(capsys, "build", path, "-o", str(tmp_path / "out"), "-q")
    assert code == UnsupportedModelError.exit_code
    assert_one_line_error(err, "['x'] are scalars", "batch axis")


@pytest.mark.parametrize("args, fragment", [
    (["--verify", "synth"], "--verify takes csim and/or rtl"),
    (["--bits", "eight"], "--bits 'eight'"),
    (["--frobnicate"], "No such option '--frobnicate'"),
])
def test_bad_options_are_exit_2(tmp_path, capsys, args, fragment):
    code, _, err = run_cli(capsys, "build", MODEL, "--calib", CALIB, "-o", str(tmp_path / "out"), *args)
    assert code == USAGE_EXIT
    assert_one_line_error(err, fragment)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("option", ["--calib", "--config"])
def test_a_missing_option_file_is_exit_6(tmp_path, capsys, option):
    code, _, err = run_cli(capsys, "build", MODEL, option, str(tmp_path / "nope.file"), "-o", str(tmp_path / "out"))
    assert code == PathError.exit_code
    assert_one_line_error(err, "nope.file", "no such")
    assert list(tmp_path.iterdir()) == []


def test_a_model_path_that_is_a_folder_is_exit_6(tmp_path, capsys):
    code, _, err = run_cli(capsys, "inspect", str(tmp_path))
    assert code == PathError.exit_code
    assert_one_line_error(err, "is a directory")


def test_an_output_folder_the_file_system_refuses_is_exit_6(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("a file, not a folder")
    code, _, err = run_cli(capsys, "build", MODEL, "--calib", CALIB, "-o", str(tmp_path / "notes.txt" / "out"), "-q")
    assert code == PathError.exit_code
    assert_one_line_error(err, "cannot create the build folder", "notes.txt/out", "is a file, not a folder")
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_an_output_name_too_long_for_the_file_system_names_the_users_path(tmp_path, capsys):
    out = tmp_path / ("o" * 300)
    code, _, err = run_cli(capsys, "build", MODEL, "--calib", CALIB, "-o", str(out), "-q")
    assert code == PathError.exit_code
    assert_one_line_error(err, "cannot create the build folder", "o" * 300)
    assert "hlsgen-" not in err  # never the internal staging folder's name
    assert list(tmp_path.iterdir()) == []


def test_a_long_output_name_the_file_system_takes_builds(tmp_path, capsys):
    out = tmp_path / ("o" * 250)  # the staging folder's name must not be longer than the user's
    assert run_cli(capsys, "build", MODEL, "--calib", CALIB, "-o", str(out), "-q")[0] == 0
    assert [p.name for p in tmp_path.iterdir()] == [out.name]


def test_a_target_file_that_is_not_a_target_is_exit_9(tmp_path, capsys):
    (tmp_path / "board.yaml").write_text("array: {rows: 16}\n")
    code, _, err = run_cli(capsys, "build", MODEL, "--target", str(tmp_path / "board.yaml"), "-o", str(tmp_path / "o"))
    assert code == TargetError.exit_code
    assert_one_line_error(err, "board.yaml: invalid target description")
    assert not (tmp_path / "o").exists()


def test_calibration_data_that_is_not_npz_is_exit_10(tmp_path, capsys):
    (tmp_path / "c.npz").write_text("not numpy")
    code, _, err = run_cli(capsys, "build", MODEL, "--calib", str(tmp_path / "c.npz"), "-o", str(tmp_path / "o"), "-q")
    assert code == DataError.exit_code
    assert_one_line_error(err, "not a readable .npz")


def test_accuracy_budget_without_labels_is_exit_10(tmp_path, capsys):
    calib = tmp_path / "c.npz"
    np.savez(calib, image=np.load(CALIB)["image"][:8])
    code, _, err = run_cli(capsys, "build", MODEL, "--calib", str(calib), "--bits", "auto",
                           "--max-accuracy-drop", "0.01", "-o", str(tmp_path / "o"), "-q")
    assert code == DataError.exit_code
    assert_one_line_error(err, "needs a 'labels' array", "--min-sqnr")


def test_an_interrupted_build_is_exit_130_and_leaves_nothing(tmp_path, tmp_path_factory):
    """Ctrl-C as g++ compiles --verify rtl's Verilator model (an empty cache: make's jobs are seconds long even
    on an idle machine, so the signal cannot arrive after the build has finished): exit 130, no OUT, no
    staging folder, no half-made build in the cache and no compiler left running in it."""
    cache = tmp_path_factory.mktemp("cache")
    command = [sys.executable, "-m", "hlsgen.cli", "build", MODEL, "--calib", CALIB, "--verify", "rtl",
               "-o", str(tmp_path / "out"), "-q"]
    env = {k: v for k, v in os.environ.items() if k != "HLSGEN_SIM_BUILD"} | {"HLSGEN_CACHE": str(cache)}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                               env=env)
    deadline = time.monotonic() + 120
    while not _working_in(cache, "cc1plus"):  # the Verilator model's compilers run in its scratch folder
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == INTERRUPTED_EXIT, err
    assert "interrupted" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []
    assert not [p for p in (cache / "verilator").iterdir() if not p.name.startswith("_runtime")]
    assert _working_in(cache) == []  # no compiler of the Verilator build left running there


def _working_in(folder, program: str = "") -> list[str]:
    """The command lines of the processes (running `program`, if given) whose working directory is inside
    `folder`."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and str(folder) in os.readlink(proc / "cwd"):
                command = (proc / "cmdline").read_text().replace("\0", " ")
                if program in command:
                    found.append(command)
        except OSError:
            continue
    return found


def test_json_mode_reports_a_failure_on_stdout_too(tmp_path, capsys):
    import json

    code, out, err = run_cli(capsys, "build", MODEL, "--target", "systolic99", "-o", str(tmp_path / "o"), "--json")
    assert code == TargetError.exit_code
    assert json.loads(out) == {"error": err.strip().removeprefix("error: "), "exit_code": TargetError.exit_code,
                               "category": "TargetError"}
