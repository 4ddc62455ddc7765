"""`hlsgen build` runs the map step: OUT/report.json (stable keys), OUT/loop_ir.txt with --dump-ir, and
a layer that does not fit ends the build with one line, exit 2, nothing written."""
import json

import pytest
import yaml

from hlsgen.cli import main
from hlsgen.hw import builtin_targets
from tests.cli.test_errors import assert_one_line_error, run_cli
from tests.hw.models import DIGITS, ROOT

CALIB = str(ROOT / "examples" / "digits" / "calib.npz")
LAYER_KEYS = {"name", "op", "unit", "kind", "tiles", "macs", "cycles", "ideal_cycles", "utilization", "buffers",
              "input_shape", "output_shape"}
TOTAL_KEYS = {"macs", "cycles", "ideal_cycles", "utilization", "resources", "fit", "io_cycles", "layer_cycles",
              "stream_overlap_cycles"}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("b") / "digits"
    assert main(["build", str(DIGITS), "--calib", CALIB, "-o", str(out), "-q", "--dump-ir"]) == 0
    return out


def test_report_json(built):
    report = json.loads((built / "report.json").read_text())
    assert report["schema"] == 1 and report["target"]["name"] == "systolic16x16"
    # each MaxPool runs in the writer of the conv computing its input: one row each
    assert [layer["name"] for layer in report["layers"]] == ["conv1+pool1", "conv2+pool2", "fc1", "fc2"]
    for layer in report["layers"]:
        assert LAYER_KEYS <= set(layer)
        assert isinstance(layer["cycles"], int) and 0 <= layer["utilization"] <= 1
    conv2 = report["layers"][1]
    assert conv2["unit"] == "systolic_array" and conv2["cycles"] == 1218 and conv2["macs"] == 294912
    assert conv2["tiles"]["row_tiles"] == 9 and conv2["tiles"]["col_tiles"] == 2
    total = report["total"]
    assert TOTAL_KEYS <= set(total)
    assert total["cycles"] == (256 + sum(layer["cycles"] for layer in report["layers"]) + 10 + 4
                               - total["stream_overlap_cycles"])
    assert total["macs"] == sum(layer["macs"] for layer in report["layers"])
    assert total["utilization"] == round(total["macs"] / (total["cycles"] * 256), 4)
    assert total["fit"]["ok"] and set(total["resources"]) == {"dsp", "lut", "ff", "bram_18k"}
    # every figure names its design: the model's, the C++'s (one array whatever the layer count), the RTL's
    designs = report["designs"]
    assert designs["model"].startswith("overlay: one 16x16 systolic array")
    assert designs["hls"]["design"] == designs["rtl"]["design"] == "overlay"
    assert designs["hls"]["macs_per_cycle"] == designs["rtl"]["macs_per_cycle"] == 256
    assert total["weight_storage"] == {"bits": 8 * 38_160, "bits_at_8": 8 * 38_160, "saved_fraction": 0.0}


def test_program_dump(built):
    text = (built / "program.txt").read_text()
    for name in ("conv1+pool1", "conv2+pool2", "fc1", "fc2"):
        assert f" {name} " in text
    assert "(MaxPool 2x2 in the writer)" in text and "activation memory: 2 planes x 16 banks" in text


def test_loop_ir_dump_of_the_overlays_units(built):
    """--dump-ir writes the units' nests: every function of overlay_units.h with loops, and its proof."""
    text = (built / "loop_ir.txt").read_text()
    units = ("put", "store", "weight_row", "array_unit", "global_pool", "window_pool", "copy_unit", "elementwise",
             "stream_in", "stream_out")
    for name in units:
        assert f"\nnest {name}\n" in text
    assert text.count("legality: ok") == len(units)
    assert "buffer amem" in text and "partition dim 2 complete" in text
    assert "for p (stream) in 0..steps (at most 64): # pipeline II=1" in text
    assert "ports: loop stream (II=1) amem: 2 of 2 accesses per bank per iteration (amem)" in text


def test_loop_ir_dump_of_the_dataflow_design(tmp_path):
    out = tmp_path / "o"
    assert main(["build", str(DIGITS), "--calib", CALIB, "-o", str(out), "-q", "--dump-ir",
                 "--hls-design", "dataflow"]) == 0
    text = (out / "loop_ir.txt").read_text()
    for name in ("conv1", "pool1", "conv2", "pool2", "fc1", "fc2"):  # one process per layer
        assert f"\nnest {name}: " in text
    assert text.count("legality: ok") == 6
    report = json.loads((out / "report.json").read_text())
    hls = report["designs"]["hls"]
    assert hls["design"] == "dataflow" and hls["macs_per_cycle"] == 4 * 256 and hls["dsp"] == 4 * 256
    # its conv1 keeps the 1-channel input as x[1][256] and reads 9 window taps of it per cycle: not II=1
    assert any(c.startswith("conv1: pipelined loop 'pixel' (II=1) needs 9 accesses per bank of the activation "
                            "memory (x)") for c in hls["bank_conflicts"]["first"])
    assert report["designs"]["rtl"]["macs_per_cycle"] == 256


def test_no_dump_without_the_flag(tmp_path):
    out = tmp_path / "o"
    assert main(["build", str(DIGITS), "--calib", CALIB, "-o", str(out), "-q"]) == 0
    assert (out / "report.json").is_file() and not (out / "program.txt").exists()


def test_output_stationary_target_builds(tmp_path):
    data = yaml.safe_load(builtin_targets()["systolic16x16"].read_text())
    data["array"]["dataflow"] = "output_stationary"
    target = tmp_path / "os16.yaml"
    target.write_text(yaml.safe_dump(data))
    out = tmp_path / "o"
    assert main(["build", str(DIGITS), "--calib", CALIB, "-o", str(out), "-q", "--target", str(target)]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["target"]["dataflow"] == "output_stationary"
    assert report["layers"][1]["cycles"] == 8 * 144 + 31 + 16 + 10


def test_a_layer_that_does_not_fit_stops_the_build(tmp_path, capsys):
    data = yaml.safe_load(builtin_targets()["systolic16x16"].read_text())
    data["buffers"]["weight"]["kib"] = 16
    del data["external_memory"]  # nowhere else to keep the weights
    target = tmp_path / "small.yaml"
    target.write_text(yaml.safe_dump(data))
    out = tmp_path / "o"
    code, _, err = run_cli(capsys, "build", str(DIGITS), "--calib", CALIB, "-o", str(out), "--target", str(target), "-q")
    assert code == 3
    assert_one_line_error(err, "layer 'fc1' (Gemm)", "weight memory (buffers.weight = 16 KiB), and the target has "
                               "no external_memory")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["small.yaml"]  # no OUT, no temporary folder
