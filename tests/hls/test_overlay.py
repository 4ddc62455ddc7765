"""The overlay HLS design: one R x C array, one vector unit and the memories, sequenced by the layer
program. C-simulated bit-exact against the integer reference (portable headers, and the vendor ap_types
headers when hls4ml is installed), its bank-conflict proof, a pragma count that does not grow with the
layers, per-layer weight widths in the weight ROM, determinism and the first-wrong-layer trace."""
from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper

from hlsgen.hw.cycles import LAYER_OVERHEAD, REQUANT_LATENCY, RESULT_LATENCY
from hlsgen import zoo
from hlsgen.frontend import import_model
from hlsgen.hls.csim import vendor_headers
from hlsgen.hls.overlay.design import BankConflictError, overlay_config
from hlsgen.hls.overlay.units import prove, unit_nests
from hlsgen.loopir import Partition
from hlsgen.hls.trace import first_difference
from hlsgen.hw import load_target, map_model
from hlsgen.hls.tbdata import INPUT_FILE
from hlsgen.passes import optimize
from hlsgen.quant import BitConfig, quantize
from tests.builders import make_model, tensor_value
from tests.hls.conftest import EXAMPLE
from tests.hls.helpers import csim, generate, overlay_memories, quantize_model
from tests.hls.test_kernels import conv1d_model, copies_model, pools_model
from tests.hw.models import grouped_cnn_model, odd_cnn_model

pytestmark = pytest.mark.csim
RNG = np.random.default_rng(12)
PRAGMAS = ("PIPELINE", "UNROLL", "ARRAY_PARTITION")


def weights(*shape):
    return (RNG.standard_normal(shape) * 0.3).astype(np.float32)


def digits():
    data = np.load(EXAMPLE / "calib.npz")
    return onnx.load(str(EXAMPLE / "digits.onnx")), {k: data[k][:12] for k in data.files}


def zoo_model(name: str):
    model = zoo.ZOO[name]()
    return model, {"image": zoo.calibration_data(model, n=6, seed=0).astype(np.float32)}


def lut_model():
    """A lookup-table activation, nearest upsampling, a 1x1 Conv and a Dense over a 4x4 map."""
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["a"], pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Sigmoid", ["a"], ["s"]),
             helper.make_node("Resize", ["s", "", "scales"], ["u"], mode="nearest"),
             helper.make_node("Conv", ["u", "w2"], ["c"]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], transB=1)]
    inits = {"w1": weights(8, 3, 3, 3), "b1": weights(8), "w2": weights(16, 8, 1, 1),
             "scales": np.array([1, 1, 2, 2], np.float32), "wf": weights(10, 256), "bf": weights(10)}
    model = make_model(nodes, [tensor_value("x", [1, 3, 8, 8])], [tensor_value("y", None)], inits)
    return model, {"x": RNG.uniform(-1, 1, (6, 3, 8, 8)).astype(np.float32)}


def tiled_pool_model():
    """Spatial tiles that split pooling windows (900 pixels in 2 tiles of 450: 15 rows of 30), two column
    tiles, a 5x5 depthwise layer (25 taps: several row tiles of the depthwise window memory) and a residual add."""
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["a"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Conv", ["p", "wd"], ["d"], pads=[2, 2, 2, 2], group=32),
             helper.make_node("Add", ["d", "p"], ["s"]),
             helper.make_node("GlobalAveragePool", ["s"], ["y"])]
    inits = {"w1": weights(32, 3, 3, 3), "wd": weights(32, 1, 5, 5)}
    model = make_model(nodes, [tensor_value("x", [1, 3, 30, 30])], [tensor_value("y", None)], inits)
    return model, {"x": RNG.uniform(-1, 1, (3, 3, 30, 30)).astype(np.float32)}


def odd_channels_model():
    """24 channels on 16 rows read over 9 taps: each tap spans 32 reduction lanes (zero weights past channel
    23), so the map keeps 16 banks and the writer one write per pixel."""
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["a"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Conv", ["p", "w2"], ["y"], pads=[1, 1, 1, 1])]
    inits = {"w1": weights(24, 3, 3, 3), "w2": weights(8, 24, 3, 3)}
    model = make_model(nodes, [tensor_value("x", [1, 3, 10, 10])], [tensor_value("y", None)], inits)
    return model, {"x": RNG.uniform(-1, 1, (3, 3, 10, 10)).astype(np.float32)}


def odd_cnn():
    """24, 40 and 12 channels read over 9 taps, and a Dense over a 4x4 map of 12 (tests/hw/models.py)."""
    return odd_cnn_model(), {"x": RNG.uniform(-1, 1, (4, 3, 16, 16)).astype(np.float32)}


def grouped():
    """Grouped Convs (tests/hw/models.py): on 8 rows a row per group of 8 channels, and 8 groups of 2 -> 4
    channels packed 4 to a row; on 16 rows each layer one block-diagonal row."""
    return grouped_cnn_model(), {"x": RNG.uniform(-1, 1, (4, 3, 8, 8)).astype(np.float32)}


def concat_pool_model():
    """A MaxPool after a Concat: a copy writes element by element, so the pool gets a row of its own."""
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["x", "w2"], ["b"], pads=[1, 1, 1, 1]),
             helper.make_node("Concat", ["a", "b"], ["c"], axis=1),
             helper.make_node("MaxPool", ["c"], ["y"], kernel_shape=[2, 2], strides=[2, 2])]
    inits = {"w1": weights(4, 3, 3, 3), "w2": weights(4, 3, 3, 3)}
    model = make_model(nodes, [tensor_value("x", [1, 3, 6, 6])], [tensor_value("y", None)], inits)
    return model, {"x": RNG.uniform(-1, 1, (3, 3, 6, 6)).astype(np.float32)}


def conv_chain(layers: int):
    """`layers` 3x3 Conv + Relu, 16 channels, on an 8x8 map."""
    nodes, inits, x = [], {}, "x"
    for i in range(layers):
        nodes += [helper.make_node("Conv", [x, f"w{i}"], [f"c{i}"], pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", [f"c{i}"], [f"r{i}"])]
        inits[f"w{i}"] = weights(16, 3 if i == 0 else 16, 3, 3)
        x = f"r{i}"
    model = make_model(nodes, [tensor_value("x", [1, 3, 8, 8])], [tensor_value(x, None)], inits)
    return model, {"x": RNG.uniform(-1, 1, (4, 3, 8, 8)).astype(np.float32)}


def overlay(tmp_path: Path, build, target: str = "systolic16x16", bits: int = 8):
    model, feeds = build()
    quantized = quantize_model(model, feeds, bits)
    design = generate(quantized, feeds, tmp_path / "hls", target=target, design="overlay")
    return design, quantized, feeds


def pragma_counts(hls_dir: Path) -> dict[str, int]:
    text = "\n".join(p.read_text() for p in sorted(hls_dir.glob("*.[ch]*")) if not p.name.endswith("_tb.cpp"))
    return {name: len(re.findall(rf"#pragma HLS {name}\b", text)) for name in PRAGMAS}


CASES = [("digits", digits, "systolic16x16"), ("digits", digits, "systolic8x8"),
         ("residual", lambda: zoo_model("residual"), "systolic8x8"),
         ("residual", lambda: zoo_model("residual"), "systolic16x16"),
         ("mobilenet", lambda: zoo_model("mobilenet"), "systolic8x8"),
         ("mobilenet", lambda: zoo_model("mobilenet"), "systolic16x16"),
         ("lut_resize_dense", lut_model, "systolic8x8"), ("pools", pools_model, "systolic16x16"),
         ("copies", copies_model, "systolic8x8"), ("tiled_pool", tiled_pool_model, "systolic16x16"),
         ("tiled_pool", tiled_pool_model, "systolic8x8"), ("odd_channels", odd_channels_model, "systolic16x16"),
         ("concat_pool", concat_pool_model, "systolic8x8"), ("odd_cnn", odd_cnn, "systolic16x16"),
         ("odd_cnn", odd_cnn, "systolic8x8"), ("grouped", grouped, "systolic8x8"),
         ("grouped", grouped, "systolic16x16")]


@pytest.mark.parametrize("name, build, target", CASES, ids=[f"{n}-{t}" for n, _, t in CASES])
def test_the_overlay_is_bit_exact_and_free_of_bank_conflicts(tmp_path, name, build, target):
    design, quantized, _ = overlay(tmp_path, build, target)
    rows, cols = (16, 16) if target == "systolic16x16" else (8, 8)
    assert design.macs_per_cycle == rows * cols
    result = csim(tmp_path / "hls", portable=True)
    assert result.compared > 0 and result.mismatches == 0, result.log[-2000:]
    units = unit_nests(overlay_config(quantized.graph, map_model(quantized.graph, load_target(target))))
    assert prove(units) == [] and design.loop_ir.count("legality: ok") == len(units)


@pytest.mark.parametrize("build", [lambda: zoo_model("mobilenet"), tiled_pool_model, copies_model, lut_model],
                         ids=["mobilenet", "tiled_pool", "copies", "lut_resize_dense"])
def test_the_overlay_compiles_and_is_bit_exact_with_the_vendor_headers(tmp_path, build):
    if vendor_headers() is None:
        pytest.fail("hls4ml (a dependency carrying the vendor ap_types headers) is not installed: pip install .")
    overlay(tmp_path, build, "systolic8x8")
    result = csim(tmp_path / "hls", portable=False)
    assert result.headers.kind == "vendor" and result.mismatches == 0 and result.compared > 0


def test_the_pragma_count_does_not_grow_with_the_layers(tmp_path):
    counts = []
    for layers in (2, 6):
        design, _, _ = overlay(tmp_path / str(layers), lambda: conv_chain(layers))
        assert design.rows == layers and design.macs_per_cycle == 256 and design.dsp < 360
        counts.append(pragma_counts(tmp_path / str(layers) / "hls"))
        assert csim(tmp_path / str(layers) / "hls", portable=True).mismatches == 0
    assert counts[0] == counts[1] and all(counts[0].values())


def test_the_partition_proof_catches_a_broken_partition(tmp_path):
    """The banking proof on the units' nests: with the activation memory's banks merged, the R lanes' reads
    and the writer's R writes meet in one bank; a weight ROM split cyclically in fewer banks than the words
    one PE row's load reads at once."""
    model, feeds = digits()
    quantized = quantize_model(model, feeds)
    mapping = map_model(quantized.graph, load_target("systolic16x16"))
    c = overlay_config(quantized.graph, mapping)
    assert prove(unit_nests(c)) == [] and c["row_words"] > 2
    c, merged = overlay_memories(quantized, mapping, ("amem", Partition("amem", 2, "complete")))
    found = prove(unit_nests(c, merged))
    assert any(p.startswith("array_unit: pipelined loop 'stream'") and "needs 32 accesses per bank of the amem" in p
               for p in found), found
    c, narrow = overlay_memories(quantized, mapping, ("wrom", Partition("wrom", 1, "cyclic", c["row_words"])),
                                 ("wrom", Partition("wrom", 1, "cyclic", 1)))
    found = prove(unit_nests(c, narrow))
    assert {p.split("'")[1] for p in found if "wrom" in p} == {"first_load", "stream"}, found


def test_the_bank_proof_flags_the_dataflow_designs_window_reads(tmp_path):
    """The per-layer design partitions conv1's x[1][256] on its size-1 dimension: the 9 taps of a pixel come
    from one bank (Vitis cannot reach II=1 there); the proof sees it through the window generator's nest."""
    model, feeds = digits()
    design = generate(quantize_model(model, feeds), feeds, tmp_path / "hls", design="dataflow")
    found = design.bank_conflicts()
    assert any(c.startswith("conv1: pipelined loop 'pixel'") and "needs 9 accesses per bank of the activation memory (x)"
               in c for c in found), found


def test_the_weight_rom_holds_each_layers_chosen_width(tmp_path):
    model, feeds = zoo_model("residual")
    at8 = quantize_model(model, feeds, 8)
    narrow = {n.name: 4 for n in at8.graph.nodes.values() if n.op == "QConv"}
    graph = import_model(model)
    optimize(graph)
    mixed = quantize(graph, feeds, BitConfig(8, 8, layer_weight_bits=narrow))
    widths = {n.attrs.weight_bits for n in mixed.graph.nodes.values() if n.op in ("QConv", "QDense")}
    assert widths == {4, 8}
    wide = generate(at8, feeds, tmp_path / "w8", design="overlay")
    small = generate(mixed, feeds, tmp_path / "mixed", design="overlay")
    assert small.weight_rom_bits < wide.weight_rom_bits and small.weight_rom_words < wide.weight_rom_words
    assert csim(tmp_path / "mixed", portable=True).mismatches == 0


def test_two_writes_are_byte_identical(tmp_path):
    model, feeds = zoo_model("mobilenet")
    quantized = quantize_model(model, feeds)
    for name in ("a", "b"):
        generate(quantized, feeds, tmp_path / name, design="overlay")
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert all((tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes() for f in files)


def test_the_trace_names_program_rows_and_finds_no_wrong_layer(tmp_path):
    _, quantized, _ = overlay(tmp_path, digits)
    work = tmp_path / "work"
    work.mkdir()
    verdict = first_difference(tmp_path / "hls", quantized.graph, tmp_path / "hls" / INPUT_FILE, 0, work, portable=True)
    assert "every layer matches" in verdict
    names = [line.split("\t")[0] for line in (work / "trace.txt").read_text().splitlines()]
    assert any("+" in n for n in names)  # a row with a MaxPool fused into its writer


def test_a_grouped_1d_convolution_runs_in_chunks_bit_exact(tmp_path):
    """The 1-D model's grouped Conv (once refused): a row per chunk of groups, every output exact."""
    overlay(tmp_path, conv1d_model)
    result = csim(tmp_path / "hls", portable=True)
    assert result.compared > 0 and result.mismatches == 0, result.log[-2000:]


@pytest.mark.parametrize("name, build", [("digits", digits), ("mobilenet", lambda: zoo_model("mobilenet")),
                                         ("lut_resize_dense", lut_model)])
def test_the_cpp_runs_the_layer_programs_schedule(tmp_path, name, build):
    """Per array and elementwise row, the C++ loops' trip counts equal the layer program's cycles but for
    the fixed fill, drain and configuration latencies the loops leave to the pipeline (fixed_latency)."""
    model, feeds = build()
    quantized = quantize_model(model, feeds)
    target = load_target("systolic16x16")
    design = generate(quantized, feeds, tmp_path / "hls", design="overlay")
    rows = [layer for layer in map_model(quantized.graph, target).layers if layer.unit != "none"]
    assert len(rows) == len(design.row_cycles)
    for layer, cycles in zip(rows, design.row_cycles):
        if layer.kind in ("conv", "depthwise", "dense", "elementwise", "resize", "global_pool"):
            assert 0 <= layer.cycles - cycles <= fixed_latency(16, 16), (layer.name, layer.cycles, cycles)


def fixed_latency(rows: int, cols: int) -> int:
    """What a row of the layer program adds to its loops' trip counts at most: the array's fill and drain,
    the requantizer's and the result path's stages, and the layer's configuration (hlsgen.hw.cycles)."""
    return rows + cols + REQUANT_LATENCY + RESULT_LATENCY + LAYER_OVERHEAD


def test_a_conflict_in_the_units_is_a_bug_in_hlsgen(tmp_path, monkeypatch):
    """write_overlay proves its units before it writes: units that lost a partition fail it."""
    from hlsgen.hls.overlay import units

    whole = units.memories

    def merged(c):
        mems = whole(c)
        return replace(mems, placed=tuple(p for p in mems.placed if p != ("amem", Partition("amem", 2, "complete"))))

    monkeypatch.setattr(units, "memories", merged)
    with pytest.raises(BankConflictError, match="bug in hlsgen.*amem"):
        overlay(tmp_path, digits)
