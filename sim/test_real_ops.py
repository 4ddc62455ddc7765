"""Models in the shape of real exports through the RTL: Elu and Selu (lookup tables on the vector unit),
Resize 2x (the vector engine reading each output pixel's source pixel), a whole-map AveragePool (the
global pool) and onnxruntime's dynamic quantization (ConvInteger/MatMulInteger -> Cast -> Mul on the
model's integer weights). One network holds them all, so two Verilator builds cover every op: the
float export and its `quantize_dynamic` version. Every output integer must equal the integer reference,
and the cycles the performance model's within 5%."""
import numpy as np
import onnx
import pytest

from bench import build_root
from hlsgen.cli import main
from hlsgen.rtl.sim import simulate
from tests.real_exports import dynamic_quantized, images, real_ops_net

CYCLE_TOLERANCE = 0.05
IMAGES = 4


@pytest.mark.rtl
@pytest.mark.parametrize("dynamic", [False, True], ids=["float", "quantize_dynamic"])
def test_real_ops_are_bit_exact_in_the_rtl(tmp_path, dynamic):
    model = dynamic_quantized(real_ops_net(), tmp_path) if dynamic else real_ops_net()
    # its own name, so its own Verilator build folder (cached across runs) in the shared build root
    path = tmp_path / f"real_ops_{'dynamic' if dynamic else 'float'}.onnx"
    onnx.save(model, str(path))
    np.savez(tmp_path / "calib.npz", x=images(16, 0))
    np.savez(tmp_path / "test.npz", x=images(IMAGES, 1))
    out = tmp_path / "build"
    assert main(["build", str(path), "--target", "systolic8x8", "--calib", str(tmp_path / "calib.npz"), "-o", str(out),
                 "-q"]) == 0
    result = simulate(out, tmp_path / "test.npz", None, build_root())
    assert not result.mismatches and result.compared == IMAGES * 10
    gap = abs(result.cycles_per_inference - result.model_cycles) / result.model_cycles
    assert gap <= CYCLE_TOLERANCE, f"{result.cycles_per_inference} RTL cycles vs {result.model_cycles} modelled"
