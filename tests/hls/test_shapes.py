"""Layer shapes the RTL learnt (grouped convolutions in chunks, hlsgen.hw.groups; strides above 15;
Concat, Pad and Transpose as vector passes),
C-simulated with g++: every output integer must equal the integer reference's."""
from __future__ import annotations

import pytest

from hlsgen import zoo
from tests.hls.helpers import csim, generate, generate_and_csim, quantize_model
from tests.hw.models import (copies_model, depthwise_multiplier_model, grouped_cnn_model, spatial_concat_model,
                             strided_model)

pytestmark = pytest.mark.csim


@pytest.mark.parametrize("build", [grouped_cnn_model, strided_model, copies_model, spatial_concat_model,
                                   depthwise_multiplier_model])
def test_shapes_are_bit_exact(build, tmp_path):
    model = build()
    result = generate_and_csim(model, {"x": zoo.calibration_data(model, n=6, seed=0)}, tmp_path)
    assert result.mismatches == 0, result.log
    assert result.samples == 6 and result.compared == 60


def test_a_depthwise_conv_with_a_channel_multiplier_is_exact_on_the_overlay(tmp_path):
    """Once run in depthwise mode (column m reading channel m, not m // 2) and wrong; now a grouped conv."""
    model = depthwise_multiplier_model()
    calib = {"x": zoo.calibration_data(model, n=6, seed=0)}
    generate(quantize_model(model, calib), calib, tmp_path / "hls", target="systolic8x8", design="overlay")
    result = csim(tmp_path / "hls", portable=True)
    assert result.mismatches == 0 and result.compared == 60, result.log[-2000:]
