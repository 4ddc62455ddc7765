"""`verilator --lint-only -Wall` is clean on every hand-written module and on everything generated."""
import re

import pytest

from hlsgen.hw import load_target
from hlsgen.rtl import rtl_sources
from tests.rtl.program_of import rtl_program
from hlsgen.rtl.render import write_rtl
from hlsgen.rtl.toolchain import lint
from tests.hw.models import integer_graph

MODULES = sorted(m for src in rtl_sources() for m in re.findall(r"^module\s+(\w+)", src.read_text(), re.M))
# parameters under which a module has every optional part (defaults elsewhere)
VARIANTS = {"hg_dw_window": {"BANKS": 4, "DEPTH": 40},
            "hg_array_engine": {"DW_BANKS": 4, "DW_DEPTH": 30, "EXT_WEIGHTS": 1},
            "hg_vector_lane": {"LUT_DEPTH": 16}, "hg_vector_engine": {"LUT_DEPTH": 16, "DIV_DEPTH": 20},
            "hg_fmap_dma": {"DATA_W": 16}, "hg_weight_dma": {"BEATS": 2},  # words of two beats
            "hg_axil_ctrl": {"R": 64, "C": 64, "IO_BITS": "2'b11"}, "hg_io_reader": {"DATA_W": 128},
            "hg_io_writer": {"DATA_W": 128},
            # five tables of 1, 2, 4, 1 and 8 beats an entry, on a 64-bit port
            "hg_program_loader": {"DATA_W": 64, "TABLES": 5, "BEATS_LG": "20'h30210", "HDR_BEATS": 16,
                                  "ENTRY_W": 500, "SLOT_BEATS": 16, "ENTRY_AW": 12}}


@pytest.mark.parametrize("module", MODULES)
def test_module_is_lint_clean(module):
    ok, messages = lint(rtl_sources(), module)
    assert ok, messages
    if module in VARIANTS:
        ok, messages = lint(rtl_sources(), module, VARIANTS[module])
        assert ok, messages


@pytest.mark.parametrize("target", ["systolic16x16", "systolic8x8"])
@pytest.mark.parametrize("model", ["digits", "mnist-8", "residual", "mobilenet", "autoencoder", "window_pools",
                                   "grouped_cnn", "strided", "spatial_concat", "copies"])
def test_generated_top_and_testbench_are_lint_clean(model, target, tmp_path):
    files = write_rtl(rtl_program(integer_graph(model), load_target(target)), tmp_path)
    for top in (files.top, files.tb):
        ok, messages = lint(list(files.sources), top)
        assert ok, messages


@pytest.mark.parametrize("target", ["systolic16x16", pytest.param("systolic32x32", marks=pytest.mark.slow)])
def test_a_top_and_testbench_with_weights_in_external_memory_are_lint_clean(tmp_path, target):
    """The example with 16 KiB of weight memory: an AXI4 master port and hg_weight_dma instead of the ROM
    (on systolic32x32 taking a word of the weight image in two beats), its base address from the AXI4-Lite
    control block instead of a port."""
    from hlsgen.hw.target import Buffer
    from tests.hw.models import target_with

    program = rtl_program(integer_graph("digits"), target_with(target, buffers__weight=Buffer(16, 16)))
    files = write_rtl(program, tmp_path)
    text = (tmp_path / f"{files.top}.v").read_text()
    assert "hg_weight_dma" in text and "hg_axil_ctrl" in text and "input  wire       s_axi_ctrl_awvalid" in text
    assert "output wire       irq" in text and "input  wire [31:0] weights_base" not in text
    for top in (files.top, files.tb):
        ok, messages = lint(list(files.sources), top)
        assert ok, messages


def test_a_top_with_upsampling_and_lookup_tables_is_lint_clean(tmp_path):
    from tests.hls.helpers import quantize_model
    from tests.real_exports import images, real_ops_net

    graph = quantize_model(real_ops_net(), {"x": images(8, 0)}).graph
    files = write_rtl(rtl_program(graph, load_target("systolic8x8")), tmp_path)
    ok, messages = lint(list(files.sources), files.top)
    assert ok, messages


def test_a_top_with_3_bit_weights_is_lint_clean(tmp_path):
    """The W3A3 QONNX model: the weight ROM and the PEs at 3 bits (the model's), not the target's 8; a ROM word
    holds four 16-bit slices (the power of two at or above 3)."""
    from hlsgen.frontend import import_model
    from hlsgen.passes import optimize
    from hlsgen.quant import BitConfig, QuantizedModel
    from hlsgen.quant.lower import lower
    from hlsgen.quant.prequant import absorb_quantization
    from tests.qonnx_models import w3a3_digits

    graph = import_model(w3a3_digits(logits_bits=8))
    absorb_quantization(graph)
    optimize(graph)
    program = rtl_program(QuantizedModel(lower(graph, {}, BitConfig()), graph).graph, load_target("systolic16x16"))
    assert program.widths["W_W"] == 3 and program.weight_word_slices == 4
    assert all(word < 1 << (16 * 4) for word in program.weights)
    files = write_rtl(program, tmp_path)
    assert ".W_W(3)" in (files.folder / f"{files.top}.v").read_text()
    ok, messages = lint(list(files.sources), files.top)
    assert ok, messages


@pytest.mark.parametrize("model, kib", [("residual", 4), ("mobilenet", 12)])
def test_a_top_and_testbench_with_feature_maps_in_external_memory_are_lint_clean(tmp_path, model, kib):
    """A few KiB of activation memory: the input and the large maps in the feature-map image, moved by dma rows
    through hg_fmap_dma's AXI4 port (m_axi_fmap); a model whose maps fit keeps its ports (no m_axi_fmap)."""
    from hlsgen.hw.target import Buffer
    from tests.hw.models import target_with

    program = rtl_program(integer_graph(model), target_with(buffers__input=Buffer(kib, 16)))
    files = write_rtl(program, tmp_path)
    top = (tmp_path / f"{files.top}.v").read_text()
    assert "hg_fmap_dma" in top and "m_axi_fmap_awvalid" in top and "s_axis_tdata" not in top
    assert "hg_axil_ctrl" in top and "image_ready" not in top and "input  wire [31:0] fmap_base" not in top
    for name in (files.top, files.tb):
        ok, messages = lint(list(files.sources), name)
        assert ok, messages
    whole = write_rtl(rtl_program(integer_graph(model), target_with()), tmp_path / "whole")
    whole_top = (whole.folder / f"{whole.top}.v").read_text()
    assert "m_axi_fmap" not in whole_top and "s_axi_ctrl" not in whole_top


@pytest.mark.parametrize("target", ["systolic16x16", "systolic8x8"])
@pytest.mark.parametrize("model, batch", [("digits", 8), ("digits", 32), ("autoencoder", 4)])
def test_a_batch_top_and_testbench_are_lint_clean(model, batch, target, tmp_path):
    """--batch N: the image counter, the writer's per-image base, the streams' per-image addresses (the
    autoencoder's input is a map the tail reads: the input stream writes each image in its place)."""
    from hlsgen.hw import map_model
    from hlsgen.rtl.program import compile_program

    graph = integer_graph(model)
    program = compile_program(map_model(graph, load_target(target), batch=batch), graph)
    assert program.images == batch
    files = write_rtl(program, tmp_path)
    for top in (files.top, files.tb):
        ok, messages = lint(list(files.sources), top)
        assert ok, messages
