"""OUT/program.json: the layer program is written whole and read back equal, and the commands that need
the schedule (`hlsgen sim`) read it from the build folder instead of mapping the model again."""
import dataclasses
import json

import pytest

from hlsgen.cli import main
from hlsgen.hw import map_model
from hlsgen.hw.program_io import PROGRAM_FILE, read_program, write_program
from hlsgen.hw.target import Buffer
from tests.cli.test_errors import assert_one_line_error, run_cli
from tests.hw.models import DIGITS, ROOT, integer_graph, target_with

CALIB = str(ROOT / "examples" / "digits" / "calib.npz")


@pytest.mark.parametrize("model", ["digits", "mnist-8", "residual", "mobilenet", "vector_ops", "odd_channels_3x3",
                                   "odd_dense"])
def test_the_program_reads_back_equal(tmp_path, model):
    graph, target = integer_graph(model), target_with()
    mapping = map_model(graph, target)
    write_program(mapping, tmp_path)
    again = read_program(tmp_path, graph, target)
    for field in dataclasses.fields(mapping):
        assert getattr(again, field.name) == getattr(mapping, field.name), field.name
    assert again.cycles == mapping.cycles
    data = json.loads((tmp_path / PROGRAM_FILE).read_text())
    assert [row["name"] for row in data["rows"]] == [layer.name for layer in mapping.layers]


def test_a_program_with_external_weights_reads_back_equal(tmp_path):
    graph, target = integer_graph("digits"), target_with(buffers__weight=Buffer(16, 16))
    mapping = map_model(graph, target)
    write_program(mapping, tmp_path)
    assert read_program(tmp_path, graph, target) == mapping and mapping.weights_external
    data = json.loads((tmp_path / PROGRAM_FILE).read_text())
    assert data["residency"] == {"weights": "external", "feature_maps": "on_chip", "input": "stream", "program": "rom"}
    assert data["rows"][2]["transfers"] == [{"what": "weights", "direction": "read", "bytes": 128 * 256}]


def test_the_program_records_fusion_placement_and_widths(tmp_path):
    mapping = map_model(integer_graph("digits"), target_with())
    write_program(mapping, tmp_path)
    data = json.loads((tmp_path / PROGRAM_FILE).read_text())
    conv1 = data["rows"][0]
    assert conv1["nodes"] == ["conv1", "pool1"] and conv1["fused_pool"] == [2, 2]
    assert conv1["output"] == "pool1" and conv1["loop_order"] == "spatial > column > row"
    assert conv1["bits"] == {"input": 8, "output": 8, "weights": 8} and conv1["accumulator_bits"] > 8
    maps = data["memory"]["maps"]
    assert "relu1" not in maps  # the map the fused MaxPool reduces is never stored
    assert maps["pool1"]["banks"] == 16 and maps["image"]["written_by"] == -1


def test_sim_reads_the_schedule_from_the_build_folder(tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["build", str(DIGITS), "--calib", CALIB, "-o", str(out), "-q"]) == 0
    (out / PROGRAM_FILE).unlink()
    code, _, err = run_cli(capsys, "sim", str(out), "-q")
    assert code == 6
    assert_one_line_error(err, "has no program.json", "build it again")
