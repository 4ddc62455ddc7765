"""The overlay's C++ with map sides above 255 (tests/map_sides.py; its row fields are ints): C-simulated
bit-exact on the shipped systolic16x16 with a 1000 x 320 px image (bands through the feature-map image) and
a 4096-long 1-D sequence (on chip), and on 32 KiB of activation memory with a 300-row map's padded average
pools in bands."""
from __future__ import annotations

import numpy as np
import pytest

from hlsgen.hls import write_hls
from hlsgen.hw import load_target, map_model
from tests import map_sides
from tests.hls.helpers import csim, quantize_model
from tests.hw.models import target_with

pytestmark = pytest.mark.csim

CASES = [("wide_tall", lambda: load_target("systolic16x16"), True),
         ("long_1d", lambda: load_target("systolic16x16"), False),
         ("tall_pools", lambda: target_with("systolic16x16", buffers__input__kib=32), True)]


@pytest.mark.parametrize("name, target, external", CASES, ids=[c[0] for c in CASES])
def test_long_map_sides_are_bit_exact(tmp_path, name, target, external):
    model = getattr(map_sides, name)()
    feeds = map_sides.feeds(model, 2, 0)
    quantized = quantize_model(model, feeds)
    mapping = map_model(quantized.graph, target())
    assert mapping.maps_external == external
    int_inputs = quantized.quantize_inputs(feeds)
    write_hls(tmp_path / "hls", quantized.graph, mapping.target, name, f"{name}.onnx", int_inputs,
              quantized.run_int(int_inputs), design="overlay", mapping=mapping)
    result = csim(tmp_path / "hls", portable=True)
    outputs = sum(int(np.prod(quantized.graph.shape(t))) for t in quantized.graph.outputs)
    assert result.compared == result.samples * outputs == 2 * 10 and result.mismatches == 0, result.log[-2000:]
