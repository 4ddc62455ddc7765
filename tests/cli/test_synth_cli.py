"""`hlsgen synth BUILD` and `hlsgen build --synth/--bitstream`: a tiny model's RTL through Yosys synth_xilinx
(real tool, under a minute), its figures in report.json and report.html, and the refusals and failures that
leave a build as it was."""
import contextlib
import io
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml
from onnx import helper

from hlsgen.cli import main
from hlsgen.errors import PathError, ToolError, UsageError
from hlsgen.resources import data_dir
from tests.builders import make_model, tensor_value
from tests.cli.test_errors import assert_one_line_error, run_cli

CONTRACT = {"flow", "family", "part", "tools", "measured", "device", "estimated", "fmax_mhz", "fmax_source",
            "clock_target_mhz", "timing_met", "critical_path", "bitstream", "constraints", "seconds", "logs", "placement"}


def _tiny_model(folder: Path) -> Path:
    rng = np.random.default_rng(0)
    nodes = [helper.make_node("Conv", ["x", "W"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Flatten", ["r"], ["f"], name="flat"),
             helper.make_node("Gemm", ["f", "F"], ["y"], transB=1, name="fc")]
    model = make_model(nodes, [tensor_value("x", [1, 1, 6, 6])], [tensor_value("y", None)],
                       {"W": rng.normal(0, 0.5, (4, 1, 3, 3)).astype(np.float32),
                        "F": rng.normal(0, 0.1, (3, 144)).astype(np.float32)}, opset=13)
    path = folder / "tiny.onnx"
    path.write_bytes(model.SerializeToString())
    return path


def _small_target(folder: Path) -> Path:
    """systolic8x8 (Zynq-7020, xc7) shrunk to a 4x4 array with small memories: Yosys takes seconds."""
    spec = yaml.safe_load((data_dir("hw_models") / "systolic8x8.yaml").read_text())
    spec |= {"name": "small4x4", "array": {"rows": 4, "cols": 4},
             "buffers": {k: {"kib": 4, "banks": 4} for k in ("input", "weight", "accumulator")}}
    path = folder / "small4x4.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory):
    """A tiny model built for the small target, then `hlsgen synth --json` on it: (build, printed synth)."""
    folder = tmp_path_factory.mktemp("synth")
    out = folder / "tiny_small"
    assert main(["build", str(_tiny_model(folder)), "--target", str(_small_target(folder)), "--input-range", "0,1",
                 "-o", str(out), "-q"]) == 0
    rtl = {p.name: p.read_bytes() for p in (out / "rtl").iterdir()}
    printed = io.StringIO()  # capsys is per test; the synthesis runs once for the module
    with contextlib.redirect_stdout(printed):
        assert main(["synth", str(out), "--json"]) == 0
    assert rtl == {p.name: p.read_bytes() for p in (out / "rtl").iterdir()}  # synthesis reads the RTL only
    return out, json.loads(printed.getvalue())


def test_synth_measures_real_resources_in_sane_ranges(synthesized):
    out, synth = synthesized
    report = json.loads((out / "report.json").read_text())
    assert report["synth"] == synth and set(synth) == CONTRACT
    assert synth["placement"] is None  # no router, nothing placed
    assert (synth["flow"], synth["family"], synth["part"]) == ("yosys synth_xilinx", "xc7", "xc7z020clg400-1")
    measured, estimated = synth["measured"], synth["estimated"]
    assert all(isinstance(measured[k], int) for k in ("lut", "ff", "dsp", "bram"))
    # 16 PEs, one multiplier each, plus a few in the requantizer and vector lanes of the 4 columns
    assert 16 <= measured["dsp"] <= 16 + 4 * 4
    assert 500 < measured["lut"] < estimated["lut"] * 3 and 500 < measured["ff"] < estimated["ff"] * 3
    assert 0 < measured["bram"] <= synth["device"]["bram"]
    assert estimated == {"lut": report["total"]["resources"]["lut"], "ff": report["total"]["resources"]["ff"],
                         "dsp": report["total"]["resources"]["dsp"], "bram": report["total"]["resources"]["bram_18k"]}
    assert synth["device"] == {"lut": 53200, "ff": 106400, "dsp": 220, "bram": 280}
    # no router: no Fmax, so the times stay at the target's clock
    assert synth["fmax_mhz"] is None and synth["timing_met"] is None and synth["bitstream"] is None
    assert report["total"]["clock"] == {"mhz": 150.0, "source": "target clock_mhz"}
    assert 0 < synth["seconds"]["synthesis"] and synth["seconds"]["place_and_route"] is None
    assert synth["tools"]["yosys"] and synth["tools"]["nextpnr"] is None


def test_synth_keeps_its_logs_and_draws_the_report(synthesized):
    out, synth = synthesized
    kept = sorted(p.name for p in (out / "synth").iterdir())
    assert "yosys.log" in kept and "stat.json" in kept and not any(name.endswith(".v") for name in kept)
    assert not list(out.glob(".synth-*"))
    page = (out / "report.html").read_text()
    assert "yosys synth_xilinx" in page and f"{synth['measured']['lut']:,}" in page


def test_synth_refuses_what_is_no_build(capsys, tmp_path):
    code, _, err = run_cli(capsys, "synth", str(tmp_path / "nothing"))
    assert code == PathError.exit_code
    assert_one_line_error(err, "not an hlsgen build folder")


def test_bitstream_needs_a_lattice_target(capsys, synthesized, tmp_path):
    out, _ = synthesized
    before = (out / "report.json").read_bytes()
    code, _, err = run_cli(capsys, "synth", str(out), "--bitstream")
    assert code == UsageError.exit_code
    assert_one_line_error(err, "--bitstream needs a Lattice target", "xc7z020clg400-1")
    assert (out / "report.json").read_bytes() == before
    # build refuses it before any work: no OUT appears
    model = _tiny_model(tmp_path)
    code, _, err = run_cli(capsys, "build", str(model), "--target", "systolic8x8", "--input-range", "0,1",
                           "--bitstream", "-o", str(tmp_path / "o"))
    assert code == UsageError.exit_code and not (tmp_path / "o").exists()
    assert_one_line_error(err, "--bitstream needs a Lattice target")


def test_placer_seeds_need_a_router(capsys, synthesized, tmp_path):
    """--seeds seeds nextpnr's placer: refused on a target synthesized without place and route, and by build
    without --synth, before any work."""
    out, _ = synthesized
    before = (out / "report.json").read_bytes()
    code, _, err = run_cli(capsys, "synth", str(out), "--seeds", "3")
    assert code == UsageError.exit_code and (out / "report.json").read_bytes() == before
    assert_one_line_error(err, "--seeds needs a Lattice target", "no placement to seed")
    model = _tiny_model(tmp_path)
    for extra in ([], ["--synth"]):
        code, _, err = run_cli(capsys, "build", str(model), "--target", "systolic8x8", "--input-range", "0,1",
                               "--seeds", "2", *extra, "-o", str(tmp_path / "o"))
        assert code == UsageError.exit_code and not (tmp_path / "o").exists()
        assert_one_line_error(err, "--seeds")


def test_a_failing_tool_leaves_the_build_as_it_was(capsys, synthesized, tmp_path):
    """Yosys rejects a broken top: exit 4 in one line, and report.json, report.html and synth/ unchanged."""
    out = tmp_path / "broken"
    shutil.copytree(synthesized[0], out)
    top = next(p for p in (out / "rtl").glob("*.v") if not p.stem.startswith("hg_") and not p.stem.endswith("_tb"))
    top.write_text(top.read_text().replace("endmodule", "endmodule oops", 1))
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    code, _, err = run_cli(capsys, "synth", str(out), "-q")
    assert code == ToolError.exit_code
    assert_one_line_error(err, "Yosys synthesis", "failed")
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


@pytest.mark.slow
def test_build_synth_runs_inside_the_build(tmp_path):
    """`build --synth` synthesizes in the build's staging folder: OUT appears with synth/ and report.json's synth."""
    out = tmp_path / "o"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["build", str(_tiny_model(tmp_path)), "--target", str(_small_target(tmp_path)), "--input-range",
                     "0,1", "--synth", "-o", str(out), "--json"]) == 0
    summary = json.loads(printed.getvalue())
    assert summary["synth"] == json.loads((out / "report.json").read_text())["synth"]
    assert summary["synth"]["measured"]["dsp"] >= 16 and (out / "synth" / "yosys.log").is_file()
    assert not list(tmp_path.glob(".o.hlsgen-*"))
