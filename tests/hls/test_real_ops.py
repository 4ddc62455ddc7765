"""Models in the shape of real exports, C-simulated with g++: every output integer must equal the integer
reference's. Elu and Selu run as lookup tables, Resize as a copy nest, a whole-map AveragePool as the
global pool, and onnxruntime's dynamic quantization on the model's own integer weights."""
from __future__ import annotations

import pytest

from tests.builders import assert_close_to_ort
from tests.hls.helpers import generate_and_csim, quantize_model
from tests.real_exports import dynamic_quantized, images, real_ops_net, selu_classifier, upsampling_net

pytestmark = pytest.mark.csim

CALIB = 12


@pytest.mark.parametrize("build", [upsampling_net, selu_classifier, real_ops_net])
def test_float_exports_are_bit_exact(build, tmp_path):
    result = generate_and_csim(build(), {"x": images(CALIB, 0)}, tmp_path)
    assert result.mismatches == 0, result.log
    assert result.samples == CALIB and result.compared > 0


@pytest.mark.parametrize("build", [upsampling_net, selu_classifier, real_ops_net])
def test_the_float_reference_equals_onnxruntime(build):
    assert_close_to_ort(build(), {"x": images(1, 3)})


def test_ops_lower_to_the_integer_forms_the_kernels_run():
    ops = [n.op for n in quantize_model(real_ops_net(), {"x": images(CALIB, 0)}).graph.topological()]
    assert ops == ["QConv", "QLut", "QConv", "Resize", "QConv", "QLut", "QAveragePool", "QDense"]


def test_a_dynamically_quantized_export_is_bit_exact(tmp_path):
    model = dynamic_quantized(real_ops_net(), tmp_path, per_channel=True)
    result = generate_and_csim(model, {"x": images(CALIB, 0)}, tmp_path)
    assert result.mismatches == 0, result.log
    assert result.samples == CALIB and result.compared == CALIB * 10
