"""Map sides above 255 in the RTL: DIM_W, the width of every map coordinate an engine counts, is the
program's (its buffers' and on-chip maps' sides, windows, output rows, the taps' kernel offsets), never
below 8, so small models' Verilog is unchanged; maps in external memory count for nothing (the moves count
words). Whole-model simulations of these models: sim/test_model_map_sides.py."""
import pytest

from hlsgen.hw import load_target, map_model
from hlsgen.rtl.program import ARRAY, DIM_FIELDS, SIGNED_DIM_FIELDS, compile_program
from hlsgen.rtl.render import write_rtl
from hlsgen.rtl.toolchain import lint
from hlsgen.rtl.words import MIN_DIM_W, tap_word
from tests import map_sides
from tests.hls.helpers import quantize_model
from tests.hw.models import integer_graph, target_with
from tests.rtl.program_of import rtl_program


def program_of(name: str, target):
    model = getattr(map_sides, name)()
    graph = quantize_model(model, map_sides.feeds(model, 2, 0)).graph
    mapping = map_model(graph, target)
    return mapping, compile_program(mapping, graph)


def coordinates(program) -> tuple[list[int], list[int]]:
    """(unsigned, signed) map coordinates of the layer table and the tap table."""
    unsigned = [layer.fields[k] for layer in program.layers for k in DIM_FIELDS if k in layer.fields]
    signed = [layer.fields[k] for layer in program.layers for k in SIGNED_DIM_FIELDS if k in layer.fields]
    word = tap_word(program.widths["ADDR_W"], program.widths["DIM_W"])
    for taps in program.taps:
        for r in range(program.rows):
            lane = taps >> (r * word.width)
            unsigned += [lane >> word[k].offset & ((1 << word[k].width) - 1) for k in ("dx", "dy")]
    return unsigned, signed


def assert_fits(program) -> None:
    dim = program.widths["DIM_W"]
    unsigned, signed = coordinates(program)
    assert max(unsigned) < 1 << dim and all(-(1 << dim) <= v < 1 << dim for v in signed)


@pytest.mark.parametrize("model", ["digits", "mobilenet", "window_pools"])
@pytest.mark.parametrize("target", ["systolic16x16", "systolic8x8"])
def test_small_models_keep_eight_bit_coordinates(model, target):
    program = rtl_program(integer_graph(model), load_target(target))
    assert program.widths["DIM_W"] == MIN_DIM_W == 8
    params = program.word_parameters
    assert params["TAP_DY_LSB"] - params["TAP_DX_LSB"] == 8 and params["TAP_VALID_LSB"] - params["TAP_DY_LSB"] == 8


def test_a_wide_tall_image_counts_its_buffers_not_its_external_maps(tmp_path):
    """1000 x 320 px on the shipped systolic16x16: the input and the 500 x 160 maps live in external memory
    (they would need 10 bits), the rows run in bands over buffers 320 px wide: DIM_W 9."""
    mapping, program = program_of("wide_tall", load_target("systolic16x16"))
    assert mapping.maps_external and mapping.input_in_dram
    external = [m for m in program.maps.values() if m.dram_base is not None]
    assert max(m.height for m in external) == 1000 and any(m.height == 500 for m in external)
    on_chip = [m for m in program.maps.values() if m.dram_base is None]
    assert max(max(m.height, m.width) for m in on_chip) == 320
    assert program.widths["DIM_W"] == 9
    assert_fits(program)
    bands = {layer.row.kind for layer in program.layers if layer.row.band and layer.row.band.count > 1}
    assert {"conv", "elementwise", "pool"} <= bands
    files = write_rtl(program, tmp_path)  # every field's value fits its column
    assert "localparam integer DIM_W = 9;" in (tmp_path / f"{files.top}.v").read_text()
    for top in (files.top, files.tb):
        ok, messages = lint(list(files.sources), top)
        assert ok, messages


def test_a_4096_long_sequence_fits_on_chip_with_13_bit_coordinates(tmp_path):
    mapping, program = program_of("long_1d", load_target("systolic16x16"))
    assert not mapping.maps_external
    assert program.maps[program.input_map].width == 4096 and program.widths["DIM_W"] == 13
    assert_fits(program)
    conv2 = next(layer for layer in program.layers if layer.name == "conv2")
    assert conv2.kind == ARRAY and conv2.fields["in_w"] == 4096 and conv2.fields["out_w"] == 2048
    # its five taps keep their kernel columns in 13-bit fields: lane r of tile t reads k = t * 16 + r
    word = tap_word(program.widths["ADDR_W"], 13)
    dx = [program.taps[conv2.fields["tap_base"] + k // 16] >> ((k % 16) * word.width + word["dx"].offset) & 8191
          for k in range(5 * 16)]
    assert dx == [k // 16 for k in range(5 * 16)]
    files = write_rtl(program, tmp_path)
    for top in (files.top, files.tb):
        ok, messages = lint(list(files.sources), top)
        assert ok, messages


def test_a_band_counts_its_pool_windows_in_its_buffer():
    """A 300-row map's average pools in bands of 32 KiB: the counted rows (the map, or the map and its
    padding) are clipped to the band's buffer and its padding, so DIM_W stays 8 (the whole map's rows would
    need 9)."""
    mapping, program = program_of("tall_pools", target_with("systolic16x16", buffers__input__kib=32))
    pools = [layer for layer in program.layers if layer.node is not None and layer.node.op == "QAveragePool"
             and layer.row.band is not None and layer.row.band.count > 1]
    assert {layer.node.name for layer in pools} == {"avg1", "avg2"}
    assert program.widths["DIM_W"] == 8
    for layer in pools:
        f = layer.fields
        assert f["cnt_y0"] >= -layer.row.band.pad_top and f["cnt_y1"] <= f["in_h"] + 1
    assert_fits(program)
