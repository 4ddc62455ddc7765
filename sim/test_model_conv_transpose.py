"""Learned upsampling (ConvTranspose, issue 26) built with `hlsgen build --verify csim,rtl`: each transposed
convolution runs as one Conv per stride phase on the array and an Interleave on the vector unit (a copy per
phase into every second row and column), the whole model in one segment, the C++ of both HLS designs and the
RTL bit-exact against the integer reference, the RTL at exactly the performance model's cycles."""
import json

import onnx
import pytest

from bench import build_root
from hlsgen.cli import main
from tests.rtl.decoder import decoder_model
from verified_build import verified_build


@pytest.mark.csim
@pytest.mark.rtl
def test_transposed_convolutions_run_on_the_accelerator_bit_exact_at_the_model_s_cycles(tmp_path, monkeypatch):
    monkeypatch.setenv("HLSGEN_SIM_BUILD", str(build_root()))
    report = verified_build(decoder_model(), tmp_path, "decoder", "--target", "systolic8x8", "--input-range", "0,1")
    partition = report["partition"]  # the whole model in one segment, nothing on the host
    assert (len(partition["segments"]), partition["host_nodes"]) == (1, [])
    layers = report["layers"]
    # 4 + 4 phase convs (the BatchNorm and Relu folded into the first four), two Interleaves, no standalone Relu
    assert sum(layer["op"] == "QConv" for layer in layers) == 10
    assert sum(layer["op"] == "Interleave" for layer in layers) == 2
    measured = report["rtl_simulation"]["without_backpressure"]
    assert measured["output_integers"] == measured["images"] * 4 * 32 * 32


@pytest.mark.csim
def test_the_overlay_s_c_plus_plus_weaves_the_phases_bit_exact(tmp_path):
    model = tmp_path / "decoder.onnx"
    onnx.save(decoder_model(), str(model))
    out = tmp_path / "build"
    assert main(["build", str(model), "--target", "systolic8x8", "--input-range", "0,1", "-o", str(out), "-q",
                 "--hls-design", "overlay", "--verify", "csim"]) == 0
    assert json.loads((out / "report.json").read_text())["verification"]["csim"]["passed"]
