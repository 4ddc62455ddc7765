"""Feature maps in external memory: rows that do not fit the activation memory run in bands of output
rows, their external operands moved by `dma` rows; small models keep every map on chip."""
import functools
import json

import numpy as np
import pytest

from hlsgen.architectures import ARCHITECTURES
from hlsgen.errors import MappingError
from hlsgen.hw import load_target, map_model
from hlsgen.hw.band_geometry import row_geometry
from hlsgen.hw.dram import pack_map, unpack_map
from hlsgen.hw.placement import FeatureMap, MapPlacement, allocate, map_shape
from hlsgen.hw.program_io import PROGRAM_FILE, read_program, write_program
from hlsgen.hw.queues import schedule
from hlsgen.hw.target import Buffer
from hlsgen.ir.quant import TensorQuant
from tests.hw.models import _quantize, integer_graph, target_with


def _bands(mapping):
    """Per graph node: its band rows, in order."""
    out = {}
    for row in mapping.layers:
        if row.band is not None:
            out.setdefault(row.nodes[0], []).append(row)
    return out


def _check_program(graph, mapping):
    target = mapping.target
    whole = map_model(graph, target_with(target.name, buffers__input=Buffer(1 << 14, target.array.rows),
                                         device__bram_18k=1 << 20))
    assert not whole.maps_external and mapping.macs == whole.macs  # the bands compute every output pixel once
    unbanded = {row.nodes[0]: row for row in whole.layers if row.nodes}
    capacity = target.buffers.input.bytes
    R = target.array.rows
    assert mapping.memory.words_per_bank * R <= capacity  # the placement itself, planes and depthwise window memory
    for row in mapping.layers:
        assert row.buffers[0].used <= capacity, row.name
    external = {m.name for m in mapping.memory.external}
    assert external and all(graph.shape(t) for t in external)
    assert not external & set(graph.outputs)
    defined = {m.name for m in mapping.memory.maps if m.dram_base is None and m.birth < 0} | external
    for row in mapping.layers:  # every row reads what an earlier row (or the host) put there
        if row.kind == "reshape":
            defined.add(row.output)
            continue
        for t in row.inputs:
            assert mapping.memory.aliases.get(t, t) in defined | set(mapping.memory.aliases), (row.name, t)
        defined.add(row.output)
        if row.move is not None:
            m, fmap = row.move, mapping.placement(row.move.tensor)
            buffer = mapping.placement(m.buffer)
            assert fmap.dram_base is not None and buffer.dram_base is None and buffer.lg == fmap.lg
            assert buffer.height == m.rows[1] - m.rows[0] and m.segment_words == buffer.pixels
            first = (m.channels[0] >> fmap.lg) * fmap.pixels if m.channels else 0
            assert m.dram_word == fmap.dram_base + first + m.rows[0] * fmap.width
            assert buffer.channels == (m.channels[1] - m.channels[0] if m.channels else fmap.channels)
            assert row.cycles > target.external_memory.read_latency and row.dram_bytes == m.words * target.array.rows
    _check_queues(mapping)
    # a run's band buffers: written by one row, read by the next row only, moved by no dma row
    moved = {row.move.buffer for row in mapping.layers if row.move is not None}
    feeds = {row.output for row in mapping.layers if row.band is not None and row.output not in moved
             and mapping.placement(row.output).holds}
    for buffer in feeds:
        readers = [row for row in mapping.layers if buffer in row.inputs]
        assert len(readers) == 1 and readers[0].band is not None, buffer
    for node, bands in _bands(mapping).items():
        g = row_geometry(graph, unbanded[node])
        assert [b.band.index for b in bands] == list(range(len(bands)))
        slices = sorted({b.band.channels for b in bands}, key=lambda c: c or (0, 0))
        # a global pool's bands cover its input rows (each adds to the one output pixel), the others' output rows
        covered = sorted((c, r) for b in bands for r in range(*(b.band.in_rows if g.reduces else b.band.out_rows))
                         for c in [b.band.channels])
        every = sorted((c, r) for c in slices for r in range(g.height_out))
        if bands[0].output in feeds:  # a row of a run: its bands overlap by the rows the next row's halo reads
            assert sorted(set(covered)) == every and all(b.output in feeds for b in bands)
        else:
            assert len(bands) == 1 or covered == every
        for b in bands:  # the engine's row y * s - pad_top + ky * d is the layer's global row, less a
            a, rows = b.band.in_rows[0], b.band.in_rows[1] - b.band.in_rows[0]
            # a Pad's band in the bottom padding starts below its buffer; a run's head reading its input whole on
            # chip starts its window a rows down the map
            assert b.band.pad_top >= 0 or b.op == "Pad" or (a, rows) == (0, g.height_in)
            for y in range(b.band.rows_computed):
                first = (b.band.out_rows[0] * g.pool + y)
                for ky in range(g.kernel if g.splits and g.up == 1 and not g.reduces else 0):
                    global_row = first * g.stride - g.pad + ky * g.dilation
                    local = y * g.stride - b.band.pad_top + ky * g.dilation
                    assert local == global_row - a
                    assert (0 <= local < rows) == (0 <= global_row < g.height_in), (b.name, y, ky)


def _touches(mapping, row):
    """What a row reads and writes of the activation memory, from the placement: (memory, first, end) word
    ranges, a memory being a plane or the depthwise window memory; and the ports it takes."""
    reads, writes, ports = [], [], set()
    for t in row.inputs:
        m = mapping.placement(t)
        if m.dram_base is None:
            reads.append((m.plane, m.base, m.base + m.words))
            ports.add(("read", m.plane))
            if row.kind == "depthwise":
                reads.append(("copies", m.dw_base, m.dw_base + m.words))
    m = mapping.placement(row.output)
    if m.dram_base is None:
        writes.append((m.plane, m.base, m.base + m.words))
        ports.add(("write", m.plane))
        if m.dw_read:
            writes.append(("copies", m.dw_base, m.dw_base + m.words))
            ports.add(("write", "copies"))
    return reads, writes, ports


def _meet(a, b):
    return any(x == y and lo < hi2 and lo2 < hi for x, lo, hi in a for y, lo2, hi2 in b)


def _check_queues(mapping):
    """The two queues (hlsgen.hw.queues): run as their waits allow, no row reads or writes words a row running
    at the same time writes, nor takes a port it takes; and a band's copies overlap some compute."""
    rows = [r for r in mapping.layers if r.unit != "none"]
    times = schedule(list(mapping.layers))
    times = [t for r, t in zip(mapping.layers, times) if r.unit != "none"]
    dma = [i for i, r in enumerate(rows) if r.unit == "dma"]
    compute = [i for i, r in enumerate(rows) if r.unit != "dma"]
    for queue, other in ((dma, compute), (compute, dma)):
        for i in queue:
            assert 0 <= rows[i].wait <= len([j for j in other if j < i])  # only earlier rows of the other queue
    touches = [_touches(mapping, r) for r in rows]
    for i in dma:
        for j in compute:
            (s0, e0), (s1, e1) = times[i], times[j]
            if s0 < e1 and s1 < e0:  # at the same time
                (ri, wi, pi), (rj, wj, pj) = touches[i], touches[j]
                assert not (_meet(wi, rj + wj) or _meet(ri, wj) or pi & pj), (rows[i].name, rows[j].name)
    return sum(max(0, min(times[i][1], times[j][1]) - max(times[i][0], times[j][0])) for i in dma for j in compute
               if times[i][0] < times[j][1] and times[j][0] < times[i][1])


def test_small_models_keep_every_map_on_chip():
    mapping = map_model(integer_graph("residual"), target_with())
    assert not mapping.maps_external and mapping.residency["feature_maps"] == "on_chip"
    assert all(row.band is None and row.move is None for row in mapping.layers)
    assert mapping.memory.dram_words == 0


def test_a_cifar_resnet_runs_in_bands_on_the_8x8_activation_memory():
    graph = integer_graph("resnet_cifar")
    mapping = map_model(graph, target_with("systolic8x8"))
    assert mapping.maps_external and mapping.residency["feature_maps"] == "external"
    _check_program(graph, mapping)
    whole = map_model(graph, target_with("systolic8x8", buffers__input=Buffer(4096, 8), device__bram_18k=1 << 20))
    moved = sum(row.dram_bytes for row in mapping.layers if row.unit == "dma")
    assert moved > 0 and mapping.cycles > whole.cycles


@pytest.mark.parametrize("model, kib", [("resnet8", 16), ("mobilenet_v1", 48), ("ds_cnn", 8)])
def test_real_architectures_band_in_a_small_activation_memory(model, kib):
    graph = _quantize(ARCHITECTURES[model]())
    mapping = map_model(graph, target_with(buffers__input=Buffer(kib, 16)))
    _check_program(graph, mapping)
    assert any(len(bands) > 1 for bands in _bands(mapping).values())


@functools.lru_cache(maxsize=None)
def _architecture(name):
    return _quantize(ARCHITECTURES[name]())


# the biggest maps on the smallest array take 35 to 45 s each (every plan is placed): make test-slow
SLOW_MAPPINGS = {("mobilenet_v2", "systolic8x8"), ("resnet18", "systolic8x8")}


@pytest.mark.parametrize("model, target", [
    pytest.param(m, t, marks=[pytest.mark.slow] if (m, t) in SLOW_MAPPINGS else [])
    for m in ARCHITECTURES for t in ("systolic8x8", "systolic16x16", "systolic32x32")])
def test_every_architecture_maps_on_every_shipped_target(model, target):
    graph = _architecture(model)
    mapping = map_model(graph, target_with(target))
    if mapping.maps_external:
        _check_program(graph, mapping)
    assert mapping.input_elements == (0 if mapping.input_in_dram else int(np.prod(graph.shape(graph.inputs[0]))))
    # the placement, with its G = 1 input images and depthwise window memory, decides (measured; DS-CNN on
    # systolic8x8 fits since each word of the window memory is stored once):
    external = {"resnet18", "mobilenet_v2", "mobilenet_v1"}
    assert mapping.maps_external == (model in external)  # the rest keep every map on chip


@pytest.mark.parametrize("model", ["big_average_pool", "big_max_pool"])
def test_a_global_pool_of_a_map_larger_than_the_memory_adds_band_by_band(model):
    """A channel block of the pool's input (64 x 64 x 8 bytes) is twice the 16 KiB activation memory: the pool
    runs in bands of input rows, one channel block each (the engine carries one pass's totals on), every row of
    every block once, and its cycles are its bands' pixels."""
    graph = integer_graph(model)
    mapping = map_model(graph, target_with("systolic8x8", buffers__input=Buffer(16, 8)))
    _check_program(graph, mapping)
    bands = _bands(mapping)["pool"]
    assert len(bands) > 2 and all(b.band.channels and b.band.channels[1] - b.band.channels[0] == 8 for b in bands)
    assert all(b.band.out_rows == (0, 1) and b.tiles.passes == 1 for b in bands)
    assert sum(b.tiles.positions for b in bands) == 2 * 64 * 64


@pytest.mark.parametrize("model", ["big_channel_copies", "big_column_copies"])
def test_copies_of_maps_larger_than_the_memory_run_in_bands_of_rows(model):
    """A Concat of channels or columns and a constant Pad of 64 KiB maps on 16 KiB: bands of output rows, a
    Concat's reading the same rows of both inputs, a Pad's its rows less the padding above them (pad_top)."""
    graph = integer_graph(model)
    mapping = map_model(graph, target_with("systolic8x8", buffers__input=Buffer(16, 8)))
    _check_program(graph, mapping)
    bands = _bands(mapping)
    assert len(bands["cat"]) > 2 and all(b.band.in_rows == b.band.out_rows for b in bands["cat"])
    pads = bands["pad"]
    assert len(pads) > 2 and pads[0].band.pad_top == 1 and pads[0].band.in_rows[0] == 0
    inside = [b.band for b in pads if 1 <= b.band.out_rows[0] and b.band.out_rows[1] <= 65]
    assert inside and all(b.pad_top == 0 and b.in_rows == (b.out_rows[0] - 1, b.out_rows[1] - 1) for b in inside)
    assert sum(b.band.out_rows[1] - b.band.out_rows[0] for b in pads) == 64 + 3
    assert pads[-1].band.out_rows[0] >= 65 and pads[-1].band.pad_top < 0  # wholly in the bottom padding


def test_double_buffered_bands_overlap_their_copies_with_the_compute():
    """ResNet-18 on systolic16x16: the loads of band k + 1 come before the compute of band k, into other
    buffers, and the two queues run copies and compute at once (fewer cycles than one after the other)."""
    graph = _architecture("resnet18")
    mapping = map_model(graph, target_with("systolic16x16"))
    names = [row.name for row in mapping.layers]
    pipelined = [bands for bands in _bands(mapping).values() if len(bands) > 2 and f"load:{bands[1].name}.in0" in names
                 and names.index(f"load:{bands[1].name}.in0") < names.index(bands[0].name)]
    assert len(pipelined) > 5  # a stem whose double bands do not fit stays single-buffered
    bands = pipelined[0]
    assert mapping.placement(f"{bands[0].name}.in0").base != mapping.placement(f"{bands[1].name}.in0").base or \
        mapping.placement(f"{bands[0].name}.in0").plane != mapping.placement(f"{bands[1].name}.in0").plane
    overlap = _check_queues(mapping)
    makespan = max(end for _, end in schedule(list(mapping.layers)))
    assert overlap > 0 and makespan + overlap == sum(row.cycles for row in mapping.layers)


def test_a_banded_program_reads_back_equal(tmp_path):
    graph = integer_graph("resnet_cifar")
    target = target_with("systolic8x8")
    mapping = map_model(graph, target)
    write_program(mapping, tmp_path)
    assert read_program(tmp_path, graph, target) == mapping
    data = json.loads((tmp_path / PROGRAM_FILE).read_text())
    assert data["residency"]["feature_maps"] == "external" and data["memory"]["dram_words"] > 0
    moves = [row for row in data["rows"] if row["unit"] == "dma"]
    assert {row["move"]["direction"] for row in moves} == {"load", "store"}
    assert all(row["transfers"][0]["direction"] == ("read" if row["kind"] == "load" else "write") for row in moves)


def test_a_band_of_one_row_that_does_not_fit_is_refused():
    with pytest.raises(MappingError, match="not fit the activation memory") as exc:
        map_model(integer_graph("resnet_cifar"), target_with(buffers__input=Buffer(1, 16)))
    assert "layer '" in str(exc.value) and exc.value.exit_code == 3


@pytest.mark.parametrize("model, layer, kib", [("big_transpose", "swap", 128), ("long_sequence", "conv", 48)])
def test_a_layer_that_does_not_run_in_bands_is_refused_with_the_memory_it_needs(model, layer, kib):
    """A Transpose and a 1-D map move their maps whole: when those do not fit, the refusal names the layer,
    says why it is not banded and how much activation memory it needs."""
    with pytest.raises(MappingError) as exc:
        map_model(integer_graph(model), target_with("systolic8x8", buffers__input=Buffer(16, 8)))
    message = str(exc.value)
    assert exc.value.exit_code == 3 and "\n" not in message
    assert f"layer {layer!r} needs" in message and "(it does not run in bands of rows)" in message
    assert message.endswith(f"give the target buffers.input of at least {kib} KiB")


@pytest.mark.parametrize("channels, lg, signed", [(16, 4, True), (20, 4, False), (4, 2, True), (3, 0, False)])
def test_the_host_image_of_a_map_is_the_activation_memory_words(channels, lg, signed):
    rng = np.random.default_rng(channels)
    quant = TensorQuant(1.0, 0, 8, signed)
    p = MapPlacement("x", channels, 3, 5, quant, -1, 1, True, False, lg, 0, 0, 0, "", 0)
    lo, hi = (-128, 128) if signed else (0, 256)
    values = rng.integers(lo, hi, size=(channels, 3, 5))
    words = pack_map(values, p, 16)
    assert words.shape == (p.words, 16)
    np.testing.assert_array_equal(unpack_map(words, p), values)
    for c, y, x in [(0, 0, 0), (channels - 1, 2, 4), (channels // 2, 1, 3)]:
        word = (c >> lg) * 15 + y * 5 + x
        for bank in range(16):
            if bank % p.banks == c % p.banks:
                assert words[word, bank] == values[c, y, x] & 0xFF
    assert map_shape((1, channels, 3, 5)) == (channels, 3, 5)


def test_the_report_shows_the_moves_and_marks_them_memory_bound():
    from hlsgen.hw.report import format_program, report_json
    mapping = map_model(integer_graph("resnet_cifar"), target_with("systolic8x8"))
    report = report_json(mapping)
    moves = [layer for layer in report["layers"] if layer["unit"] == "dma"]
    assert moves and all(layer["memory_bound"] and layer["dram_bytes"] > 0 for layer in moves)
    total = report["total"]
    assert total["dram_bytes_by_what"]["feature_maps"] == sum(layer["dram_bytes"] for layer in moves)
    assert total["dma_cycles"] == sum(layer["cycles"] for layer in moves) > 0
    assert total["residency"]["feature_maps"] == "external"
    text = format_program(mapping)
    assert " dma " in text and "dram" in text


def test_uneven_planes_take_the_maps_a_qadd_keeps_apart_first():
    """The target's top gives plane 1 an eighth of the memory (hlsgen.hw.overlay_memory): two maps a QAdd reads
    together take a plane each before a map of their size alive beside them, which then goes to the large plane
    instead of filling the small one first (ResNet-18's last blocks on systolic32x32's top)."""
    maps = [FeatureMap("a", 16, 1, 10, None, 0, 3), FeatureMap("f", 16, 1, 10, None, 0, 2),
            FeatureMap("b", 16, 1, 10, None, 1, 3)]
    limits = (1000, 200)
    depths = allocate(maps, [("a", "b")], limits=limits)
    assert maps[0].plane != maps[2].plane and maps[1].plane == 0
    assert all(m.base + m.words <= limits[m.plane] for m in maps) and depths[1] <= limits[1]


def test_the_models_own_top_bands_in_the_targets_split_when_that_runs_faster():
    """MobileNetV1-0.25 (96 px) on systolic16x16: in the split of the target's top (planes of 3,584 and 3,072
    words, 16 window banks of 224) its stem bands faster than in any share of the memory the own top's own
    search tries, so the model's own top takes that placement: both tops run the same cycles (measured:
    54,196)."""
    from hlsgen.hw.overlay_memory import memory_split

    graph, target = _architecture("mobilenet_v1"), load_target("systolic16x16")
    own, top = map_model(graph, target), map_model(graph, target, program="external")
    assert own.maps_external and top.maps_external
    assert memory_split(target).fits(own.memory.plane_depth, own.memory.dw_copies, own.memory.dw_depth)
    assert own.memory.plane_depth == top.memory.plane_depth and own.cycles == top.cycles


def test_a_run_of_layers_keeps_the_maps_between_them_on_chip_band_by_band():
    """MobileNetV1-0.25 (96 px) on systolic16x16 with 96 KiB of activation memory (with the shipped 160 KiB
    only its stem bands: the rest fits, the depthwise window memory keeping each word once): conv1 to sep2_dw
    run band by band together (fused-layer tiling); the maps between them never move through the port, each
    row reads the band the row before it wrote, and the bands' MACs add up to the network's. The run's last
    row writes its bands' rows of sep2_dw_relu6 on chip (Band.written_row). The 24x24 stage runs so too, in
    bands over all channels (no channel slices): sep2_pw to sep3_dw and sep3_pw to sep4_dw, each run's first
    row reading its input whole on chip, its window starting its band's rows down the map (a negative
    pad_top); no map but the image moves (measured: 62,936 cycles)."""
    graph = _architecture("mobilenet_v1")
    mapping = map_model(graph, target_with("systolic16x16", buffers__input__kib=96))
    _check_program(graph, mapping)
    moved = {row.move.tensor for row in mapping.layers if row.move is not None}
    runs = [row for row in mapping.layers if row.band is not None and mapping.placement(row.output).holds
            and row.output not in {r.move.buffer for r in mapping.layers if r.move is not None}]
    inner = {mapping.placement(row.output).holds for row in runs}
    assert {"conv1_relu6", "sep1_dw_relu6", "sep1_pw_relu6", "sep2_pw_relu6", "sep3_pw_relu6"} <= inner
    assert not inner & moved and moved == {"image"}
    assert not any(row.band.channels for row in mapping.layers if row.band is not None)
    for head, whole in (("sep2_pw_conv", "sep2_dw_relu6"), ("sep3_pw_conv", "sep3_dw_relu6")):
        bands = [row for row in mapping.layers if row.nodes[:1] == (head,)]
        assert len(bands) > 1 and {row.inputs for row in bands} == {(whole,)}
        assert {row.band.in_rows for row in bands} == {(0, 24)} and min(row.band.pad_top for row in bands) < 0
    first = [row.name for row in mapping.layers if row.unit != "dma"][:5]
    assert first == ["conv1_conv#0", "sep1_dw_conv#0", "sep1_pw_conv#0", "sep2_dw_conv#0", "conv1_conv#1"]
    last = [row for row in mapping.layers if row.nodes[:1] == ("sep2_dw_conv",)]
    assert len(last) > 1 and {row.output for row in last} == {"sep2_dw_relu6"} and "sep2_dw_relu6" not in moved
    assert [row.band.written_row for row in last] == [row.band.out_rows[0] for row in last]
    for row in runs:  # the next row of the run reads this band: the rows it reads are the rows written
        reader = next(r for r in mapping.layers if row.output in r.inputs)
        assert reader.band.in_rows == row.band.out_rows and reader.band.index == row.band.index
