"""ShuffleNetV2 units (issue 26) built with `hlsgen build --verify csim,rtl`: the channel shuffles and the
chunks' halves are Gathers of channels, taken into the next 1x1 convs' weights, except the half a unit passes
on, which is a 1x1 conv of 0/1 weights writing onto the Concat's grid; the whole model one program, bit-exact in
C-sim and RTL at the performance model's cycles."""
import json

import onnx
import pytest

from bench import build_root
from hlsgen.cli import main
from tests.rtl.shuffle import shufflenet_model


@pytest.mark.csim
@pytest.mark.rtl
def test_channel_shuffles_run_on_the_accelerator_bit_exact_at_the_model_s_cycles(tmp_path, monkeypatch):
    monkeypatch.setenv("HLSGEN_SIM_BUILD", str(build_root()))
    model = tmp_path / "shufflenet.onnx"
    onnx.save(shufflenet_model(), str(model))
    out = tmp_path / "build"
    assert main(["build", str(model), "--target", "systolic8x8", "--input-range", "0,1", "-o", str(out), "-q",
                 "--verify", "csim,rtl"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert (len(report["partition"]["segments"]), report["partition"]["host_nodes"]) == (1, [])
    layers = report["layers"]
    # stem, 3 per unit, head, and one 0/1 copy per unit; no requantization before the Concats
    assert [layer["op"] for layer in layers].count("QConv") == 1 + 2 * 4 + 1
    assert [layer["op"] for layer in layers].count("Concat") == 2 and len(layers) == 12
    assert report["verification"]["csim"]["passed"] and report["verification"]["rtl"]["passed"]
    measured = report["rtl_simulation"]["without_backpressure"]
    assert measured["bit_exact"] and measured["cycles"] == measured["cycles_model"] == report["total"]["cycles"]
