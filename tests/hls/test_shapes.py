"""Layer shapes the array runs in chunks (hlsgen.hw.groups), C-simulated with g++: every output integer must
equal the integer reference's."""
from __future__ import annotations

import pytest

from hlsgen import zoo
from tests.hls.helpers import generate_and_csim
from tests.hw.models import grouped_cnn_model

pytestmark = pytest.mark.csim


def test_grouped_convolutions_are_bit_exact(tmp_path):
    model = grouped_cnn_model()
    result = generate_and_csim(model, {"x": zoo.calibration_data(model, n=6, seed=0)}, tmp_path)
    assert result.mismatches == 0, result.log
    assert result.samples == 6 and result.compared == 60
