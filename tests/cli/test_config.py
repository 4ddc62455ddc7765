"""Build options from a YAML config: precedence, per-layer overrides, and the reproducible OUT/config.yaml."""
import filecmp
import json

import pytest

from hlsgen.cli import main
from hlsgen.errors import UsageError
from tests.cli.test_build import CALIB, MODEL
from tests.cli.test_errors import assert_one_line_error, run_cli


def weight_bits(out) -> dict:
    return {layer["name"]: layer["weight_bits"] for layer in json.loads((out / "quant.json").read_text())["layers"]}


def test_overrides_resolve_by_name_then_op_type_then_default(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(f"calib: {CALIB}\nbits: 8\nlayers:\n  Conv: {{weight_bits: 6}}\n  conv1: {{weight_bits: 7}}\n")
    assert main(["build", MODEL, "--config", str(config), "-o", str(tmp_path / "a"), "-q"]) == 0
    assert weight_bits(tmp_path / "a") == {"conv1": 7, "conv2": 6, "fc1": 8, "fc2": 8}
    # the resolved config rebuilds the same design
    assert main(["build", MODEL, "--config", str(tmp_path / "a" / "config.yaml"), "-o", str(tmp_path / "b"), "-q"]) == 0
    assert filecmp.cmp(tmp_path / "a" / "quant.json", tmp_path / "b" / "quant.json", shallow=False)


def test_command_line_wins_over_the_config(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(f"calib: {CALIB}\nbits: 4\n")
    assert main(["build", MODEL, "--config", str(config), "--bits", "6", "-o", str(tmp_path / "a"), "-q"]) == 0
    assert set(weight_bits(tmp_path / "a").values()) == {6}


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("bits: [8\n", "not valid YAML"),
        ("colour: blue\n", "unknown option(s) ['colour']"),
        ("layers:\n  conv1: {weight_bits: 12}\n", "layers.conv1.weight_bits must be a width from 2 to 8"),
        ("layers:\n  nosuch: {weight_bits: 4}\n", "match no layer name or op type"),
    ],
)
def test_bad_config(tmp_path, capsys, text, fragment):
    config = tmp_path / "c.yaml"
    config.write_text(text)
    code, _, err = run_cli(capsys, "build", MODEL, "--calib", CALIB, "--config", str(config), "-o", str(tmp_path / "o"),
                           "-q")
    assert code == UsageError.exit_code
    assert_one_line_error(err, fragment)
    assert not (tmp_path / "o").exists()


def test_json_summary(tmp_path, capsys):
    code, out, _ = run_cli(capsys, "build", MODEL, "--calib", CALIB, "-o", str(tmp_path / "a"), "--json")
    assert code == 0
    summary = json.loads(out)
    assert summary["target"] == "systolic16x16" and summary["performance"]["cycles"] > 0
    assert summary["quality"]["int_accuracy"] >= summary["quality"]["float_accuracy"] - 0.005
