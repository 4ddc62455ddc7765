"""The configurations of a sweep, its cache keys and its refusals, without a cluster."""
from dataclasses import fields
from pathlib import Path

import pytest

from hlsgen.build import BuildOptions
from hlsgen.errors import UsageError
from hlsgen.sweep.cache import cached_row, persist, target_text, task_key
from hlsgen.sweep.grid import Axes, Config, load_grid, parse_list, parse_verify
from hlsgen.sweep.task import Inputs
from tests.cli.test_build import MODEL

DIGITS = Inputs("digits.onnx", Path(MODEL).read_bytes())


def test_the_axes_multiply():
    axes = Axes(parse_list("systolic8x8,systolic16x16,systolic32x32"), parse_list("4,6,8,auto"),
                verify=parse_verify(("none", "csim")))
    configs = axes.configs()
    assert len(configs) == 24 == len(set(configs))
    assert Config("systolic32x32", "auto", 1, ("csim",)) in configs
    assert Config("systolic8x8", "4", 1, ()) in configs


def test_a_yaml_grid(tmp_path):
    grid = tmp_path / "grid.yaml"
    grid.write_text("targets: [systolic8x8, systolic16x16]\nbits: [4, 8]\nbatch: 1\nverify: [none, [csim, rtl]]\n")
    axes = Axes(**load_grid(grid))
    assert axes.verify == ((), ("csim", "rtl"))
    assert axes.bits == ("4", "8")
    assert len(axes.configs()) == 8


@pytest.mark.parametrize("axes, fragment", [
    (Axes(()), "no targets"),
    (Axes(("systolic8x8",), bits=("9",)), "--bits 9"),
    (Axes(("systolic8x8",), batch=(0,)), "--batch 0"),
    (Axes(("systolic8x8",), verify=(("cosim",),)), "not cosim"),
])
def test_bad_axes_are_usage_errors(axes, fragment):
    with pytest.raises(UsageError, match=fragment):
        axes.configs()


def test_the_synth_axis_follows_build():
    """--synth is passed to `hlsgen build` where BuildOptions has it, and refused in one line where not."""
    axes = Axes(("systolic8x8",), synth=(True,))
    if "synth" in {f.name for f in fields(BuildOptions)}:
        assert axes.configs() == [Config("systolic8x8", "8", synth=True)]
    else:
        with pytest.raises(UsageError, match="--synth: this hlsgen has no synthesis step"):
            axes.configs()


def test_a_bad_grid_file(tmp_path):
    grid = tmp_path / "grid.yaml"
    grid.write_text("targets: [a]\nwidths: [4]\n")
    with pytest.raises(UsageError, match="a grid maps some of"):
        load_grid(grid)


def test_the_key_is_the_content(tmp_path):
    config = Config("systolic16x16", "8")
    described, _ = target_text("systolic16x16")
    key = task_key(DIGITS, config, described)
    assert key == task_key(Inputs("digits.onnx", Path(MODEL).read_bytes()), config, described)
    assert key != task_key(DIGITS, Config("systolic16x16", "6"), described)
    assert key != task_key(DIGITS, config, described.replace("200", "250"))  # the target's file changed
    assert key != task_key(Inputs("digits.onnx", DIGITS.model + b"\0"), config, described)
    assert key != task_key(Inputs("digits.onnx", DIGITS.model, calib=b"npz"), config, described)
    own = tmp_path / "board.yaml"
    own.write_text(described)
    assert target_text(str(own)) == (described, described)  # a file's text travels to the workers


def test_cached_rows_and_retried_failures(tmp_path):
    persist(tmp_path, {"key": "a", "status": "ok", "category": ""})
    persist(tmp_path, {"key": "b", "status": "failed", "category": "MappingError"})
    persist(tmp_path, {"key": "c", "status": "failed", "category": "Lost"})
    (tmp_path / "d.json").write_text('{"key": "d", "sta')  # a write cut short by a kill
    assert cached_row(tmp_path, "a")["status"] == "ok"
    assert cached_row(tmp_path, "b")["category"] == "MappingError"  # a property of the configuration
    assert cached_row(tmp_path, "c") is None  # a lost worker says nothing about the configuration
    assert cached_row(tmp_path, "d") is None
    assert cached_row(tmp_path, "e") is None
    assert not list(tmp_path.glob("*.tmp"))


def test_user_errors_are_one_line_before_any_work(capsys, tmp_path, monkeypatch):
    from hlsgen.sweep import runner
    from tests.cli.test_build import CALIB
    from tests.cli.test_errors import assert_one_line_error, run_cli

    out = tmp_path / "s"
    code, _, err = run_cli(capsys, "sweep", MODEL, "--calib", CALIB, "--targets", "systolic16x16,systolic61x61",
                           "-o", str(out), "-q")
    assert code == 9 and not out.exists()
    assert_one_line_error(err, "systolic61x61")
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "mine.txt").write_text("keep")
    code, _, err = run_cli(capsys, "sweep", MODEL, "--calib", CALIB, "-o", str(occupied), "-q")
    assert code == 6 and sorted(p.name for p in occupied.iterdir()) == ["mine.txt"]
    assert_one_line_error(err, "not an hlsgen sweep folder")
    code, _, err = run_cli(capsys, "sweep", MODEL, "--calib", CALIB, "--bits", "3,12", "-o", str(out), "-q")
    assert code == 2
    assert_one_line_error(err, "--bits 12")
    monkeypatch.setattr(runner, "CONNECT_TIMEOUT_S", 2)
    code, _, err = run_cli(capsys, "sweep", MODEL, "--calib", CALIB, "--scheduler", "tcp://127.0.0.1:9", "-o",
                           str(out), "-q")
    assert code == 4
    assert_one_line_error(err, "cannot reach the dask scheduler at tcp://127.0.0.1:9")
    code, _, err = run_cli(capsys, "regress", str(tmp_path / "nowhere"), "-q")
    assert code == 6
    assert_one_line_error(err, "is not a folder of ONNX models")
