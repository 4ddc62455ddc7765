"""`hlsgen sim BUILD`: exit 0 and the RTL's cycles in report.json when bit-exact; exit 5 naming the first
differing layer, image and element when the RTL computes something else (here: one weight of its ROM image changed)."""
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from bench import build_root
from hlsgen.cli import main
from hlsgen.errors import ToolError
from hlsgen.rtl import render



@pytest.mark.rtl
def test_sim_records_rtl_cycles(build_folder, monkeypatch, capsys):
    out, _ = build_folder("digits", "systolic16x16")
    monkeypatch.setenv("HLSGEN_SIM_BUILD", str(build_root()))  # shares test_model.py's build
    assert main(["sim", str(out), "--images", "2"]) == 0
    printed = capsys.readouterr().out
    assert "bit-exact: 20 output integers of 2 image(s)" in printed and "cycles per inference" in printed
    report = json.loads((out / "report.json").read_text())
    total, measured = report["total"], report["rtl_simulation"]["without_backpressure"]
    assert set(report["rtl_simulation"]) == {"without_backpressure"}
    assert measured["bit_exact"] and measured["images"] == 2 and measured["cycles"] > 0
    assert measured["utilization"] == round(total["macs"] / (measured["cycles"] * 256), 4)
    # the model's figures stay the model's: cycles and utilization from one source
    assert total["utilization"] == round(total["macs"] / (total["cycles"] * 256), 4)
    assert measured["cycles_model"] == total["cycles"] and "cycles_rtl" not in total
    layers = {layer["name"]: layer for layer in report["layers"]}
    assert "pool1" not in layers and "pool1" not in measured["layers"]  # the MaxPool runs in conv1's writer
    # the model is exact; conv1 runs under the input stream, from its first beat (hlsgen.hw.stream_overlap)
    overlap = total["stream_overlap_cycles"]
    assert overlap > 0 and measured["layers"]["conv1+pool1"]["cycles"] == (
        layers["conv1+pool1"]["cycles"] + total["io_cycles"]["input"] - overlap)


@pytest.mark.rtl
def test_sim_fails_on_a_wrong_weight(build_folder, monkeypatch, capsys):
    out, _ = build_folder("digits", "systolic16x16")
    monkeypatch.setenv("HLSGEN_SIM_BUILD", str(build_root()))  # shares test_model.py's build
    original = render._hex_lines

    def corrupt(words, bits):
        text = original(words, bits)
        if bits == 128 and len(words) > 100:  # the weight ROM: flip a bit of the first weight tile's first word
            first, rest = text.split("\n", 1)
            text = f"{int(first, 16) ^ 1:032x}\n{rest}"
        return text

    monkeypatch.setattr(render, "_hex_lines", corrupt)
    assert main(["sim", str(out), "--images", "1"]) == 5
    message = capsys.readouterr().err
    assert "differ from the integer reference" in message and "first wrong value: image 0, layer conv1+pool1: channel" in message


@pytest.mark.rtl
@pytest.mark.parametrize("missing", ["CXX", "PATH"])
def test_a_fresh_verilator_build_without_a_compiler_or_make_is_exit_4(build_folder, monkeypatch, capsys, tmp_path,
                                                                      missing):
    out, _ = build_folder("digits", "systolic16x16")
    monkeypatch.delenv("HLSGEN_SIM_BUILD", raising=False)  # a fresh build in an empty cache
    monkeypatch.setenv("HLSGEN_CACHE", str(tmp_path / "cache"))
    if missing == "CXX":
        monkeypatch.setenv("CXX", "no-such-g++")
        fragment = "no-such-g++ not found"
    else:  # a PATH with Python and g++ but without make
        (tmp_path / "bin").mkdir()
        (tmp_path / "bin" / "g++").symlink_to(shutil.which("g++"))
        monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{Path(sys.executable).parent}")
        fragment = "make not found"
    assert main(["sim", str(out), "--images", "1"]) == ToolError.exit_code
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("error: ") and fragment in err and "Verilator" in err


@pytest.mark.rtl
def test_sim_backpressure_pauses_the_dram_model(tmp_path, monkeypatch, capsys):
    from models import EXAMPLE
    from test_model_external import build, shrunk
    out = build(EXAMPLE / "digits.onnx", EXAMPLE / "calib.npz", shrunk(tmp_path, "systolic8x8", 16), tmp_path / "b")
    monkeypatch.setenv("HLSGEN_SIM_BUILD", str(build_root()))
    summaries = []
    for flags in ([], ["--backpressure"]):
        assert main(["sim", str(out), "--images", "1", "--json", *flags]) == 0
        summaries.append(json.loads(capsys.readouterr().out))
    paced, jammed = summaries
    assert paced["bit_exact"] and jammed["bit_exact"] and paced["output_integers"] == jammed["output_integers"] == 10
    assert jammed["cycles_per_inference"] > paced["cycles_per_inference"]
    # report.json keeps both runs side by side, and its own cycles the model's
    report = json.loads((out / "report.json").read_text())
    measured = report["rtl_simulation"]
    assert measured["without_backpressure"]["cycles"] == paced["cycles_per_inference"]
    assert measured["with_backpressure"]["cycles"] == jammed["cycles_per_inference"]
    assert report["total"]["cycles"] == paced["cycles_model"] == measured["with_backpressure"]["cycles_model"]
    page = (out / "report.html").read_text()
    assert "measured in RTL simulation (without backpressure)" in page and "(with backpressure)" in page
