"""A Brevitas-style W3A3 QONNX export (Quant in the default domain, BatchNorm, float logits) built with no
calibration data: its widths reach quant.json, report.json and the C++ types, and the C++ is bit-exact."""
from __future__ import annotations

import json
import re

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from hlsgen.build_folder import load_build
from hlsgen.cli import main
from tests.qonnx_models import DIGITS, trunc_pool_model, w3a3_digits

pytestmark = pytest.mark.csim


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp("w3a3")
    onnx.save(w3a3_digits(), str(folder / "w3a3.onnx"))
    code = main(["build", str(folder / "w3a3.onnx"), "-o", str(folder / "out"), "--verify", "csim", "-q"])
    assert code == 0
    return folder / "out"


def test_widths_are_the_models_everywhere(built):
    quant = json.loads((built / "quant.json").read_text())
    tensors = quant["tensors"]
    names = ("image", "r1", "p1", "r2", "p2", "r3", "logits")
    assert [(tensors[t]["bits"], tensors[t]["signed"]) for t in names] == [(8, False)] + [(3, False)] * 5 + [(11, True)]
    assert not any("range" in entry for entry in tensors.values())  # no range came from data
    assert [layer["weight_bits"] for layer in quant["layers"]] == [3, 3, 3, 3]
    report = json.loads((built / "report.json").read_text())
    assert [(layer["name"], layer["bits"]) for layer in report["layers"] if layer["unit"] == "systolic_array"] == [
        ("conv1+pool1", {"input": 8, "output": 3, "weights": 3}),
        ("conv2+pool2", {"input": 3, "output": 3, "weights": 3}),
        ("fc1", {"input": 3, "output": 3, "weights": 3}), ("fc2", {"input": 3, "output": 11, "weights": 3})]
    header = (built / "hls" / "w3a3.h").read_text()
    types = {tensor: ctype for ctype, tensor in re.findall(r"typedef (ap_u?int<\d+>) (\w+)_t;", header)}
    assert types == {"image": "ap_uint<8>", "logits": "ap_int<11>"}  # the stream ports
    config = (built / "hls" / "overlay_config.h").read_text()
    assert "typedef ap_int<3> wgt_t;" in config  # the PE weight registers: the model's 3 bits
    program = (built / "hls" / "w3a3_program.h").read_text()
    rows = json.loads((built / "program.json").read_text())["rows"]  # tiles of 16 lanes x 16 columns, zero-padded
    slots = sum(r["tiles"]["row_tiles"] * r["tiles"]["col_tiles"] * 256 for r in rows if r["unit"] == "systolic_array")
    assert f"// Weights: {3 * slots} bits, each layer's contiguous at its own width" in program


def test_the_cxx_is_bit_exact_on_all_360_test_images(built, tmp_path, capsys):
    np.savez(tmp_path / "test.npz", image=np.load(DIGITS / "test.npz")["image"])
    assert main(["csim", str(built), "--inputs", str(tmp_path / "test.npz"), "--portable"]) == 0
    assert "bit-exact: 3,600 output integers of 360 sample(s)" in capsys.readouterr().out


def test_a_trunc_after_a_pool_is_bit_exact(tmp_path):
    """GlobalAveragePool -> Trunc (a right shift on the vector unit) and float logits, no calibration data;
    the QDQ export (the 10-bit logits as Div/Round/Clip/Mul) runs in onnxruntime within one output step."""
    onnx.save(trunc_pool_model(), str(tmp_path / "trunc.onnx"))
    out = tmp_path / "out"
    assert main(["build", str(tmp_path / "trunc.onnx"), "-o", str(out), "--verify", "csim", "-q"]) == 0
    images = np.load(DIGITS / "test.npz")["image"][:20]
    quantized = load_build(out)
    expected = quantized.run({"image": images})["logits"]
    session = ort.InferenceSession(str(out / "model_qdq.onnx"), providers=["CPUExecutionProvider"])
    got = np.concatenate([session.run(None, {"image": x[None]})[0] for x in images])
    assert np.abs(got - expected).max() <= quantized.graph.quant["logits"].scale * 1.001
