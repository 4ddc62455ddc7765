"""Targets: every built-in loads, custom YAML paths work, every malformed description is one clean line."""
from pathlib import Path

import pytest
import yaml

from hlsgen.errors import TargetError
from hlsgen.hw import builtin_targets, load_target
from hlsgen.hw.target import DATAFLOWS, Target
from tests.cli.test_errors import assert_one_line_error, run_cli
from tests.hw.models import DIGITS


def _yaml(name: str = "systolic16x16") -> dict:
    return yaml.safe_load(builtin_targets()[name].read_text())


def _write(tmp_path: Path, data, name: str = "custom.yaml") -> str:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data))
    return str(path)


def _one_line(exc: pytest.ExceptionInfo) -> str:
    message = str(exc.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize("name", sorted(builtin_targets()))
def test_every_builtin_loads(name):
    target = load_target(name)
    assert isinstance(target, Target) and target.name == name
    assert target.array.rows == target.array.cols >= 8
    assert target.array.dataflow in DATAFLOWS
    assert target.buffers.input.banks == target.array.cols  # one bank per lane
    assert target.device.dsp > target.array.rows * target.array.cols


def test_builtins_are_the_three_systolic_arrays():
    assert set(builtin_targets()) >= {"systolic8x8", "systolic16x16", "systolic32x32"}


def test_custom_yaml_path(tmp_path):
    data = _yaml()
    data["name"], data["array"]["rows"], data["array"]["dataflow"] = "mine", 12, "output_stationary"
    target = load_target(_write(tmp_path, data))
    assert (target.name, target.array.rows, target.array.dataflow) == ("mine", 12, "output_stationary")


def test_a_retired_line_buffer_section_is_accepted_and_ignored(tmp_path):
    """Older target files described a row buffer the accelerator does not have; they still load."""
    data = _yaml()
    data["line_buffer"] = {"max_row_width": 64, "max_channels": 256, "max_kernel": 7}
    assert load_target(_write(tmp_path, data)) == load_target("systolic16x16")


def test_dataflow_defaults_to_weight_stationary(tmp_path):
    data = _yaml()
    del data["array"]["dataflow"]
    assert load_target(_write(tmp_path, data)).array.dataflow == "weight_stationary"


@pytest.mark.parametrize("edit, fragment", [
    (lambda d: d.pop("clock_mhz"), "missing key clock_mhz"),
    (lambda d: d["buffers"].pop("weight"), "missing key buffers.weight"),
    (lambda d: d["array"].update(color="red"), "unknown key(s) ['color'] in array"),
    (lambda d: d.update(extra=1), "unknown key(s) ['extra']"),
    (lambda d: d["array"].update(dataflow="row_stationary"), "array.dataflow must be one of"),
    (lambda d: d["array"].update(rows=0), "array.rows must be positive"),
    (lambda d: d["widths"].update(accumulator_bits=12), "widths.accumulator_bits"),
    (lambda d: d["buffers"]["input"].update(banks=0), "buffers.input needs positive kib and banks"),
    (lambda d: d.update(array=[16, 16]), "array must be a mapping"),
])
def test_bad_target_is_one_line(tmp_path, edit, fragment):
    data = _yaml()
    edit(data)
    path = _write(tmp_path, data)
    with pytest.raises(TargetError) as exc:
        load_target(path)
    message = _one_line(exc)
    assert fragment in message and "custom.yaml" in message


@pytest.mark.parametrize("text", ["array: [unclosed\n  rows: 3", "just a string", ""])
def test_malformed_yaml_is_one_line(tmp_path, text):
    with pytest.raises(TargetError) as exc:
        load_target(_write(tmp_path, text))
    assert "invalid target description" in _one_line(exc)


def test_unknown_name_suggests_the_closest():
    with pytest.raises(TargetError) as exc:
        load_target("systolic16x61")
    message = _one_line(exc)
    assert "did you mean 'systolic16x16'?" in message and "systolic8x8" in message


def test_unknown_target_on_the_command_line(tmp_path, capsys):
    code, _, err = run_cli(capsys, "build", str(DIGITS), "--target", "systolic_16x16", "-o", str(tmp_path / "o"))
    assert code == TargetError.exit_code
    assert_one_line_error(err, "did you mean 'systolic16x16'")
    assert not (tmp_path / "o").exists()


def test_top_memory_splits_the_banks_of_the_targets_top(tmp_path):
    """systolic16x16 gives its top's planes 35% and 30% of a bank (10,240 words), the rest to the 16 banks
    of the depthwise window memory; targets that say nothing keep three eighths and one eighth, half to it."""
    from hlsgen.hw.overlay_memory import memory_split

    split = memory_split(load_target("systolic16x16"))
    assert (split.planes, split.copies, split.copy_depth) == ((3584, 3072), 16, 224)
    eight = memory_split(load_target("systolic8x8"))  # 64 KiB over 8 banks: 8,192 words a bank
    assert (eight.planes, eight.copies, eight.copy_depth) == ((3072, 1024), 8, 512)
    data = _yaml()
    data["top_memory"] = {"plane0": 0.5}
    assert memory_split(load_target(_write(tmp_path, data))).planes == (5120, 1280)  # plane1 by default


@pytest.mark.parametrize("split", [{"plane0": 0.9}, {"plane1": 0}, {"plane0": "half"}])
def test_a_top_memory_that_leaves_nothing_is_one_line(tmp_path, split):
    data = _yaml()
    data["top_memory"] = split
    with pytest.raises(TargetError) as exc:
        load_target(_write(tmp_path, data))
    assert "top_memory.plane" in _one_line(exc)
