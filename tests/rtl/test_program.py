"""The RTL program of a model: feature-map placement, the bank rule of the line buffer, ROM contents,
and clear refusals of what the RTL does not implement."""
import numpy as np
import pytest

from hlsgen.errors import MappingError
from hlsgen.hw.target import Buffer
from hlsgen.frontend import read_onnx
from hlsgen.hw import load_target, map_model
from hlsgen.passes import optimize
from hlsgen.quant import BitConfig, quantize
from hlsgen.rtl.program import ARRAY
from hlsgen.rtl.words import tap_word
from tests.rtl.program_of import rtl_program
from tests.hw.models import DIGITS, integer_graph, target_with

MODELS = ["digits", "mnist-8", "residual", "mobilenet", "autoencoder"]


@pytest.fixture(scope="module", params=[(m, t) for m in MODELS for t in ("systolic16x16", "systolic8x8")],
                ids=lambda p: f"{p[0]}-{p[1]}")
def program(request):
    model, target = request.param
    return rtl_program(integer_graph(model), load_target(target))


def overlap(a, b, base_a, base_b) -> bool:
    alive = a.birth <= b.death and b.birth <= a.death
    return alive and base_a < base_b + b.words and base_b < base_a + a.words


def test_maps_alive_together_never_share_words(program):
    maps = list(program.maps.values())
    for i, a in enumerate(maps):
        for b in maps[i + 1:]:
            assert not (a.plane == b.plane and overlap(a, b, a.base, b.base)), (a.name, b.name)
            assert not (a.dw_read and b.dw_read and overlap(a, b, a.dw_base, b.dw_base)), (a.name, b.name)
        assert a.base + a.words <= program.plane_depth[a.plane]


def test_a_qadd_reads_its_inputs_from_both_planes(program):
    for layer in program.layers:
        if len(layer.inputs) == 2:
            assert program.maps[layer.inputs[0]].plane != program.maps[layer.inputs[1]].plane


def test_every_array_lane_reads_its_own_bank(program):
    """Lane r of a row tile reads input channel c of k = tap * C_pad + c (k = t * R + r, C_pad the row's
    reduction_channels), which the input keeps in the banks j = channel (mod G): bank r must be one of them,
    so the R reads of a cycle never collide. (Padded lanes, c >= C_in, and lanes past the reduction read
    nothing.)"""
    R = program.rows
    for layer in program.layers:
        if layer.kind != ARRAY or layer.fields["dw"]:
            continue
        x = program.maps[layer.inputs[0]]
        c_pad = layer.row.tiles.work.reduction_channels
        channels = [k % c_pad for k in range(layer.row.tiles.work.reduction)]
        assert all(c % x.banks == (k % R) % x.banks for k, c in enumerate(channels) if c < x.channels), layer.name


def test_a_map_of_any_channel_count_keeps_r_banks():
    """24 channels on 16 rows: a 1x1 Conv (like a Dense on a 1x1 map) reads lane r's channels r (mod 16)
    unpadded; a 3x3 Conv's taps are padded to 32 lanes each (the program's reduction_channels), so they too
    read channels r (mod 16), and padded lanes read nothing and hold zero weights."""
    program = rtl_program(integer_graph("odd_channels_1x1"), load_target("systolic16x16"))
    assert program.maps["r1"].channels == 24 and program.maps["r1"].banks == 16
    assert next(layer for layer in program.layers if layer.name == "conv2").row.tiles.work.reduction_channels == 24
    program = rtl_program(integer_graph("odd_channels_3x3"), load_target("systolic16x16"))
    assert program.maps["r1"].banks == 16
    conv2 = next(layer for layer in program.layers if layer.name == "conv2")
    assert conv2.row.tiles.work.reduction == 9 * 32 and conv2.fields["tr"] == 18
    word = tap_word(program.widths["ADDR_W"], program.widths["DIM_W"])
    for t in range(conv2.fields["tr"]):
        taps = program.taps[conv2.fields["tap_base"] + t]
        for r in range(16):
            padded = (t * 16 + r) % 32 >= 24
            assert (taps >> (r * word.width + word["valid"].offset) & 1) == (not padded)
            if padded:
                assert rom_row(program, conv2, t * 16 + r) == [0] * 16


def rom_row(program, layer, index: int) -> list[int]:
    """Row `index` of an array layer's weights as the ROM holds them: `w_bits` slices of C bits from slice
    `w_base + index * w_bits` on, slice j holding bit j of every lane (two's complement)."""
    bits, C, S = layer.fields["w_bits"], program.cols, program.weight_word_slices
    first = layer.fields["w_base"] + index * bits
    slices = [program.weights[s // S] >> (s % S * C) & ((1 << C) - 1) for s in range(first, first + bits)]
    values = [sum((slices[j] >> c & 1) << j for j in range(bits)) for c in range(C)]
    return [v - (1 << bits) if v >> (bits - 1) else v for v in values]


def test_weight_rom_holds_the_weights_in_lane_order(program):
    """The first row tile of the first array layer: lane r, column c is weight (tap, c_in) = divmod(r, C_in)
    (a Dense on a 1x1 map, [C_in, M]: weight (r, c))."""
    layer = next(layer for layer in program.layers if layer.kind == ARRAY and not layer.fields["dw"])
    w = program.graph.constants[layer.node.inputs[1]].astype(np.int64)
    C = program.cols
    c_in = program.maps[layer.inputs[0]].channels
    if w.ndim == 2:  # only the autoencoder's Dense comes first, on its 1x1 input
        w = w.T.reshape(w.shape[1], w.shape[0], 1, 1)
    kw = w.shape[3] if w.ndim == 4 else 1
    for r in range(min(program.rows, w[0].size)):
        got = rom_row(program, layer, r)
        tap, ci = divmod(r, c_in)
        for c in range(min(C, w.shape[0])):
            assert got[c] == w[c, ci, tap // kw, tap % kw]


@pytest.fixture(scope="module")
def mixed_widths():
    """The example with conv1's weights at 8 bits and the other layers' at 3, on systolic16x16."""
    graph = read_onnx(DIGITS)
    optimize(graph)
    calib = {"image": np.load(DIGITS.parent / "calib.npz")["image"][:16]}
    bits = BitConfig(8, 8, {"conv2": 3, "fc1": 3, "fc2": 3})
    return rtl_program(quantize(graph, calib, bits).graph, load_target("systolic16x16"))


def test_each_layer_is_stored_at_its_own_width(mixed_widths):
    """Every row of every layer decodes to its weights (sign-extended from the layer's width); the layers
    follow one another with no gap; the ROM is the weights' bits rounded up to one word."""
    program = mixed_widths
    arrays = [layer for layer in program.layers if layer.kind == ARRAY]
    assert [layer.fields["w_bits"] for layer in arrays] == [8, 3, 3, 3] and program.widths["W_W"] == 8
    R, C, S, slices = program.rows, program.cols, program.weight_word_slices, 0
    for layer in arrays:
        f = layer.fields
        assert f["w_base"] == slices
        w, x = program.graph.constants[layer.node.inputs[1]].astype(np.int64), program.maps[layer.inputs[0]]
        if w.ndim == 4:  # lane order k = (ky * kw + kx) * C_in + c_in
            matrix = w.transpose(2, 3, 1, 0).reshape(-1, w.shape[0])
        else:  # a Dense reads its input flattened as [c][y][x]: k = (y * W + x) * C + c
            matrix = w.reshape(x.channels, x.height, x.width, -1).transpose(1, 2, 0, 3).reshape(w.shape)
        assert np.abs(matrix).max() < 1 << (f["w_bits"] - 1)
        padded = np.zeros((f["tr"] * R, f["tc"] * C), np.int64)
        padded[:matrix.shape[0], :matrix.shape[1]] = matrix
        # tiles in the engine's order: column tile, row tile, then the tile's R rows
        rows = padded.reshape(f["tr"], R, f["tc"], C).transpose(2, 0, 1, 3).reshape(-1, C)
        assert all(rom_row(program, layer, i) == list(row) for i, row in enumerate(rows)), layer.name
        slices += len(rows) * f["w_bits"]
    assert S == 8 and program.weight_rom_bits == -(-slices // S) * S * C == len(program.weights) * S * C


def test_what_the_rtl_cannot_do_is_refused_by_name():
    """(Layers it cannot run are refused naming them: the Transpose and Concat tests below.) Every unit and
    kind of vector_ops now runs, on 16 rows too."""
    assert rtl_program(integer_graph("vector_ops"), load_target("systolic16x16")).layers
    with pytest.raises(MappingError, match="weight-stationary"):
        rtl_program(integer_graph("digits"), target_with(array__dataflow="output_stationary"))


@pytest.mark.parametrize("target", ["systolic8x8", "systolic16x16", "systolic32x32"])
def test_a_dense_only_program_keeps_every_width_wide_enough(target):
    """Every map of the autoencoder is 1x1 and its addresses are short: a signed offset still holds a
    sign-extended window origin and a vector pixel index a column, so no replication is empty."""
    program = rtl_program(integer_graph("autoencoder"), load_target(target))
    assert {(m.height, m.width) for m in program.maps.values()} == {(1, 1)}
    assert all(layer.kind == ARRAY for layer in program.layers) and len(program.layers) == 10
    w = program.widths
    assert w["OFF_W"] >= w["DIM_W"] + 2 and w["OFF_W"] > w["ADDR_W"] and w["VPIX_W"] > w["DIM_W"]
    assert min(w.values()) >= 1


def test_resize_reads_each_output_pixel_from_its_source_pixel():
    from hlsgen.rtl.program import OP_REQ
    from tests.hls.helpers import quantize_model
    from tests.real_exports import images, real_ops_net

    program = rtl_program(quantize_model(real_ops_net(), {"x": images(8, 0)}).graph, load_target("systolic8x8"))
    vector = [layer.fields for layer in program.layers if layer.kind != ARRAY]
    resize = next(layer.fields for layer in program.layers if layer.node.op == "Resize")
    assert resize["op"] == OP_REQ and (resize["ma"], resize["shift"], resize["a_zp"], resize["zp"]) == (1, 0, 0, 0)
    assert (resize["up_x"], resize["up_y"], resize["src_w"], resize["stride"]) == (2, 1, 6, 36)
    assert (resize["vw"], resize["pixels"], resize["out_width"], resize["passes"]) == (18, 216, 18, 2)
    others = [f for f in vector if f is not resize]
    assert others and all(f.get("up_x", 0) == f.get("up_y", 0) == 0 and f["src_w"] == f["vw"] for f in others)


def test_windowed_pools_are_vector_rows_with_their_window_and_divisors():
    """The pools model's unfused MaxPools and windowed AveragePools: each row's window geometry, the region
    its count covers, a divisor word per window count (the reference's (M, s), 0 elsewhere), and the
    program's cycles: a tap per cycle."""
    from hlsgen.hw.cycles import window_pool_cycles
    from hlsgen.rtl.program import OP_WAVG, OP_WMAX

    graph = integer_graph("window_pools")
    program = rtl_program(graph, load_target("systolic8x8"))
    pools = {layer.name: layer for layer in program.layers if layer.node.op in ("MaxPool", "QAveragePool")}
    assert set(pools) == {"pool1", "pool2", "pool3", "pool4"}
    geometry = ("op", "in_h", "in_w", "vw", "pixels", "sx", "sy", "x0", "y0", "pix0", "row_step", "win_kh",
                "win_kw", "dil_x", "dil_y", "dil_row", "cnt_y0", "cnt_y1", "cnt_x0", "cnt_x1")
    expected = {"pool1": (OP_WMAX, 12, 10, 5, 30, 2, 2, -1, -1, -11, 20, 3, 3, 1, 1, 10, 0, 12, 0, 10),
                "pool2": (OP_WMAX, 6, 5, 5, 30, 1, 1, -1, -1, -6, 5, 2, 2, 2, 2, 10, 0, 6, 0, 5),
                "pool3": (OP_WAVG, 6, 5, 3, 9, 2, 2, 0, 0, 0, 10, 2, 2, 1, 1, 5, 0, 6, 0, 5),
                # count_include_pad: the padded map [-1, 4) x [0, 4) counts
                "pool4": (OP_WAVG, 3, 3, 3, 9, 1, 1, 0, -1, -3, 3, 3, 2, 1, 1, 3, -1, 4, 0, 4)}
    for name, layer in pools.items():
        assert tuple(layer.fields[k] for k in geometry) == expected[name], name
        kh, kw = layer.fields["win_kh"], layer.fields["win_kw"]
        assert layer.row.cycles == window_pool_cycles(layer.fields["passes"], layer.fields["pixels"], kh * kw)
        if layer.node.op == "QAveragePool":
            base, table = layer.fields["div_base"], {c: (m, s) for c, m, s in layer.node.attrs.divisors}
            words = program.divisors[base:base + kh * kw + 1]
            assert [(w & (1 << 17) - 1, w >> 17) for w in words] == [table.get(c, (0, 0)) for c in range(kh * kw + 1)]
    assert len(program.divisors) == 5 + 7


def test_weights_in_external_memory_are_an_image_of_whole_beats(tmp_path):
    """The program streams the weights from DRAM: a weight word is an AXI4 beat (128 bits: 8 slices of 16
    weights on systolic16x16), weights.bin holds those words little-endian in place of weights.mem, and the
    slots hold the widest tile (16 rows of 8 bits = 16 beats); the DMA requests enough tiles to cover 60
    cycles of latency at 12 bytes per cycle (3 tiles of 256 bytes) besides the two slots."""
    from hlsgen.rtl.render import write_rtl
    from hlsgen.rtl.weight_dma import tile_words, tiles_ahead

    on_chip = rtl_program(integer_graph("digits"), target_with())
    program = rtl_program(integer_graph("digits"), target_with(buffers__weight=Buffer(16, 16)))
    assert program.weights_external and not on_chip.weights_external
    assert program.weight_word_slices == 128 // 16
    files = write_rtl(program, tmp_path)
    image = files.weight_image.read_bytes()
    assert len(image) == 16 * len(program.weights)
    assert [int.from_bytes(image[i:i + 16], "little") for i in range(0, len(image), 16)] == program.weights
    assert not (tmp_path / "weights.mem").exists() and (tmp_path / "taps.mem").exists()
    assert (tile_words(program), tiles_ahead(program)) == (16, 5)
    # the slice stream is the ROM's: the same weights, grouped into words of 8 slices either way
    assert program.weights == on_chip.weights


@pytest.mark.parametrize("target, data_bits, beats", [("systolic32x32", 128, 2), ("systolic16x16", 32, 4)])
def test_a_port_narrower_than_a_row_takes_a_word_in_several_beats(tmp_path, target, data_bits, beats):
    """systolic32x32's 128-bit port holds 4 slices of 32 weights, half a row of 8-bit weights (and a 32-bit
    port a quarter of 16x16's): a word of the weight image stays the ROM's (8 slices), 2 (4) beats of the
    port, weights.bin holds the same words, and the top gives hg_weight_dma its beats per word."""
    from hlsgen.hw.target import ExternalMemory
    from hlsgen.rtl.render import write_rtl
    from hlsgen.rtl.weight_dma import word_beats

    on_chip = rtl_program(integer_graph("digits"), target_with(target))
    program = rtl_program(integer_graph("digits"), target_with(target, buffers__weight=Buffer(4, 16),
                                                               external_memory=ExternalMemory(data_bits, 4, 60)))
    assert program.weights_external and program.weight_word_slices == 8 and word_beats(program) == beats
    assert program.weights == on_chip.weights
    files = write_rtl(program, tmp_path)
    size = program.cols
    image = files.weight_image.read_bytes()
    assert [int.from_bytes(image[i:i + size], "little") for i in range(0, len(image), size)] == program.weights
    assert f".S(8), .BEATS({beats})," in (tmp_path / f"{files.top}.v").read_text()


@pytest.mark.parametrize("model, kib", [("residual", 4), ("mobilenet", 6), ("window_pools", 2)])
def test_bands_share_their_layers_roms_and_dma_rows_carry_their_moves(model, kib):
    """The residual network in 4 KiB of activation memory, the mobilenet in 6 KiB and the windowed pools in
    2 KiB: their layers run in bands over buffers, with the weights, parameters and per-node tables of the whole
    program (once per node, not per band; a depthwise band over channels [c0, c1) from column tile c0 / C); a
    band row reads its input buffer's height and the band's top padding and computes its band's pixels, also
    where it writes its rows into the whole map on chip (Band.written_row: the vector unit once walked the
    whole map's rows there, past the band); a dma row names its move and buffer."""
    from hlsgen.rtl.program import DMA

    graph = integer_graph(model)
    shrunk = target_with(buffers__input=Buffer(kib, 16))
    banded = rtl_program(graph, shrunk)
    # of the same input layout (a packed image pads its readers' taps)
    whole = rtl_program(graph, target_with(), packed=map_model(graph, shrunk).packed_input)
    assert banded.fmaps_external and banded.input_in_dram and not whole.fmaps_external
    assert banded.weights == whole.weights and banded.params == whole.params and banded.divisors == whole.divisors
    bands = [layer for layer in banded.layers if layer.row.band and layer.row.band.count > 1]
    assert bands and any(layer.kind == ARRAY for layer in bands) and any(layer.kind != ARRAY for layer in bands)
    if model == "mobilenet":  # depthwise bands of channel blocks past the first
        assert any(layer.kind == ARRAY and layer.row.band.channels and layer.row.band.channels[0] for layer in bands)
    if model != "residual":  # vector bands writing their rows of a map on chip
        assert any(layer.row.band.written_row for layer in bands if layer.kind != ARRAY)
    for layer in bands:
        f, x, band = layer.fields, banded.maps[layer.inputs[0]], layer.row.band
        # a band buffer of the band's input rows, or (a run's first row) the whole map on chip
        assert x.height == band.in_rows[1] - band.in_rows[0] and (x.holds or band.in_rows[0] == 0)
        if layer.kind != ARRAY and layer.row.kind != "global_pool":
            assert f["pixels"] == (band.out_rows[1] - band.out_rows[0]) * banded.maps[layer.output].width
        if layer.kind == ARRAY:
            assert f["in_h"] == x.height and f["y0"] == -band.pad_top
            node = next(w.fields for w in whole.layers if w.node is not None and w.node.name == layer.node.name)
            first = band.channels[0] // banded.cols if band.channels else 0
            assert f["par_base"] == node["par_base"] + first
            assert f["w_base"] == node["w_base"] + first * f["tr"] * banded.rows * f["w_bits"]
    moves = [layer for layer in banded.layers if layer.kind == DMA]
    assert moves and {layer.row.move.direction for layer in moves} == {"load", "store"}
    for layer in moves:
        f, m = layer.fields, layer.row.move
        buffer, tensor = banded.maps[m.buffer], banded.maps[m.tensor]
        assert tensor.dram_base is not None and buffer.dram_base is None
        assert (f["dma_store"], f["dma_segments"], f["dma_words"]) == (int(m.direction == "store"), m.segments,
                                                                      m.segment_words)
        block = (m.channels[0] >> tensor.lg) * tensor.pixels if m.channels else 0  # a slice of channel blocks
        assert f["dma_dram_word"] == tensor.dram_base + block + m.rows[0] * tensor.width
        assert f["dma_buf_base"] == buffer.base
        assert f["dma_plane"] == buffer.plane
    # the two tables: moves and layers, each row's wait counting the other table's rows in program order
    assert banded.moves == moves and banded.compute == [layer for layer in banded.layers if layer.kind != DMA]
    for table, other in ((banded.moves, banded.compute), (banded.compute, banded.moves)):
        for layer in table:
            before = banded.layers.index(layer)
            assert layer.fields["wait"] <= len([o for o in other if banded.layers.index(o) < before])
    assert any(layer.fields["wait"] for layer in moves) and any(layer.fields["wait"] for layer in banded.compute)


def test_a_grouped_conv_is_a_table_row_per_chunk_of_groups():
    """On 8 rows, 2 groups of 8 -> 8 channels are 2 chunks of one group (each reads its own 8 channels, writes
    its own channel slot, ROMs of its own); 8 groups of 2 -> 4 channels are 2 chunks of 4 groups, each
    block-diagonal: 16 columns, group g's 4 columns reading only its 2 lanes of every tap. The program's
    cycles are the chunks' passes, each with its own weight load and drain."""
    from hlsgen.hw.cycles import weight_stationary_cycles

    graph = integer_graph("grouped_cnn")
    program = rtl_program(graph, load_target("systolic8x8"))
    rows = {name: [layer for layer in program.layers if layer.name == name] for name in ("group2", "group8")}
    assert [layer.chunk for layer in rows["group2"]] == [0, 1] and [layer.chunk for layer in rows["group8"]] == [0, 1]
    r2 = program.maps[rows["group2"][0].output]
    first, second = (layer.fields for layer in rows["group2"])
    assert (first["out_base"], second["out_base"]) == (r2.base, r2.base + r2.pixels)  # channel slot 1
    assert first["out_channels"] == second["out_channels"] == 8 and first["tr"] == 9 and first["tc"] == 1
    word = tap_word(program.widths["ADDR_W"], program.widths["DIM_W"])
    lane_off = word["off"]

    def off(layer):  # lane r's offset in the first row tile
        table = program.taps[layer.fields["tap_base"]]
        return [table >> (r * word.width + lane_off.offset) & ((1 << lane_off.width) - 1) for r in range(8)]

    r1 = program.maps[rows["group2"][0].inputs[0]]
    assert off(rows["group2"][1]) == [r1.pixels + o for o in off(rows["group2"][0])]  # its 8 channels: slot 1
    assert first["w_base"] != second["w_base"] and first["par_base"] != second["par_base"]
    g8 = rows["group8"][0]
    assert g8.fields["tr"] == 9 and g8.fields["tc"] == 2 and g8.channels == (0, 16)
    mapped = {row.name: row for row in map_model_of(graph, "systolic8x8").layers}
    assert mapped["group8"].tiles.work.packed == 4 and mapped["group2"].tiles.work.packed == 1
    assert mapped["group8"].macs == 8 * (2 * 9) * 4 * 16  # the groups' MACs, not the packed zero blocks'
    assert mapped["group2"].cycles == 2 * weight_stationary_cycles(8, 8, 1, 9, 1, [64])


def map_model_of(graph, target: str):
    from hlsgen.hw import map_model
    return map_model(graph, load_target(target))


def test_any_stride_widens_the_stride_field():
    """Stride 16 needs 5 bits: the program's ST_W (the layer table's sx and sy, the pixel walks' parameter);
    a model whose strides fit 4 bits keeps 4."""
    program = rtl_program(integer_graph("strided"), load_target("systolic8x8"))
    conv, pool = (next(layer.fields for layer in program.layers if layer.name == name) for name in ("conv16", "pool16"))
    assert (conv["sx"], conv["sy"], pool["sx"], pool["sy"]) == (16, 16, 16, 16)
    assert program.widths["ST_W"] == program.word_parameters["ST_W"] == 5
    assert rtl_program(integer_graph("digits"), load_target("systolic8x8")).widths["ST_W"] == 4


def test_concat_and_pad_are_vector_passes():
    """A channel Concat is a table row per input (the identity, written into its channels of the output: the
    second input's 8 channels at slot 1 of 8 banks); a constant Pad a 1x1 average pool whose window origin is
    the padding, the pad value its centre and zero point, divisors (0, 0) for a tap in the padding, (1, 0)
    for one inside. On 16 banks the second input starts inside a block: it is replicated (8 banks), runs
    first and writes the block from its first channel (its lanes j reading channel j mod 8 in slot 0)."""
    from hlsgen.rtl.program import OP_REQ, OP_WAVG

    graph = integer_graph("copies")
    program = rtl_program(graph, load_target("systolic8x8"))
    cat = [layer for layer in program.layers if layer.name == "cat"][::-1]  # the rows run the last input first
    out = program.maps[cat[0].output]
    assert [layer.channels for layer in cat] == [(0, 8), (8, 16)] and out.banks == 8
    assert [layer.fields["out_base"] for layer in cat] == [out.base, out.base + out.pixels]
    assert all(layer.fields["op"] == OP_REQ and (layer.fields["ma"], layer.fields["shift"]) == (1, 0) for layer in cat)
    pad = next(layer for layer in program.layers if layer.name == "pad").fields
    value = graph.nodes["pad"].attrs.value
    assert value != program.maps[cat[0].output].quant.zero_point
    assert pad["op"] == OP_WAVG and (pad["win_kh"], pad["win_kw"], pad["x0"], pad["y0"]) == (1, 1, -2, -1)
    assert (pad["a_zp"], pad["zp"], pad["vw"], pad["pixels"]) == (value, value, 12, 120)
    assert program.divisors[pad["div_base"]:pad["div_base"] + 2] == [0, 1]
    wide = rtl_program(graph, load_target("systolic16x16"))
    second, first = (layer for layer in wide.layers if layer.name == "cat")
    x, out = wide.maps[second.inputs[0]], wide.maps[second.output]
    assert (second.channels, first.channels, x.banks, out.banks) == ((8, 16), (0, 8), 8, 16)
    assert (second.fields["out_base"], second.fields["out_channels"], second.fields["a_lg"]) == (out.base, 16, 4)
    assert (first.fields["out_base"], first.fields["out_channels"]) == (out.base, 8)


def test_a_concat_input_that_cannot_start_inside_a_block_is_refused_by_name():
    """4 + 12 channels on 16 rows: the second input starts at channel 4 and has 12 channels (no replica of
    them puts channel j mod 12 in bank j)."""
    from onnx import TensorProto, helper

    from tests.builders import make_model, tensor_value
    from tests.hw.models import _quantize

    rng = np.random.default_rng(12)
    inits = {"wa": rng.standard_normal((4, 3, 3, 3)).astype(np.float32) * 0.3,
             "wb": rng.standard_normal((12, 3, 3, 3)).astype(np.float32) * 0.3,
             "fc": rng.standard_normal((256, 4)).astype(np.float32) * 0.1}
    nodes = [helper.make_node("Conv", ["x", "wa"], ["a"], name="conva", pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["x", "wb"], ["b"], name="convb", pads=[1, 1, 1, 1]),
             helper.make_node("Concat", ["a", "b"], ["c"], name="cat", axis=1),
             helper.make_node("Flatten", ["c"], ["f"], name="flat"),
             helper.make_node("MatMul", ["f", "fc"], ["y"], name="fc")]
    model = make_model(nodes, [tensor_value("x", [1, 3, 4, 4])], [tensor_value("y", [1, 4], TensorProto.FLOAT)], inits)
    with pytest.raises(MappingError, match=r"'cat' \(Concat\).*writes channels 4\.\.15.*inside a block of the map's 16"):
        rtl_program(_quantize(model), load_target("systolic16x16"))


def test_a_transpose_of_rows_and_columns_walks_the_input_column_wise():
    """Output pixel (oy, ox) of the 16 x 5 x 6 -> 16 x 6 x 5 Transpose reads input offset oy + 6 * ox: a 1x1
    max pool with row step 1 and column stride 6 over the input seen as one row of 30 pixels."""
    from hlsgen.rtl.program import OP_WMAX

    program = rtl_program(integer_graph("copies"), load_target("systolic8x8"))
    swap = next(layer.fields for layer in program.layers if layer.name == "swap")
    assert swap["op"] == OP_WMAX and (swap["win_kh"], swap["win_kw"], swap["pix0"]) == (1, 1, 0)
    assert (swap["row_step"], swap["sx"], swap["sy"], swap["in_h"], swap["in_w"]) == (1, 6, 1, 6, 30)
    assert (swap["vw"], swap["pixels"], swap["passes"]) == (5, 30, 2)


def test_a_transpose_that_moves_the_channels_is_refused_by_name():
    from onnx import TensorProto, helper

    from tests.builders import make_model, tensor_value
    from tests.hw.models import _quantize

    rng = np.random.default_rng(9)
    inits = {"w": rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3,
             "fc": rng.standard_normal((128, 4)).astype(np.float32) * 0.1}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Transpose", ["c"], ["t"], name="nhwc", perm=[0, 2, 3, 1]),
             helper.make_node("Relu", ["t"], ["r"], name="relu"),
             helper.make_node("Flatten", ["r"], ["f"], name="flat"),
             helper.make_node("MatMul", ["f", "fc"], ["y"], name="fc")]
    model = make_model(nodes, [tensor_value("x", [1, 3, 4, 4])], [tensor_value("y", [1, 4], TensorProto.FLOAT)], inits)
    with pytest.raises(MappingError, match=r"'nhwc' \(Transpose\).*perm \[0, 2, 3, 1\] moves the channels"):
        rtl_program(_quantize(model), load_target("systolic8x8"))


def test_a_concat_along_rows_or_columns_writes_from_its_inputs_origin():
    """cat_rows puts a 3-row map under a 5-row one (6 columns), cat_cols a 4-column map beside a 6-column one
    (10 columns): the second input's writer starts 5 rows (30 words) or 6 columns down the output, with the
    output's width as its row stride, all channels."""
    program = rtl_program(integer_graph("spatial_concat"), load_target("systolic16x16"))
    for name, origin, shift in (("cat_rows", (5, 0), 30), ("cat_cols", (0, 6), 6)):
        second, first = (layer for layer in program.layers if layer.name == name)  # the last input first
        out = program.maps[first.output]
        assert second.origin == origin and first.origin == (0, 0) and first.channels is None
        assert (first.fields["out_base"], second.fields["out_base"]) == (out.base, out.base + shift)
        assert second.fields["out_width"] == out.width and second.fields["out_channels"] == 8
        assert second.fields["vw"] == program.maps[second.inputs[0]].width


def test_a_depthwise_conv_with_a_channel_multiplier_is_a_grouped_conv():
    program = rtl_program(integer_graph("depthwise_multiplier"), load_target("systolic8x8"))
    (dw,) = [layer for layer in program.layers if layer.name == "dw2"]
    assert dw.row.kind == "grouped_conv" and dw.fields["dw"] == 0 and dw.row.tiles.work.packed == 8
    assert dw.channels == (0, 16) and dw.fields["tc"] == 2
