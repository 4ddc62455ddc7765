"""hlsgen.hw.window_banks: the pitch that puts a depthwise row tile's taps in different banks of the window
memory, and the mapping's fallback where no pitch does."""
import numpy as np
from onnx import helper

from hlsgen.hw import map_model
from hlsgen.hw.window_banks import banked, kernel_taps, window_pitch
from tests.builders import make_model, tensor_value
from tests.hls.helpers import quantize_model
from tests.hw.models import target_with


def test_a_3x3_kernel_takes_the_smallest_pitch_whose_taps_fill_distinct_banks():
    taps = kernel_taps((3, 3), (1, 1))
    assert window_pitch(64, [taps], 16) == 67  # 64 = 0 (mod 16): every third tap would share a bank
    assert window_pitch(12, [taps], 16) == 12 and window_pitch(24, [taps], 16) == 26
    for width in range(1, 200):  # a pitch always exists within a bank count of the width, and it is banked
        pitch = window_pitch(width, [taps], 16)
        assert width <= pitch < width + 16 and banked(taps, pitch, 16)
        offsets = [(dy * pitch + dx) % 16 for dy, dx in taps]
        assert len(set(offsets)) == 9


def test_tiles_of_a_larger_kernel_and_dilations_are_banked_tile_by_tile():
    five = kernel_taps((5, 5), (1, 1))  # 25 taps: tiles of 16 and 9 on 16 banks, of 8 on 8 banks
    for banks in (8, 16):
        pitch = window_pitch(40, [five], banks)
        assert pitch is not None and banked(five, pitch, banks)
    assert window_pitch(40, [kernel_taps((3, 3), (3, 3))], 16) is not None  # an odd dilation is invertible
    assert window_pitch(40, [kernel_taps((3, 3), (2, 2))], 16) is None  # 9 even offsets, 8 even banks
    assert window_pitch(40, [kernel_taps((3, 3), (2, 2))], 8) is None  # a tile of 8 even offsets: 4 banks
    assert kernel_taps((3,), (2,)) == ((0, 0), (0, 2), (0, 4))


def dilated_depthwise(dilation: int):
    rng = np.random.default_rng(3)
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], pads=[dilation] * 4, dilations=[dilation] * 2, group=16)]
    model = make_model(nodes, [tensor_value("x", [1, 16, 12, 12])], [tensor_value("y", None)],
                       {"w": rng.normal(0, 0.5, (16, 1, 3, 3)).astype(np.float32)})
    return quantize_model(model, {"x": rng.uniform(-1, 1, (4, 16, 12, 12)).astype(np.float32)})


def test_a_depthwise_conv_no_pitch_banks_runs_as_a_grouped_conv():
    """A 3x3 depthwise Conv of dilation 2 on 16 rows: its taps' offsets are all even, so no pitch puts 9 of
    them in 16 banks; the mapping runs it as a grouped Conv (block-diagonal weights), not in depthwise mode.
    Of dilation 3 it banks."""
    kinds = {layer.kind for layer in map_model(dilated_depthwise(2).graph, target_with("systolic16x16")).layers}
    assert "grouped_conv" in kinds and "depthwise" not in kinds
    kinds = {layer.kind for layer in map_model(dilated_depthwise(3).graph, target_with("systolic16x16")).layers}
    assert "depthwise" in kinds
