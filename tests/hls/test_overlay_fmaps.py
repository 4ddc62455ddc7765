"""The overlay with feature maps in external memory: where the layer program finds the live maps larger than
the activation memory, rows run in bands between `dma` rows that load and store band buffers through the
m_axi port `fmem` (the feature-map image, words of R bytes). C-simulated bit-exact on models that need bands
(targets with a shrunk activation memory, and the shipped targets with MobileNetV2-0.5, MobileNetV1-0.25, DS-CNN
and ResNet-18), with every node's weights, parameters and tables emitted once and shared by its bands, and
channel-separable rows in slices of C channels computing their own channels."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper

from tests.hls.test_overlay import fixed_latency
from hlsgen import architectures
from hlsgen.cli import main
from hlsgen.errors import MappingError
from hlsgen.hls import write_hls
from hlsgen.hls.csim import vendor_headers
from hlsgen.hls.overlay.units import prove, unit_nests
from hlsgen.loopir import Partition
from hlsgen.hls.overlay.program import build_program
from hlsgen.hls.tbdata import INPUT_FILE
from hlsgen.hls.trace import first_difference
from hlsgen.hw import load_target, map_model
from hlsgen.passes.input_fold import fold_input
from tests.builders import make_model, tensor_value
from tests.hls.helpers import csim, overlay_memories, quantize_model
from tests.hw.models import rgb_stem_model, target_with

pytestmark = pytest.mark.csim
RNG = np.random.default_rng(5)


def windowed_model():
    """Banded windowed average pools (count_include_pad off and on, a padded top), a table, a 2x nearest
    upsampling, a residual QAdd, an unfused MaxPool and a Conv with a fused MaxPool, on a 40 x 24 map."""
    def w(*shape):
        return RNG.normal(0, 0.3, shape).astype(np.float32)

    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["a"], ["r"]),
             helper.make_node("AveragePool", ["r"], ["p1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                              count_include_pad=0),
             helper.make_node("AveragePool", ["p1"], ["p2"], kernel_shape=[3, 2], strides=[2, 1], pads=[1, 0, 0, 1],
                              count_include_pad=1, ceil_mode=1),
             helper.make_node("Conv", ["p2", "w2"], ["b"]),
             helper.make_node("Sigmoid", ["b"], ["s"]),
             helper.make_node("Resize", ["s", "", "scales"], ["u"], mode="nearest"),
             helper.make_node("Add", ["u", "r"], ["sum"]),
             helper.make_node("MaxPool", ["sum"], ["m"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["m", "w3"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("MaxPool", ["c"], ["y"], kernel_shape=[2, 2], strides=[2, 2])]
    inits = {"w1": w(16, 3, 3, 3), "w2": w(16, 16, 1, 1), "w3": w(8, 16, 3, 3),
             "scales": np.array([1, 1, 2, 1], np.float32)}
    model = make_model(nodes, [tensor_value("x", [1, 3, 40, 24])], [tensor_value("y", None)], inits)
    return model, {"x": RNG.uniform(-1, 1, (4, 3, 40, 24)).astype(np.float32)}


def architecture(build, samples: int = 4):
    def made():
        model = build()
        return model, {model.graph.input[0].name: architectures.calibration_data(model, n=samples, seed=0)}
    return made


def banded(tmp_path: Path, made, target):
    """(quantized model, mapping, design) of the overlay written for `target`."""
    model, feeds = made()
    quantized = quantize_model(model, feeds)
    mapping = map_model(quantized.graph, target)
    int_inputs = quantized.quantize_inputs(feeds)
    design = write_hls(tmp_path / "hls", quantized.graph, target, "net", "net.onnx", int_inputs,
                       quantized.run_int(int_inputs), design="overlay", mapping=mapping)
    return quantized, mapping, design


def check_moves(mapping, design) -> None:
    """The design's image and traffic are the program's: the image's words, the bytes its dma rows move."""
    R = mapping.target.array.rows
    moved = [t.bytes for layer in mapping.layers for t in layer.transfers if t.what == "feature_maps"]
    assert mapping.maps_external and moved and design.fmap_bytes == sum(moved)
    assert design.fmap_image_bytes == R * mapping.memory.dram_words > 0
    assert any(layer.band is not None and layer.band.count > 1 for layer in mapping.layers)


CASES = [("resnet8", architecture(architectures.resnet8), "systolic16x16", 16),
         # its G = 1 input band and depthwise window memory need 48 KiB; depthwise rows run in channel slices
         ("mobilenet_v1", architecture(lambda: architectures.mobilenet_v1(0.25, 96)), "systolic16x16", 48),
         ("windowed", windowed_model, "systolic8x8", 6),  # pools in slices of 8 of its 16 channels
         ("windowed", windowed_model, "systolic16x16", 12),
         ("windowed", windowed_model, "systolic32x32", 14),  # image words of 32 bytes
         # an RGB image packed a word per pixel (G = 4), read by a 3x3/2 Conv in bands
         ("rgb_stem", lambda: (rgb_stem_model(), {"x": RNG.uniform(-1, 1, (4, 3, 24, 96)).astype(np.float32)}),
          "systolic16x16", 16),
         ("rgb_stem", lambda: (rgb_stem_model(), {"x": RNG.uniform(-1, 1, (4, 3, 24, 96)).astype(np.float32)}),
          "systolic32x32", 32)]


@pytest.mark.parametrize("name, made, target, kib", CASES, ids=[f"{n}-{t}-{k}KiB" for n, _, t, k in CASES])
def test_bands_through_external_memory_are_bit_exact(tmp_path, name, made, target, kib):
    shrunk = target_with(target, buffers__input__kib=kib)
    quantized, mapping, design = banded(tmp_path, made, shrunk)
    check_moves(mapping, design)
    assert mapping.packed_input or name != "rgb_stem"
    assert design.loop_ir.count("legality: ok") == design.loop_ir.count("\nnest ")
    # the bands of a node share its weights and parameters: the ROMs are those of the unbanded program (of the
    # same input layout: a packed image pads its readers' taps)
    whole = build_program(quantized.graph, map_model(quantized.graph, load_target(target),
                                                     packed=mapping.packed_input))
    program = build_program(quantized.graph, mapping)
    assert program.weight_words == whole.weight_words and program.params == whole.params
    assert (program.lut, program.aux, program.divisors) == (whole.lut, whole.aux, whole.divisors)
    result = csim(tmp_path / "hls", portable=True)
    outputs = sum(int(np.prod(quantized.graph.shape(t))) for t in quantized.graph.outputs)
    assert result.compared == result.samples * outputs and result.mismatches == 0, result.log[-2000:]


@pytest.mark.parametrize("kind, channels", [("blocks", 12), ("windows", 27)])
def test_an_input_the_host_folds_is_bit_exact(tmp_path, kind, channels):
    """The RGB stem's image folded by the host (hlsgen.passes.input_fold): the testbench packs each image's 2 x 2
    pixel blocks into the 12 channels of a folded pixel (the stem a 2x2 Conv of stride 1), or the stem's 3x3
    windows into 27 (a 1x1 Conv, the input's zero point off the image), the
    stem runs in bands, and the outputs are the integer reference's."""
    feeds = {"x": RNG.uniform(-1, 1, (4, 3, 24, 96)).astype(np.float32)}
    quantized = quantize_model(rgb_stem_model(), feeds)
    machine = replace(quantized, lowered=replace(quantized.lowered, graph=fold_input(quantized.graph, 16, kind)))
    mapping = map_model(machine.graph, target_with("systolic16x16", buffers__input__kib=16))
    fold = mapping.placement("x").fold
    assert mapping.input_in_dram and mapping.placement("x").channels == channels
    assert fold.fill == (machine.graph.nodes["stem"].attrs.input_zero_point if kind == "windows" else 0)
    int_inputs = quantized.quantize_inputs(feeds)
    write_hls(tmp_path / "hls", machine.graph, mapping.target, "net", "net.onnx", int_inputs,
              machine.run_int(int_inputs), design="overlay", mapping=mapping)
    result = csim(tmp_path / "hls", portable=True)
    assert result.compared == 4 * 10 and result.mismatches == 0, result.log[-2000:]


def separable_model():
    """A 1x1 Conv to 32 channels, then only channel-separable rows on a 16 x 96 map: a depthwise Conv, a
    residual QAdd, a table, padded average pools, a MaxPool and a 2x nearest upsampling, a global pool."""
    rng = np.random.default_rng(7)
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"]),
             helper.make_node("Relu", ["a"], ["r"]),
             helper.make_node("Conv", ["r", "wd"], ["d"], pads=[1, 1, 1, 1], group=32),
             helper.make_node("Add", ["d", "r"], ["s"]),
             helper.make_node("Sigmoid", ["s"], ["g"]),
             helper.make_node("AveragePool", ["g"], ["p"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                              count_include_pad=0),
             helper.make_node("MaxPool", ["p"], ["m"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Resize", ["m", "", "scales"], ["u"], mode="nearest"),
             helper.make_node("AveragePool", ["u"], ["q"], kernel_shape=[4, 4], strides=[4, 4]),
             helper.make_node("GlobalAveragePool", ["q"], ["y"])]
    inits = {"w1": rng.normal(0, 0.5, (32, 3, 1, 1)).astype(np.float32),
             "wd": rng.normal(0, 0.5, (32, 1, 3, 3)).astype(np.float32),
             "scales": np.array([1, 1, 2, 2], np.float32)}
    model = make_model(nodes, [tensor_value("x", [1, 3, 16, 96])], [tensor_value("y", None)], inits)
    return model, {"x": rng.uniform(-1, 1, (4, 3, 16, 96)).astype(np.float32)}


@pytest.mark.parametrize("kib, kinds", [(20, {"depthwise", "QAdd", "QAveragePool", "Resize"}),
                                        (32, {"depthwise", "QLut", "QAveragePool"})])
def test_channel_slices_compute_their_own_channels(tmp_path, kib, kinds):
    """Rows whose one-row bands do not fit run in slices of 8 of the 32 channels (4 blocks of the
    systolic8x8's columns) between buffers holding just those: a depthwise slice takes its channels' weights
    and parameters from the node's shared ROM entries, the vector rows' parameters are per tensor."""
    quantized, mapping, design = banded(tmp_path, separable_model, target_with("systolic8x8", buffers__input__kib=kib))
    check_moves(mapping, design)
    sliced = [layer for layer in mapping.layers if layer.band is not None and layer.band.channels is not None]
    assert kinds <= {"depthwise" if layer.kind == "depthwise" else layer.op for layer in sliced}
    assert {layer.band.channels[0] for layer in sliced} == {0, 8, 16, 24}
    # a slice's C++ loops run the slice's tiles (a depthwise slice: its one column tile, not the layer's 4)
    cycles = dict(zip((layer.name for layer in mapping.layers if layer.unit != "none"), design.row_cycles))
    for layer in sliced:
        if layer.kind in ("depthwise", "elementwise", "resize"):
            assert 0 <= layer.cycles - cycles[layer.name] <= fixed_latency(8, 8), (layer.name, layer.cycles,
                                                                            cycles[layer.name])
    program = build_program(quantized.graph, mapping)  # each node's ROM entries once, however many bands
    # tiles of 8 x 8 8-bit weights: the 1x1 Conv's 4 column tiles, the depthwise's 4 of 2 row tiles (9 taps)
    assert len(program.params) == 2 * 4 and program.weight_bits == (4 + 4 * 2) * 8 * 8 * 8
    assert len(program.lut) == 256 and len(program.aux) == 16 * 96 + 4 * 24
    result = csim(tmp_path / "hls", portable=True)
    assert result.compared == result.samples * 32 and result.mismatches == 0, result.log[-2000:]


def test_a_channel_slice_over_a_whole_map_is_refused_naming_the_layer():
    """The overlay's rows address a slice's channels from 0 in its buffers: a slice whose input were the
    layer's whole map would silently read channels 0.. of it, so the program builder refuses it."""
    model, feeds = separable_model()
    quantized = quantize_model(model, feeds)
    mapping = map_model(quantized.graph, target_with("systolic8x8", buffers__input__kib=32))
    i, row = next((i, r) for i, r in enumerate(mapping.layers) if r.kind == "depthwise" and r.band.channels[0])
    whole = replace(row, inputs=("r",))  # the depthwise Conv's input, all 32 channels
    layers = (*mapping.layers[:i], whole, *mapping.layers[i + 1:])
    with pytest.raises(MappingError, match=r"^layer 'd' \(Conv\): the overlay runs a slice of channels \[8, 16\) only "
                                           r"on a block of 8 channels between buffers holding just those$"):
        build_program(quantized.graph, replace(mapping, layers=layers))


def test_bands_with_the_vendor_headers(tmp_path):
    if vendor_headers() is None:
        pytest.fail("hls4ml (a dependency carrying the vendor ap_types headers) is not installed: pip install .")
    banded(tmp_path, architecture(architectures.resnet8), target_with("systolic16x16", buffers__input__kib=16))
    result = csim(tmp_path / "hls", portable=False)
    assert result.headers.kind == "vendor" and result.compared == 40 and result.mismatches == 0


def test_a_resize_band_may_start_inside_a_source_rows_repeat(tmp_path):
    _, mapping, _ = banded(tmp_path, windowed_model, target_with("systolic16x16", buffers__input__kib=10))
    starts = [layer.band.out_rows[0] for layer in mapping.layers if layer.op == "Resize"]
    assert len(starts) > 1 and any(y % 2 for y in starts)
    pools = [layer for layer in mapping.layers if layer.op == "QAveragePool"]
    assert len(pools) > 2 and {p.band.pad_top for p in pools} == {0, 1}
    assert csim(tmp_path / "hls", portable=True).mismatches == 0


def test_the_input_lives_in_the_image_the_host_writes(tmp_path):
    """No input stream: the top takes `fmem` (its own bundle, a burst per channel block), the testbench writes
    the input there; the bank proof covers the DMA unit; the trace logs the rows that compute a whole map on
    chip and finds every one right."""
    quantized, mapping, design = banded(tmp_path, architecture(architectures.resnet8),
                                        target_with("systolic16x16", buffers__input__kib=16))
    assert mapping.input_in_dram
    out = tmp_path / "hls"
    header = (out / "net.h").read_text()
    assert "void net(hls::stream<hls::axis<logits_t, 0, 0, 0> >& logits, fmap_word_t* fmem);" in header
    assert "uint8_t byte[16];" in header
    top = (out / "net.cpp").read_text()
    words = mapping.memory.dram_words
    burst = min(256, max(layer.move.segment_words for layer in mapping.layers if layer.move))  # a channel block
    assert (f"#pragma HLS INTERFACE mode=m_axi port=fmem offset=slave bundle=fmem depth={words} latency=60 "
            f"max_read_burst_length={burst} max_write_burst_length={burst}") in top
    assert "mode=axis port=image" not in top and "stream_in(" not in top
    assert "net(logits, fmap_image);" in (out / "net_tb.cpp").read_text()
    assert design.to_json()["feature_map_image_bytes"] == 16 * words
    # the bank proof covers the DMA unit's loops: with the banks of a plane merged, its R accesses collide
    c, merged = overlay_memories(quantized, mapping, ("amem", Partition("amem", 2, "complete")))
    found = [p for p in prove(unit_nests(c, merged)) if p.startswith("dma_unit:")]
    assert {p.split("'")[1] for p in found} == {"dma_load", "dma_store"}, found
    work = tmp_path / "trace"
    work.mkdir()
    found = first_difference(out, quantized.graph, out / INPUT_FILE, 1, work, portable=True)
    assert "every layer matches" in found
    traced = [line.split("\t")[0] for line in (work / "trace.txt").read_text().splitlines()]
    assert traced and all("#" not in name for name in traced)


def test_the_dataflow_design_refuses_feature_maps_in_external_memory_and_auto_takes_the_overlay(tmp_path):
    model = architectures.resnet8()
    onnx.save(model, str(tmp_path / "resnet8.onnx"))
    np.savez(tmp_path / "calib.npz", **{model.graph.input[0].name: architectures.calibration_data(model, n=2)})
    text = (Path(__file__).resolve().parents[2] / "hw_models" / "systolic16x16.yaml").read_text()
    target = tmp_path / "small.yaml"
    target.write_text(text.replace("input: {kib: 160,", "input: {kib: 16,"))
    args = ["build", str(tmp_path / "resnet8.onnx"), "--calib", str(tmp_path / "calib.npz"), "--target", str(target),
            "-q", "--hls-design"]
    assert main([*args, "dataflow", "-o", str(tmp_path / "dataflow")]) == MappingError.exit_code
    assert not (tmp_path / "dataflow").exists()
    assert main([*args, "auto", "-o", str(tmp_path / "auto")]) == 0
    assert json.loads((tmp_path / "auto" / "build.json").read_text())["hls_design"] == "overlay"
    quantized = quantize_model(model, {model.graph.input[0].name: architectures.calibration_data(model, n=2)})
    mapping = map_model(quantized.graph, target_with("systolic16x16", buffers__input__kib=16))
    with pytest.raises(MappingError, match=r"live in external memory, which only the overlay moves: use "
                                           r"--hls-design overlay \(or auto\)$"):
        write_hls(tmp_path / "hls", quantized.graph, mapping.target, "net", "net.onnx", {}, {}, mapping=mapping,
                  design="dataflow")


MOBILENET_V2 = architecture(lambda: architectures.mobilenet_v2(0.5, 128), 1)
MOBILENET_V1 = architecture(lambda: architectures.mobilenet_v1(0.25, 96), 1)
RESNET18 = architecture(lambda: architectures.resnet18(224), 1)
# (model, target, the kinds of the rows that run in channel slices); ResNet-18 (20 to 45 s each, mostly mapping)
# and MobileNetV2 on systolic8x8 run in make test-slow (tests/hw/test_banding.py maps ResNet-18 by default)
SHIPPED = [("mobilenet_v2", MOBILENET_V2, "systolic8x8", set()),
           ("mobilenet_v2", MOBILENET_V2, "systolic16x16", set()),  # runs of bands over all channels (faster)
           ("mobilenet_v2", MOBILENET_V2, "systolic32x32", set()),
           ("mobilenet_v1", MOBILENET_V1, "systolic8x8", set()),
           ("mobilenet_v1", MOBILENET_V1, "systolic16x16", set()),  # runs of bands over all channels (faster)
           ("mobilenet_v1", MOBILENET_V1, "systolic32x32", set()),
           ("resnet18", RESNET18, "systolic8x8", {"pool"}), ("resnet18", RESNET18, "systolic16x16", {"pool"}),
           ("resnet18", RESNET18, "systolic32x32", {"pool"})]


@pytest.mark.parametrize("name, made, target, sliced", [
    pytest.param(*case, marks=[pytest.mark.slow] if case[0] == "resnet18" or case[0] == "mobilenet_v2" and case[2]
                 == "systolic8x8" else []) for case in SHIPPED], ids=[f"{n}-{t}" for n, _, t, _ in SHIPPED])
def test_real_networks_on_the_shipped_targets(tmp_path, name, made, target, sliced):
    """MobileNetV2-0.5 (128 px), MobileNetV1-0.25 (96 px) and ResNet-18 (224 px): their maps as placed exceed
    the shipped activation memories, and some rows run in slices of the array's C channels; MobileNetV2's
    expanded maps of blocks 3 to 11 never move through the port on systolic16x16 (blocks 3 and 4 pass through
    its runs' band buffers, the later ones stay on chip whole). DS-CNN fits systolic8x8 since the depthwise
    window memory keeps each word once."""
    quantized, mapping, design = banded(tmp_path, made, load_target(target))
    check_moves(mapping, design)
    assert {layer.kind for layer in mapping.layers if layer.band and layer.band.channels} == sliced
    if (name, target) == ("mobilenet_v2", "systolic16x16"):  # blocks 3 and 4 run expand and dw band by band
        inner = {mapping.placement(layer.output).holds for layer in mapping.layers if layer.band}
        moved = {layer.move.tensor for layer in mapping.layers if layer.move}
        assert {"block3_expand_relu6", "block4_expand_relu6"} <= inner
        assert not {f"block{k}_expand_relu6" for k in range(3, 12)} & moved
    result = csim(tmp_path / "hls", portable=True)
    outputs = sum(int(np.prod(quantized.graph.shape(t))) for t in quantized.graph.outputs)
    assert result.compared == outputs and result.mismatches == 0, result.log[-2000:]
