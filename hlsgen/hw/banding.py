"""Feature maps in external memory: which maps the activation memory cannot hold, and the bands the rows
that read or write them run in (docs/program.md, "Feature maps in external memory").

- Every map stays on chip while every row's live maps fit `buffers.input` (small models keep their speed).
- Otherwise maps go to external memory one at a time, the largest map live at the first row that does not
  fit, until every row fits. A row with an external operand runs in bands of output rows: before a band,
  `load` rows copy the rows of its external inputs the band reads (with the kernel's halo) into on-chip
  band buffers; after it, a `store` row copies its output band out. The engines wait for the copies (no
  overlap in this version; the cycle model charges each copy, hlsgen.hw.cycles.dma_cycles).
- A row in more than one band has all its operands external (a band reads and writes only buffers).
- A row that is not split by rows (a Dense, a global pool, a copy, a 1-D map, a batch) runs as one band
  that moves its external operands whole.
Graph outputs stay on chip (they stream out); maps wider than 8 bits stay on chip (a word is R bytes).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..errors import MappingError
from . import cycles as cyc
from .mapping import ARRAY, DMA, Band, BufferUse, LayerMap, Move, Transfer, tensor_bytes
from .placement import Memory, map_shape
from .target import Target
from .tiling import ACC_BYTES, search_tiles

SPLIT_KINDS = ("conv", "grouped_conv", "depthwise", "pool", "elementwise", "resize")


@dataclass(frozen=True)
class RowGeometry:
    """How a row's output rows read its input rows along the height."""

    height_in: int
    height_out: int  # after a fused MaxPool
    kernel: int = 1
    stride: int = 1
    dilation: int = 1
    pad: int = 0
    pool: int = 1  # a fused MaxPool's window (= stride) along the height
    up: int = 1  # a Resize's upsampling along the height
    splits: bool = True

    def band(self, y0: int, y1: int) -> tuple[int, int, int, int]:
        """(a, b, pad_top, rows_computed): the input rows [a, b) output rows [y0, y1) read."""
        if not self.splits:
            return 0, self.height_in, self.pad, (y1 - y0) * self.pool
        first, last = y0 * self.pool, y1 * self.pool
        if self.up > 1:
            return first // self.up, (last - 1) // self.up + 1, 0, last - first
        a = min(max(0, first * self.stride - self.pad), self.height_in - 1)
        b = min(self.height_in, (last - 1) * self.stride - self.pad + (self.kernel - 1) * self.dilation + 1)
        return a, max(b, a + 1), self.pad + a - first * self.stride, last - first

    def bands(self, height: int) -> list[tuple[int, int]]:
        """Output rows [y0, y1) of bands of `height` rows (the last one shorter)."""
        if not self.splits:
            return [(0, self.height_out)]
        return [(y0, min(y0 + height, self.height_out)) for y0 in range(0, self.height_out, height)]


def row_geometry(graph, layer: LayerMap) -> RowGeometry:
    node = graph.nodes[layer.nodes[0]]
    x = map_shape(layer.input_shapes[0] if layer.input_shapes else layer.input_shape)
    out = map_shape(layer.output_shape)
    pool = layer.pool[0] if layer.pool else 1
    whole = RowGeometry(x[1], out[1], pool=pool, splits=False)
    if (layer.kind not in SPLIT_KINDS or out[1] < 2 or int(layer.output_shape[0]) != 1
            or len(layer.output_shape) != 4 or any(tuple(s) != tuple(layer.input_shapes[0])
                                                   for s in layer.input_shapes[1:])):
        return replace(whole, pad=_pads(node)[0]) if layer.kind in SPLIT_KINDS and len(layer.input_shape) == 4 else whole
    if layer.kind == "resize":
        scales = node.attrs.scales
        return RowGeometry(x[1], out[1], pool=pool, up=int(scales[0]) if len(scales) == 2 else 1)
    if layer.kind == "elementwise":
        return RowGeometry(x[1], out[1], pool=pool)
    a = node.attrs.conv if layer.unit == ARRAY else (node.attrs if node.op == "MaxPool" else node.attrs.pool)
    return RowGeometry(x[1], out[1], int(a.kernel_shape[0]), int(a.strides[0]), int(a.dilations[0]), _pads(node)[0],
                       pool)


def _pads(node) -> tuple[int, ...]:
    a = getattr(node.attrs, "conv", None) or getattr(node.attrs, "pool", None) or node.attrs
    return tuple(getattr(a, "pads", (0,))) or (0,)


class _Planner:
    """Decides the external maps and every row's band height (module docstring)."""

    def __init__(self, graph, layers: list[LayerMap], target: Target):
        self.graph, self.layers, self.target = graph, layers, target
        self.capacity = target.buffers.input.bytes
        root = {t: t for t in graph.inputs}
        self.birth = {t: -1 for t in graph.inputs}
        self.death = {t: -1 for t in graph.inputs}
        self.operands: list[tuple[list[str], str | None]] = []
        for i, layer in enumerate(layers):
            if layer.kind == "reshape":
                root[layer.output] = root[layer.inputs[0]]
                self.operands.append(([], None))
                continue
            ins = [root[t] for t in layer.inputs]
            for t in ins:
                self.death[t] = max(self.death[t], i)
            root[layer.output] = layer.output
            self.birth[layer.output] = self.death[layer.output] = i
            self.operands.append((ins, layer.output))
        self.outputs = {root[t] for t in graph.outputs}
        for t in self.outputs:
            self.death[t] = len(layers)
        self.root = root
        self.size = {t: tensor_bytes(graph, t) for t in self.birth}
        self.external: set[str] = set()
        self.heights: dict[int, int] = {}

    def alive(self, i: int) -> list[str]:
        return [t for t in self.birth if self.birth[t] <= i <= self.death[t]]

    def resident(self, i: int) -> int:
        return sum(self.size[t] for t in self.alive(i) if t not in self.external)

    def plan(self) -> None:
        while not self._fits():
            pass

    def _fits(self) -> bool:
        """One pass over the rows; False after moving a map out (start again)."""
        self.heights = {}
        for i, layer in enumerate(self.layers):
            ins, out = self.operands[i]
            if out is None:
                continue
            operands = {*ins, out}
            space = self.capacity - self.resident(i)
            if not operands & self.external:
                if space >= 0:
                    continue
                self._move_out(i, layer)
                return False
            height = self._height(i, space)
            if height is None:
                self._move_out(i, layer)
                return False
            if len(row_geometry(self.graph, layer).bands(height)) > 1 and operands - self.external:
                self.external |= operands - self.outputs
                if operands & self.outputs:
                    self._fail(layer, "a model output is one of its operands (model outputs stay on chip)")
                return False
            self.heights[i] = height
        return True

    def _move_out(self, i: int, layer: LayerMap) -> None:
        candidates = [t for t in self.alive(i) if t not in self.external and t not in self.outputs
                      and getattr(self.graph.quant.get(t), "bits", 8) <= 8]
        if not candidates:
            self._fail(layer, f"its live feature maps need {self.resident(i):,} bytes on chip even with every other "
                              "map in external memory")
        self.external.add(max(candidates, key=lambda t: (self.size[t], t)))

    def _fail(self, layer: LayerMap, why: str):
        raise MappingError(f"{self.graph.describe(layer.nodes[0])}: does not fit the activation memory "
                           f"(buffers.input = {self.target.buffers.input.kib} KiB): {why}")

    def _height(self, i: int, space: int) -> int | None:
        """The tallest band whose buffers fit `space` bytes, or None."""
        g = row_geometry(self.graph, self.layers[i])
        if not g.splits:
            return g.height_out if self.buffer_bytes(i, g, g.height_out) <= space else None
        lo, hi = 0, g.height_out
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.buffer_bytes(i, g, mid) <= space:
                lo = mid
            else:
                hi = mid - 1
        return lo or None

    def buffer_bytes(self, i: int, g: RowGeometry, height: int) -> int:
        """The largest band's buffers for the external operands of row i."""
        ins, out = self.operands[i]
        worst = 0
        for y0, y1 in g.bands(height):
            a, b, _, _ = g.band(y0, y1)
            used = sum(self.size[t] * (b - a) // max(map_shape(self.graph.shape(t))[1], 1)
                       for t in ins if t in self.external and g.splits)
            used += sum(self.size[t] for t in ins if t in self.external and not g.splits)
            if out in self.external:
                used += self.size[out] * (y1 - y0) // g.height_out
            worst = max(worst, used)
        return worst


def band_rows(graph, layers: list[LayerMap], target: Target) -> list[LayerMap]:
    """The program's rows with every row that reads or writes an external map split into bands and its
    copies (`dma` rows whose moves `finish_moves` completes once the maps are placed)."""
    planner = _Planner(graph, layers, target)
    if target.external_memory is None:
        for i, layer in enumerate(layers):
            if planner.resident(i) > planner.capacity:
                planner._fail(layer, f"its live feature maps need {planner.resident(i):,} bytes "
                                     f"({', '.join(planner.alive(i))}), and the target has no external_memory")
    planner.plan()
    rows: list[LayerMap] = []
    for i, layer in enumerate(layers):
        used = BufferUse("activation", planner.resident(i), planner.capacity)
        live = tuple(t for t in planner.alive(i) if t not in planner.external)
        if i not in planner.heights:
            rows.append(replace(layer, buffers=(used, *layer.buffers[1:]), live=live))
            continue
        g = row_geometry(graph, layer)
        bands = g.bands(planner.heights[i])
        for j, (y0, y1) in enumerate(bands):
            a, b, pad_top, computed = g.band(y0, y1)
            band = Band(j, len(bands), (y0, y1), (a, b), pad_top, computed)
            rows += _band(graph, planner, layer, g, band, used, live, target)
    return rows


def _band(graph, planner: _Planner, layer: LayerMap, g: RowGeometry, band: Band, used: BufferUse,
          live: tuple[str, ...], target: Target) -> list[LayerMap]:
    name = f"{layer.name}#{band.index}" if band.count > 1 else layer.name
    loads, inputs, shapes = [], [], []
    for k, (t, shape) in enumerate(zip(layer.inputs, layer.input_shapes or (layer.input_shape,))):
        stored = planner.root[t]
        if stored not in planner.external:
            inputs.append(t)
            shapes.append(tuple(shape))
            continue
        buffer = f"{name}.in{k}"
        rows = band.in_rows if g.splits else (0, map_shape(graph.shape(stored))[1])
        loads.append(_dma("load", stored, buffer, rows, graph, used, live))
        inputs.append(buffer)
        shapes.append(_rows_of(tuple(shape), rows) if g.splits else tuple(shape))
    output, stores = layer.output, []
    if layer.output in planner.external:
        output = f"{name}.out"
        stores.append(_dma("store", layer.output, output, band.out_rows, graph, used, live))
    out_shape = _rows_of(tuple(layer.output_shape), band.out_rows) if g.splits else tuple(layer.output_shape)
    buffers = (used, *layer.buffers[1:])
    compute = replace(layer, name=name, inputs=tuple(inputs), output=output, input_shapes=tuple(shapes),
                      input_shape=shapes[0], output_shape=out_shape, band=band, buffers=buffers,
                      live=(*live, *(r.output for r in loads), *([output] if stores else [])))
    if g.splits:
        compute = _resized(graph, compute, layer, band, target)
    return [*loads, compute, *stores]


def _rows_of(shape: tuple[int, ...], rows: tuple[int, int]) -> tuple[int, ...]:
    return (*shape[:2], rows[1] - rows[0], *shape[3:])


def _resized(graph, band_row: LayerMap, layer: LayerMap, band: Band, target: Target) -> LayerMap:
    """The band's tiles, MACs and cycles: the layer's, over the band's rows."""
    node = graph.nodes[layer.nodes[0]]
    computed = map_shape(graph.shape(node.outputs[0]))[1]  # rows the whole layer computes (before a pool)
    if layer.unit == ARRAY:
        work = layer.tiles.work
        pixels = work.pixels // computed * band.rows_computed
        tiles = search_tiles(replace(work, pixels=pixels), target)
        acc = BufferUse("accumulator", tiles.spatial_tile * target.array.cols * ACC_BYTES,
                        target.buffers.accumulator.bytes)
        buffers = tuple(acc if b.name == "accumulator" else b for b in band_row.buffers)
        return replace(band_row, tiles=tiles, cycles=tiles.cycles(target.array.rows, target.array.cols),
                       macs=layer.macs // work.pixels * pixels, buffers=buffers)
    t = layer.tiles
    per_row = t.positions // (map_shape(layer.output_shape)[1] if layer.kind == "pool" else computed)
    rows = band.out_rows[1] - band.out_rows[0] if layer.kind == "pool" else band.rows_computed
    tiles = replace(t, positions=per_row * rows)
    if layer.kind == "pool":
        a = node.attrs if node.op == "MaxPool" else node.attrs.pool
        cycles = cyc.window_pool_cycles(tiles.passes, tiles.positions, math.prod(a.kernel_shape))
    else:
        cycles = cyc.vector_cycles(tiles.passes, tiles.positions)
    return replace(band_row, tiles=tiles, cycles=cycles)


def _dma(direction: str, tensor: str, buffer: str, rows: tuple[int, int], graph, used: BufferUse,
         live: tuple[str, ...]) -> LayerMap:
    """A copy row; its words, addresses and cycles wait for the placement (finish_moves)."""
    shape = _rows_of(tuple(graph.shape(tensor)), rows) if len(graph.shape(tensor)) == 4 else tuple(graph.shape(tensor))
    bits = getattr(graph.quant.get(tensor), "bits", 8)
    move = Move(direction, tensor, buffer, rows, 0, 0, 0, 0, 0)
    src, dst = (tensor, buffer) if direction == "load" else (buffer, tensor)
    return LayerMap(f"{direction}:{buffer}", direction.capitalize(), DMA, direction, (src,), dst, shape, shape, 0, 0,
                    None, (used,), live=live, bits=(bits, bits, 0), input_shapes=(shape,), move=move)


def finish_moves(rows: list[LayerMap], memory: Memory, target: Target) -> list[LayerMap]:
    """Every dma row's words and addresses (from the placement) and its cycles."""
    port, R = target.external_memory, target.array.rows
    done = []
    for row in rows:
        if row.move is None:
            done.append(row)
            continue
        m, fmap, buffer = row.move, memory.placement(row.move.tensor), memory.placement(row.move.buffer)
        move = replace(m, segments=fmap.words // fmap.pixels, segment_words=buffer.pixels,
                       dram_word=fmap.dram_base + m.rows[0] * fmap.width, dram_stride=fmap.pixels,
                       buffer_stride=buffer.pixels)
        nbytes = move.words * R
        cycles = cyc.dma_cycles(port.transfer_cycles(nbytes), port.read_latency)
        done.append(replace(row, move=move, cycles=cycles,
                            transfers=(Transfer("feature_maps", "read" if m.direction == "load" else "write", nbytes),)))
    return done
