"""An input of more channels than the array has rows, neither dividing nor a multiple of them (40 mel bands on
16 rows), packed at G = R when its R whole copies would crowd the maps out of the activation memory: the input
stream writes channel c into bank c mod 16 at word (c >> 4) * frames + frame, the 1-D Conv reads 48 lanes a
tap (the last 8 with zero weights); C-sim and RTL bit-exact, the RTL at the model's cycles."""
import json

import onnx
import pytest

from bench import build_root
from hlsgen.cli import main
from tests.hw.models import mel_frames_model


@pytest.mark.csim
@pytest.mark.rtl
def test_forty_mel_bands_packed_sixteen_to_a_word_are_bit_exact(tmp_path, monkeypatch):
    monkeypatch.setenv("HLSGEN_SIM_BUILD", str(build_root()))
    model = tmp_path / "mel_frames.onnx"
    onnx.save(mel_frames_model(), str(model))
    out = tmp_path / "build"
    assert main(["build", str(model), "--input-range", "-1,1", "-o", str(out), "-q", "--verify", "csim,rtl"]) == 0
    program = json.loads((out / "program.json").read_text())
    assert program["memory"]["maps"]["x"]["banks"] == 16 and program["residency"]["feature_maps"] == "on_chip"
    assert {r["tiles"]["reduction_channels"] for r in program["rows"] if r["nodes"] == ["front"]} == {48}
    report = json.loads((out / "report.json").read_text())
    assert report["verification"]["csim"]["passed"] and report["verification"]["rtl"]["passed"]
    measured = report["rtl_simulation"]["without_backpressure"]
    assert measured["bit_exact"] and measured["cycles"] == measured["cycles_model"] == report["total"]["cycles"]
