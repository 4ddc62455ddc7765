"""Models with several inputs or outputs (issue 25) built with `hlsgen build --verify csim,rtl`: the C++ and the
RTL bit-exact against the integer reference, output by output; the RTL takes the inputs one after another on its
one input stream and sends the outputs one after another on its one output stream, and takes exactly the
performance model's cycles (which charge every input's and output's elements)."""
import json

import onnx
import pytest

from bench import build_root
from hlsgen.cli import main
from tests.rtl.multi_output import concat_inputs_model, three_outputs_model, two_heads_model

MODELS = {"two_heads": two_heads_model, "three_outputs": three_outputs_model, "concat_inputs": concat_inputs_model}
# output integers per image: a 4x8x8 and a 6x8x8 head; a Dense of 10, the 8x8x8 map r1 and a 4x8x8 head; the
# 16x6x6 depthwise output and its 16x6x6 input
OUTPUTS = {"two_heads": 4 * 64 + 6 * 64, "three_outputs": 10 + 8 * 64 + 4 * 64, "concat_inputs": 2 * 16 * 36}


@pytest.mark.rtl
@pytest.mark.parametrize("name", [pytest.param(n, marks=[pytest.mark.slow] if n == "three_outputs" else [])
                                  for n in sorted(MODELS)])  # three_outputs: tests/runtime's RTL backend too
def test_several_outputs_are_bit_exact_at_the_model_s_cycles(name, tmp_path, monkeypatch):
    monkeypatch.setenv("HLSGEN_SIM_BUILD", str(build_root()))
    model = tmp_path / f"{name}.onnx"
    onnx.save(MODELS[name](), str(model))
    out = tmp_path / "build"
    assert main(["build", str(model), "--target", "systolic8x8", "--input-range", "0,1", "-o", str(out), "-q",
                 "--verify", "csim,rtl"]) == 0
    report = json.loads((out / "report.json").read_text())
    measured = report["rtl_simulation"]["without_backpressure"]
    assert measured["bit_exact"] and measured["output_integers"] == measured["images"] * OUTPUTS[name]
    assert measured["cycles"] == measured["cycles_model"] == report["total"]["cycles"]
