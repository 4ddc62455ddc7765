"""Brevitas-style QONNX exports through the RTL, built with no calibration data: Quant nodes in the default
domain, BatchNorm folded onto 3-bit weights, 3-bit activations, a Trunc after a pool, and logits behind an
8-bit Quant (the RTL streams bytes; float logits at accumulator precision run in the HLS C++ only). Every output
integer must equal the integer reference, and the cycles the performance model's within 5%."""
import numpy as np
import onnx
import pytest

from bench import build_root
from hlsgen.cli import main
from hlsgen.rtl.sim import simulate
from tests.qonnx_models import digits_images, trunc_pool_model, w3a3_digits

CYCLE_TOLERANCE = 0.05
IMAGES = 4


@pytest.mark.rtl
@pytest.mark.parametrize("name", [pytest.param("w3a3", marks=pytest.mark.slow), "trunc_pool"])
def test_qonnx_export_is_bit_exact_in_the_rtl(tmp_path, name):
    """The W3A3 digits CNN (3-bit weight ROM and PEs), and GlobalAveragePool -> Trunc (a right shift on the
    vector unit, FLOOR through its input zero point)."""
    model = w3a3_digits(logits_bits=8) if name == "w3a3" else trunc_pool_model(logits_bits=8)
    onnx.save(model, str(tmp_path / f"{name}.onnx"))
    np.savez(tmp_path / "test.npz", image=digits_images("test")[0][:IMAGES])
    out = tmp_path / "build"
    assert main(["build", str(tmp_path / f"{name}.onnx"), "-o", str(out), "-q"]) == 0
    result = simulate(out, tmp_path / "test.npz", None, build_root())
    assert not result.mismatches and result.compared == IMAGES * 10
    gap = abs(result.cycles_per_inference - result.model_cycles) / result.model_cycles
    assert gap <= CYCLE_TOLERANCE, f"{result.cycles_per_inference} RTL cycles vs {result.model_cycles} modelled"


def test_float_logits_get_no_rtl_and_say_why(tmp_path, capsys):
    onnx.save(w3a3_digits(), str(tmp_path / "w3a3.onnx"))
    assert main(["build", str(tmp_path / "w3a3.onnx"), "-o", str(tmp_path / "build")]) == 0
    assert ("no Verilog RTL for this model: feature map 'logits' holds 11-bit values; the RTL keeps activations in 8 "
            "bits") in capsys.readouterr().err
    assert not (tmp_path / "build" / "rtl").exists()
