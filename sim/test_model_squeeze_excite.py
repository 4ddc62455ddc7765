"""A squeeze-and-excitation block (a map times a per-channel gate computed from it, issue: QMul) built with
`hlsgen build --verify csim,rtl`: the whole model on the accelerator in one segment, the C++ and the RTL
bit-exact against the integer reference, the RTL at exactly the performance model's cycles."""
import json

import onnx
import pytest

from bench import build_root
from hlsgen.cli import main
from tests.rtl.squeeze_excite import squeeze_excite_model
from verified_build import verified_build


@pytest.mark.csim
@pytest.mark.rtl
@pytest.mark.parametrize("gate_first", [False, True])
def test_the_gate_product_runs_on_the_accelerator_bit_exact_at_the_model_s_cycles(gate_first, tmp_path,
                                                                                 monkeypatch):
    monkeypatch.setenv("HLSGEN_SIM_BUILD", str(build_root()))
    report = verified_build(squeeze_excite_model(gate_first), tmp_path, "squeeze_excite", "--target", "systolic8x8",
                            "--input-range", "0,1")
    partition = report["partition"]  # the whole model in one segment, nothing on the host
    assert (len(partition["segments"]), partition["host_nodes"]) == (1, [])
    assert partition["macs_on_accelerator"] == partition["macs_total"] == report["total"]["macs"]
    assert "QMul" in {layer["op"] for layer in report["layers"]}
    measured = report["rtl_simulation"]["without_backpressure"]
    assert measured["output_integers"] == measured["images"] * 4 * 8 * 8


@pytest.mark.rtl
def test_the_target_s_top_runs_the_gate_product_from_a_loaded_program(tmp_path, monkeypatch):
    """--program external: the layer table's row carries b_one; the product's row takes exactly the model's cycles
    (the whole program is within a few percent of them, as every loaded program: sim/test_one_bitstream.py)."""
    monkeypatch.setenv("HLSGEN_SIM_BUILD", str(build_root()))
    model = tmp_path / "squeeze_excite.onnx"
    onnx.save(squeeze_excite_model(), str(model))
    out = tmp_path / "build"
    assert main(["build", str(model), "--target", "systolic8x8", "--input-range", "0,1", "-o", str(out), "-q",
                 "--program", "external", "--verify", "rtl"]) == 0
    report = json.loads((out / "report.json").read_text())
    measured = report["rtl_simulation"]["without_backpressure"]
    (product,) = [layer for layer in report["layers"] if layer["op"] == "QMul"]
    assert measured["bit_exact"] and measured["layers"][product["name"]]["cycles"] == product["cycles"]
