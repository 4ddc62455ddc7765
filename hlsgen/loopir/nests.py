"""One LoopNest per mapped layer, built from the naive loop nest by the transformations.

Array layers start from `for group, pixel, out channel, reduction: acc += window * weight`; tiling by
the mapping's tiles, a reorder into the loop order of docs/hardware.md, localizing the tile buffers
(PE weights, window vector, accumulator), then directives: pipeline the pixel loop (weight-stationary) or
the reduction loop (output-stationary) at II=1 with the array rows and columns unrolled, partitions that
give every unrolled access its own bank, the window as a stream from the line buffer, and dataflow
between line buffer, array and requantizer. Vector-unit layers unroll the C lanes over channels.
"""
from __future__ import annotations

import math
from dataclasses import replace

from ..errors import MappingError
from ..hw.mapping import Mapping
from ..hw.rows import ARRAY, LayerMap
from ..hw.target import Target
from .ir import Access, Buffer, Call, E, Expr, Loop, LoopNest, Stmt
from .legality import check
from .transform import dataflow, localize, insert, partition, pipeline, reorder, stream, tile, unroll

WORD_BITS = 32  # an activation-memory port moves one 32-bit word (four 8-bit values)


def layer_nests(mapping: Mapping) -> dict[str, LoopNest]:
    """Layer name -> LoopNest, in execution order."""
    return {layer.name: layer_nest(layer, mapping.target) for layer in mapping.layers}


def checked_nests(mapping: Mapping) -> dict[str, LoopNest]:
    """layer_nests, after the legality check: a violation raises MappingError naming the layer."""
    nests = layer_nests(mapping)
    for name, nest in nests.items():
        problems = check(nest)
        if problems:
            raise MappingError(f"layer {name!r} ({nest.op}): {problems[0].split(': ', 1)[1]}")
    return nests


def layer_nest(layer: LayerMap, target: Target) -> LoopNest:
    if layer.unit == ARRAY:
        # the per-layer design reads windows from its own line buffers, not the banked activation memory:
        # none of its lanes are padded
        work = layer.tiles.work.unpadded()
        tiles = replace(layer.tiles, work=work, row_tile=min(layer.tiles.row_tile, work.reduction))
        layer = replace(layer, tiles=tiles)
        if target.array.dataflow == "output_stationary":
            return _output_stationary(layer, target)
        return _weight_stationary(layer, target)
    builder = {"pool": _pool, "global_pool": _global_pool, "elementwise": _elementwise, "resize": _resize,
               "copy": _copy}.get(layer.kind)
    if builder is None:
        return LoopNest(layer.name, layer.op, layer.unit, notes=("addressing only: the output aliases the input",))
    return builder(layer, target)


# ---- buffers ---------------------------------------------------------------------------------------
def fm_shape(shape: tuple[int, ...]) -> tuple[int, int]:
    """A feature map as [channel][pixel] (rows and columns flattened); Dense-shaped [N, K] as [K][N]."""
    return (int(shape[1]), int(shape[0]) * int(math.prod(shape[2:]))) if len(shape) >= 2 else (int(shape[0]), 1)


def _activation(name: str, shape, bits: int, tensor: str, target: Target) -> Buffer:
    b = target.buffers.input
    word = max(1, WORD_BITS // (8 * math.ceil(bits / 8)))
    return Buffer(name, fm_shape(shape), bits, "activation", b.banks, 2, word, f"tensor {tensor}")


def _bank_channels(nest: LoopNest, names, target: Target) -> LoopNest:
    for name in names:
        nest = partition(nest, name, 1, "cyclic", target.buffers.input.banks)
    return nest


def _guards(*pairs):
    return tuple((e, bound) for e, bound, step in pairs if bound % step)


# ---- systolic array --------------------------------------------------------------------------------
def _array_buffers(layer: LayerMap, target: Target, acc_memory: str, along: int):
    """x, y, weights, window (one value per `along` index: taps or pixels; per column too if depthwise), acc."""
    w, t = layer.tiles.work, layer.tiles
    b = target.buffers
    window = (along, w.out_channels) if w.depthwise else (along,)
    acc_banks = b.accumulator.banks if acc_memory == "accumulator" else 0
    return (
        _activation("x", layer.input_shape, layer.bits[0], layer.inputs[0], target),
        _activation("y", layer.output_shape, layer.bits[1], layer.output, target),
        Buffer("weights", (w.groups, w.reduction, w.out_channels), layer.bits[2], "weight", b.weight.banks, 2,
               max(1, WORD_BITS // 8), "ROM: [group][reduction][out channel]"),
        Buffer("window", window, layer.bits[0], "stream",
               note="per-column windows (depthwise)" if w.depthwise else "window vectors from the line buffer"),
        Buffer("acc", (w.pixels, w.out_channels), 32, acc_memory, acc_banks, 2, 1),
    ), t


def _source(layer: LayerMap, *args) -> Call:
    fn = "input_vector" if layer.kind == "dense" else "line_buffer"
    return Call(fn, ("x", *args))


def _weight_stationary(layer: LayerMap, target: Target) -> LoopNest:
    buffers, t = _array_buffers(layer, target, "accumulator", layer.tiles.work.reduction)
    w, (tk, tm, pt) = t.work, (t.row_tile, t.col_tile, t.spatial_tile)
    pe_w = Buffer("pe_w", (w.reduction, w.out_channels), layer.bits[2], "register", double_buffered=True,
                  note="PE weights; the shadow copy loads while the array streams")
    win = (E("k"), E("m")) if w.depthwise else (E("k"),)
    mac = Stmt(Access("acc", (E("p"), E("m"))), Call("*", (Access("window", win), Access("pe_w", (E("k"), E("m"))))), True)
    nest = LoopNest(layer.name, layer.op, layer.unit, buffers + (pe_w,),
                    (Loop("group", w.groups, (Loop("p", w.pixels, (Loop("m", w.out_channels, (Loop("k", w.reduction, (mac,)),)),)),)),),
                    notes=(f"{layer.kind}, weight-stationary: rows = reduction lanes, columns = output channels",
                           f"{_source(layer).fn}(x, group, first tap, pixel) yields the window of one output pixel",
                           "load overlaps the previous row tile's pixels (shadow weights); drain overlaps the last "
                           "row tile (sums requantized as they leave the array): neither adds cycles"))
    nest = tile(nest, {"p": pt, "m": tm, "k": tk},
                {"p": ("spatial", "pixel"), "m": ("col_tile", "col"), "k": ("row_tile", "row")})
    nest = reorder(nest, ["pixel", "row", "col"])
    nest = localize(localize(localize(nest, "acc", ("pixel", "col")), "pe_w", ("row", "col")),
                    "window", ("row", "col") if w.depthwise else ("row",))
    fill = Stmt(Access("window"), _source(layer, E("group"), E("row_tile") * tk, E("spatial") * pt + E("pixel")))
    nest = insert(nest, "pixel", fill, first=True)
    load = Loop("load", tk, (Loop("load_col", tm, (Stmt(
        Access("pe_w", (E("load"), E("load_col"))),
        Access("weights", (E("group"), E("row_tile") * tk + E("load"), E("col_tile") * tm + E("load_col")))),),
        _guards((E("col_tile") * tm + E("load_col"), w.out_channels, tm))),),
        _guards((E("row_tile") * tk + E("load"), w.reduction, tk)))
    nest = insert(nest, "row_tile", load, first=True)
    nest = insert(nest, "col_tile", _drain(layer, "drain", pt, tm, E("spatial") * pt))
    for loop in ("pixel", "load", "drain"):
        nest = pipeline(nest, loop, 1)
    for loop in ("row", "col", "load_col", "lane"):
        nest = unroll(nest, loop)
    return _array_partitions(nest, layer, target, ("pe_w", "window"), w.depthwise)


def _drain(layer: LayerMap, name: str, extent: int, tm: int, pixel_base) -> Loop:
    """Requantize one tile of partial sums into the output feature map."""
    w = layer.tiles.work
    channel = E("group") * w.out_channels + E("col_tile") * tm + E("lane")
    stmt = Stmt(Access("y", (channel, pixel_base + E(name))), Call("requant", (Access("acc", (E(name), E("lane"))),)))
    guards = _guards((E("col_tile") * tm + E("lane"), w.out_channels, tm))
    lane = Loop("lane", tm, (stmt,), guards + ((pixel_base + E(name), w.pixels),) if w.pixels % extent else guards)
    return Loop(name, extent, (lane,))


def _array_partitions(nest: LoopNest, layer: LayerMap, target: Target, registers, depthwise: bool) -> LoopNest:
    for name in registers:
        for dim in range(1, len(nest.buffer(name).shape) + 1):
            nest = partition(nest, name, dim, "complete")
    acc = nest.buffer("acc")
    if acc.banked:
        nest = partition(nest, "acc", 2, "cyclic", target.array.cols)
    nest = partition(nest, "weights", 3, "cyclic", target.buffers.weight.banks)
    nest = _bank_channels(nest, ("x", "y"), target)
    return dataflow(stream(nest, "window", 2))


def _output_stationary(layer: LayerMap, target: Target) -> LoopNest:
    buffers, t = _array_buffers(layer, target, "register", layer.tiles.work.pixels)
    w, R, tm = t.work, target.array.rows, t.col_tile
    win = (E("p"), E("m")) if w.depthwise else (E("p"),)  # the current tap k of pixel p
    mac = Stmt(Access("acc", (E("p"), E("m"))),
               Call("*", (Access("window", win), Access("weights", (E("group"), E("k"), E("m"))))), True)
    nest = LoopNest(layer.name, layer.op, layer.unit, buffers,
                    (Loop("group", w.groups, (Loop("p", w.pixels, (Loop("m", w.out_channels, (Loop("k", w.reduction, (mac,)),)),)),)),),
                    notes=(f"{layer.kind}, output-stationary: rows = output pixels, columns = output channels",
                           f"{_source(layer).fn}(x, group, tap, first pixel) yields one tap for R pixels"))
    nest = tile(nest, {"p": R, "m": tm}, {"p": ("pixel_tile", "row"), "m": ("col_tile", "col")})
    nest = reorder(nest, ["k", "row", "col"])
    keep = ("row", "col") if w.depthwise else ("row",)
    nest = localize(localize(nest, "acc", ("row", "col")), "window", keep)
    nest = insert(nest, "k", Stmt(Access("window"), _source(layer, E("group"), E("k"), E("pixel_tile") * R)), first=True)
    nest = insert(nest, "col_tile", _drain(layer, "drain", R, tm, E("pixel_tile") * R))
    for loop in ("k", "drain"):
        nest = pipeline(nest, loop, 1)
    for loop in ("row", "col", "lane"):
        nest = unroll(nest, loop)
    return _array_partitions(nest, layer, target, ("acc", "window"), w.depthwise)


# ---- vector unit -----------------------------------------------------------------------------------
def _elementwise(layer: LayerMap, target: Target) -> LoopNest:
    names = ("a", "b") if layer.op in ("QAdd", "QMul") else ("x",)
    bufs = tuple(_activation(n, shape, layer.bits[0], t, target)
                 for n, t, shape in zip(names, layer.inputs, layer.input_shapes))
    y = _activation("y", layer.output_shape, layer.bits[1], layer.output, target)
    channels, positions = y.shape
    fn = {"QAdd": "qadd", "QMul": "qmul", "QRequant": "requant", "QLut": "lut"}[layer.op]
    reads = tuple(Access(b.name, (E("c"), _pixel_of(b, positions))) for b in bufs)
    stmt = Stmt(Access("y", (E("c"), E("q"))), Call(fn, reads))
    nest = LoopNest(layer.name, layer.op, layer.unit, bufs + (y,), (Loop("c", channels, (Loop("q", positions, (stmt,)),)),),
                    notes=("elementwise on the vector unit: C lanes over channels, one word of pixels per lane",))
    word = min(y.word, positions)
    nest = tile(nest, {"c": target.array.cols, "q": word}, {"c": ("pass", "lane"), "q": ("q_word", "q_in")})
    ii = max(word, 2) if len(names) == 2 else word  # two reads and a write per lane on dual-port banks
    nest = pipeline(unroll(unroll(nest, "lane"), "q_in"), "q_word", ii)
    return _bank_channels(nest, names + ("y",), target)


def _pixel_of(buffer: Buffer, positions: int) -> Expr:
    """The pixel an elementwise op reads of an input: its own, or pixel 0 of a per-channel (broadcast) input."""
    return E("q") if buffer.shape[1] == positions else E(0)


def _pool(layer: LayerMap, target: Target) -> LoopNest:
    y = _activation("y", layer.output_shape, layer.bits[1], layer.output, target)
    x = _activation("x", layer.input_shape, layer.bits[0], layer.inputs[0], target)
    fn = "max_window" if layer.op == "MaxPool" else "average_window"
    stmt = Stmt(Access("y", (E("c"), E("q"))), Call(fn, (Call("line_buffer", ("x", E("c"), E("q"))),)))
    nest = LoopNest(layer.name, layer.op, layer.unit, (x, y), (Loop("c", y.shape[0], (Loop("q", y.shape[1], (stmt,)),)),),
                    notes=("windowed pool on the vector unit, windows from the line buffer",))
    nest = tile(nest, {"c": target.array.cols}, {"c": ("pass", "lane")})
    nest = reorder(nest, ["pass", "q", "lane"])
    nest = pipeline(unroll(nest, "lane"), "q", 1)
    return _bank_channels(nest, ("x", "y"), target)


def _global_pool(layer: LayerMap, target: Target) -> LoopNest:
    C = target.array.cols
    x = _activation("x", layer.input_shape, layer.bits[0], layer.inputs[0], target)
    y = _activation("y", layer.output_shape, layer.bits[1], layer.output, target)
    total = Buffer("total", (C,), 32, "register")
    fn = "max" if layer.op == "GlobalMaxPool" else "average"
    channel = E("pass") * C + E("lane")
    guard = _guards((channel, x.shape[0], C))
    read = Loop("q", x.shape[1], (Loop("lane", C, (Stmt(Access("total", (E("lane"),)),
                                                         Call(fn + "_step", (Access("x", (channel, E("q"))),)), True),), guard),))
    emit = Loop("emit", 1, (Loop("out_lane", C, (Stmt(Access("y", (E("pass") * C + E("out_lane"), E("emit"))),
                                                      Call(fn, (Access("total", (E("out_lane"),)),))),),
                                 _guards((E("pass") * C + E("out_lane"), x.shape[0], C))),))
    nest = LoopNest(layer.name, layer.op, layer.unit, (x, y, total),
                    (Loop("pass", math.ceil(x.shape[0] / C), (read, emit)),),
                    notes=("global pool on the vector unit: one running total per lane",))
    nest = partition(nest, "total", 1, "complete")
    nest = pipeline(pipeline(unroll(unroll(nest, "lane"), "out_lane"), "q", 1), "emit", 1)
    return _bank_channels(nest, ("x", "y"), target)


def _resize(layer: LayerMap, target: Target) -> LoopNest:
    """Nearest upsampling as an affine copy: input pixel i of every spatial axis a goes to output pixels
    i * s_a + j (j < s_a); the loops i_a, j_a nest in axis order, so the output is written in raster order."""
    C = target.array.cols
    x = _activation("x", layer.input_shape, layer.bits[0], layer.inputs[0], target)
    y = _activation("y", layer.output_shape, layer.bits[1], layer.output, target)
    in_sp, out_sp, scales = layer.input_shape[2:], layer.output_shape[2:], layer.attrs.scales
    src, dst = E("n") * math.prod(in_sp), E("n") * math.prod(out_sp)
    for a, s in enumerate(scales):
        src = src + E(f"i{a}") * math.prod(in_sp[a + 1:])
        dst = dst + (E(f"i{a}") * s + E(f"j{a}")) * math.prod(out_sp[a + 1:])
    channel = E("pass") * C + E("lane")
    body = (Loop("lane", C, (Stmt(Access("y", (channel, dst)), Access("x", (channel, src))),),
                 _guards((channel, x.shape[0], C))),)
    for a in reversed(range(len(scales))):
        body = (Loop(f"i{a}", in_sp[a], (Loop(f"j{a}", scales[a], body),)),)
    nest = LoopNest(layer.name, layer.op, layer.unit, (x, y),
                    (Loop("pass", math.ceil(x.shape[0] / C), (Loop("n", layer.input_shape[0], body),)),),
                    notes=("nearest upsampling on the vector unit: C lanes over channels, one output pixel per cycle",))
    nest = pipeline(unroll(nest, "lane"), f"j{len(scales) - 1}", 1)
    return _bank_channels(nest, ("x", "y"), target)


def _copy(layer: LayerMap, target: Target) -> LoopNest:
    C = target.array.cols
    count = layer.tiles.channels
    sources = tuple(_activation(f"x{i}", shape, layer.bits[0], t, target)
                    for i, (t, shape) in enumerate(zip(layer.inputs, layer.input_shapes)))
    y = _activation("y", layer.output_shape, layer.bits[1], layer.output, target)
    element = E("beat") * C + E("lane")
    stmt = Stmt(Access("y"), Call(layer.op.lower(), tuple(b.name for b in sources) + (element,)))
    body = (Loop("beat", math.ceil(count / C), (Loop("lane", C, (stmt,), _guards((element, count, C))),)),)
    nest = LoopNest(layer.name, layer.op, layer.unit, sources + (y,), body,
                    notes=("copy engine: C output elements per beat, addressed by the sequencer",))
    return pipeline(unroll(nest, "lane"), "beat", 1)
