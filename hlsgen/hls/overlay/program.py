"""The overlay's program table and ROM contents, read off the layer program (hlsgen.hw.Mapping).

Nothing here decides a schedule: units, tiles, MaxPool fusion, feature-map placement and weight widths all
come from the mapping. This module only spells them as the C++ rows and ROMs the hand-written units
(templates/hls/overlay/units.h.j2) walk, in the RTL's order: array rows reduce over k = tap * C_pad + c_in
(input channel fastest, C_pad the row's `reduction_channels`; depthwise: k = tap, a channel per column),
tiles go spatial > column > row, and lane r of the array reads bank r of the activation memory.
Feature maps in external memory: `dma` rows become DMA-unit rows (a move between the feature-map image and
a band buffer), and a band of a layer takes its geometry from the row (its buffers' heights, the band's
rows computed and top padding) while sharing its node's weights, parameters and tables with the other bands.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...errors import MappingError, UnsupportedModelError, UnsupportedOp, UnsupportedOpsError
from ...hw.groups import chunk_weights
from ...hw.placement import map_shape
from ...hw.rows import written_dw_offset, written_offset
from ...ir import Graph, Node
from ...ops.pool import pool_windows
from ...ops.resize import first_row_repeat, interpolation_fields, resize_edge_pads
from .roms import BitStream
from .tokens import DMA_QUEUE, ENGINES, Queues, queues

ARRAY, VECTOR, DMA = 0, 1, 2
(OP_MAC, OP_ADD, OP_REQ, OP_LUT, OP_GAVG, OP_GMAX, OP_MAXPOOL, OP_AVGPOOL, OP_RESIZE, OP_COPY,
 OP_LOAD, OP_STORE, OP_MUL, OP_LERP, OP_PICK) = range(15)
NO_SLOT = 3  # a copy segment's output coordinate fed by no source coordinate (it is 0)

# The fields of one program row (C++ `struct Row`, every field an int), with what each means.
ROW_FIELDS = (
    ("unit", "0 systolic array, 1 vector unit, 2 feature-map DMA"),
    ("op", "OP_* of the unit"),
    ("in_plane", "input map: plane"), ("in_base", "base address"), ("in_lg", "log2 of its channel banks"),
    ("in_c", "channels"), ("in_h", "height"), ("in_w", "width"),
    ("in_zp", "zero point (QLut: the table's first input)"),
    ("b_plane", "second input (QAdd, QMul): plane"), ("b_base", "base address"), ("b_lg", "log2 of its banks"),
    ("b_zp", "zero point"), ("b_one", "one pixel per channel (a QMul's gate), read at pixel 0 of its channel"),
    ("dw", "array: depthwise mode (reads the depthwise window memory)"), ("dw_base", "input's window address"),
    ("dw_stride", "its window words between channel blocks"), ("dw_pitch", "its window row pitch"),
    ("out_h", "rows computed (before a fused pool)"), ("out_w", "columns computed"), ("pixels", "out_h * out_w"),
    ("sy", "stride"), ("sx", "stride"), ("pad_t", "padding above"), ("pad_l", "padding left"),
    ("kh", "window"), ("kw", "window"), ("dil_y", "dilation"), ("dil_x", "dilation"),
    ("uy", "Resize: upsampling"), ("ux", "Resize: upsampling"),
    ("ky0", "Resize: the first output row's repeat of its source row (a band may start inside one; negative: "
            "edge rows before the map)"),
    ("kx0", "Resize: the first column's repeat of its source column (negative: edge columns before the map)"),
    ("ly_num", "interpolation: source rows per output row, times ly_den"), ("ly_den", "its denominator"),
    ("ly_off", "the first output row's source row times ly_den, in [-ly_den, ly_den) (negative: above the map)"),
    ("lx_num", "interpolation: source columns per output column, times lx_den"), ("lx_den", "its denominator"),
    ("lx_off", "the first output column's source column times lx_den"),
    ("tr", "array: row tiles"), ("tc", "array: column tiles"), ("ts", "array: spatial tiles"),
    ("pt", "array: pixels per spatial tile"), ("passes", "vector: channel blocks of C lanes"),
    ("acc", "global pool: carry on the totals of the row before (a band of the same channels, earlier rows)"),
    ("w_bit", "array: first bit of its weights in the weight ROM"), ("wbits", "array: weight width"),
    ("tap_base", "array: first tap-table word"), ("par_base", "array: first parameter word"),
    ("lut_base", "QLut: first table entry"), ("aux_base", "average pool: first window count"),
    ("div_base", "average pool: first divisor"),
    ("neg", "array: a negative multiplier applies (fused LeakyRelu)"),
    ("ma", "multiplier"), ("mb", "second multiplier"), ("shift", "shift"), ("zp", "output zero point"),
    ("lo", "saturation low"), ("hi", "saturation high"),
    ("o_plane", "written map: plane"), ("o_base", "base address"), ("o_lg", "log2 of its banks"),
    ("o_h", "height"), ("o_w", "width"), ("o_channels", "channels"),
    ("o_blk", "words between its channel blocks (a batch's map: its N images' H x W)"),
    ("o_img", "words between the images of a batch's map a head row writes, one image a run (0: none)"),
    ("o_dw", "also written to the depthwise window memory"), ("o_dw_base", "its window address"),
    ("o_dw_stride", "its window words between channel blocks"), ("o_dw_pitch", "its window row pitch"),
    ("pool", "a MaxPool runs in the writer"), ("pool_kh", "its window (= stride)"), ("pool_kw", "its window"),
    ("seg_base", "copy: first segment"), ("seg_count", "copy: segments"),
    ("fill", "copy: the output is first filled with `zp` (Pad)"),
    ("d_word", "dma: first feature-map image word"), ("d_stride", "dma: image words between channel blocks"),
    ("d_segments", "dma: channel blocks"), ("d_words", "dma: words per channel block"),
    ("d_bstride", "dma: buffer words between channel blocks"), ("d_signed", "dma: a load sign-extends the bytes"),
    ("wait", "rows of the other queue that finish before it starts (tokens.py)"),
    ("signal", "when it finishes, send the other queue a token"),
)
# A copy segment: a source map (plane, base, lg, channels, height, width) and, per output coordinate
# (c, y, x), the source coordinate it takes (0 c, 1 y, 2 x, NO_SLOT none) times a step, plus an offset.
SEGMENT_FIELDS = ("plane", "base", "lg", "channels", "height", "width", "sel_c", "sel_y", "sel_x",
                  "off_c", "off_y", "off_x", "step_y", "step_x")
# blk: words between channel blocks; img: words between the images of a batch's map (0: one image)
PLACE_FIELDS = ("plane", "base", "lg", "channels", "height", "width", "dw", "dw_base", "blk", "img", "dw_stride",
                "dw_pitch")


@dataclass(frozen=True)
class Row:
    name: str  # the layer program's row name ("conv1+pool1" for a fused MaxPool)
    output: str  # the graph tensor it writes whole on chip (what an HLSGEN_TRACE build logs), or ""
    values: tuple[int, ...]  # in ROW_FIELDS order


@dataclass(frozen=True)
class Port:
    tensor: str
    place: tuple[int, ...]  # in PLACE_FIELDS order
    count: int


@dataclass(frozen=True)
class OverlayProgram:
    rows: tuple[Row, ...]
    inputs: tuple[Port, ...]  # streamed in
    outputs: tuple[Port, ...]
    dram_inputs: tuple[Port, ...]  # in the feature-map image, written by the host (place: its image word)
    weight_words: tuple[int, ...]  # 64-bit words, weights at each layer's width, spare words at the end
    weight_bits: int  # bits the weights occupy (before the last word's padding and the spare words)
    taps: tuple[tuple[tuple[int, int, int, int], ...], ...]  # per row tile: R lanes of (valid, dy, dx, offset)
    params: tuple[tuple[tuple[int, int, int, int], ...], ...]  # per column tile: C of (bias, mult, neg mult, shift)
    lut: tuple[int, ...]
    aux: tuple[int, ...]  # average pools: every output pixel's window count
    divisors: tuple[tuple[int, int], ...]  # average pools: (multiplier, shift) by count
    segments: tuple[tuple[int, ...], ...]  # copies, in SEGMENT_FIELDS order
    act_bits: int  # activation memory word (signed)
    weight_max_bits: int  # PE weight registers
    acc_depth: int  # pixels per column of the accumulators (the largest spatial tile)
    pool_tiles: int  # column tiles a fused pool keeps running maxima for
    pool_depth: int  # words of the fused pool's row buffer
    row_words: int  # weight ROM words one PE row's weights can span
    tokens: Queues  # the two queues' token traffic (tokens.py); its per-row waits and signals are in `rows`
    images: int = 1  # per call (--batch, hlsgen.hw.batching): rows[:head] run once per image, the rest once
    head: int = 0  # the first row of the batched tail (rows: none)


def build_program(graph: Graph, mapping) -> OverlayProgram:
    return _Builder(graph, mapping).run()


class _Builder:
    def __init__(self, graph: Graph, mapping):
        self.graph, self.mapping = graph, mapping
        self.R, self.C = mapping.target.array.rows, mapping.target.array.cols
        self.weights = BitStream()
        self.taps: list[tuple] = []
        self.params: list[tuple] = []
        self.lut: list[int] = []
        self.aux: list[int] = []
        self.divisors: list[tuple[int, int]] = []
        self.segments: list[tuple[int, ...]] = []
        self.shared: dict = {}  # per graph node (and input geometry): ROM entries its bands share

    def run(self) -> OverlayProgram:
        if self.mapping.target.array.dataflow != "weight_stationary":
            raise UnsupportedModelError(f"the overlay's array is weight-stationary; target "
                                        f"{self.mapping.target.name} is {self.mapping.target.array.dataflow}")
        if self.R != self.C:
            raise MappingError(f"the overlay's vector lanes read the array's banks one to one: it needs a square "
                               f"array, not {self.R} x {self.C}")
        rows, problems, queued = [], [], []  # queued: per layer row on a queue, (queue, wait, C++ rows)
        batching, head = self.mapping.batching, None
        for i, layer in enumerate(self.mapping.layers):
            if batching is not None and i == batching.tail:
                head = len(rows)
            if layer.unit == "none":  # a Reshape: its output is an alias of its input's map
                continue
            first = len(rows)
            self._layer(layer, rows, problems)
            queued.append((DMA_QUEUE if layer.unit == "dma" else ENGINES, layer.wait, len(rows) - first))
        if problems:
            raise UnsupportedOpsError(problems)
        q = queues(queued)
        at = {name: i for i, (name, _) in enumerate(ROW_FIELDS)}

        def synchronised(row: Row, wait: int, signal: int) -> Row:
            values = list(row.values)
            values[at["wait"]], values[at["signal"]] = wait, signal
            return Row(row.name, row.output, tuple(values))

        rows = [synchronised(*r) for r in zip(rows, q.waits, q.signals)]
        place = self.mapping.placement
        act_bits = max([2] + [m.quant.bits + (0 if m.quant.signed else 1) for m in self.mapping.memory.maps])
        array_rows = [layer for layer in self.mapping.layers if layer.unit == "systolic_array"]
        pooled = [dict(zip((n for n, _ in ROW_FIELDS), r.values)) for r in rows]
        pooled = [f for f in pooled if f["pool"]]
        wmax = max([2] + [layer.weight_bits for layer in array_rows])
        dram = [t for t in self.graph.inputs if place(t).dram_base is not None]
        return OverlayProgram(
            tuple(rows), tuple(self._port(t) for t in self.graph.inputs if t not in dram),
            tuple(self._port(t) for t in self.graph.outputs), tuple(self._port(t) for t in dram),
            tuple(self.weights.words(self._row_words(wmax))), self.weights.bits, tuple(self.taps), tuple(self.params),
            tuple(self.lut), tuple(self.aux), tuple(self.divisors), tuple(self.segments), act_bits, wmax,
            max([1] + [layer.tiles.spatial_tile for layer in array_rows]),
            max([1] + [max(f["tc"], f["passes"]) for f in pooled]),
            max([1] + [max(f["tc"], f["passes"]) * f["o_w"] for f in pooled]), self._row_words(wmax), q,
            self.mapping.images, len(rows) if head is None else head)

    def _layer(self, layer, rows: list[Row], problems: list[UnsupportedOp]) -> None:
        """Append the C++ rows of one layer program row (its wait and signal 0 until run() sets them)."""
        if layer.unit == "dma":
            values = self._dma(layer)
            rows.append(Row(layer.name, "", tuple(values[name] for name, _ in ROW_FIELDS)))
            return
        node = self.graph.nodes[layer.nodes[0]]
        if layer.kind == "grouped_conv":  # a row per chunk of groups (hlsgen.hw.groups), each a part of the map
            rows.extend(Row(layer.name, "", tuple(self._array(layer, node, i)[name] for name, _ in ROW_FIELDS))
                        for i in range(layer.tiles.work.groups))
            return
        try:
            values = self._array(layer, node) if layer.unit == "systolic_array" else self._vector(layer, node)
        except MappingError as exc:
            raise MappingError(f"{self.graph.describe(node.name)}: {exc}") from None
        except UnsupportedModelError as exc:  # a form of the op the overlay's units do not implement
            onnx_name, op_type, opset = self.graph.origin(node.name) or (node.name, "a layer hlsgen made", 0)
            problems.append(UnsupportedOp(onnx_name, op_type, opset, f"the HLS overlay cannot run it: {exc}"))
            return
        rows.append(Row(layer.name, layer.output if self._whole(layer) else "",
                        tuple(values[name] for name, _ in ROW_FIELDS)))

    def _whole(self, layer) -> bool:
        """Whether the row computes a whole graph tensor on chip (not a band into a buffer map, nor a batch's
        map, which holds N images)."""
        return (layer.band is None or layer.band.count == 1) and layer.output in self.graph.quant and \
            self.mapping.placement(layer.output).images == 1

    def _row_words(self, wmax: int) -> int:
        """64-bit words a row of C weights can touch: C * wmax bits starting anywhere in a word."""
        return math.ceil(self.C * wmax / 64) + 1

    def _port(self, tensor: str) -> Port:
        m = self.mapping.placement(tensor)
        return Port(tensor, self._place(m), int(np.prod(self.graph.shape(tensor))))

    @staticmethod
    def _place(m) -> tuple[int, ...]:
        """A port's map: a batch's, one image at a time (image n `img` words on)."""
        base = m.base if m.dram_base is None else m.dram_base
        return (m.plane, base, m.lg, m.channels, m.image_height, m.width, int(m.dw_read), m.dw_base, m.pixels,
                m.image_height * m.width if m.images > 1 else 0, m.dw_stride, m.dw_pitch)

    def _row(self, layer) -> dict[str, int]:
        """Every field 0, then the writer's: the map the row writes (a head row writes one image of a batch's
        map a run: the top moves o_base by o_img words per image)."""
        f = {name: 0 for name, _ in ROW_FIELDS}
        out = self.mapping.placement(layer.output)
        kh, kw = layer.pool or (1, 1)
        one = out.images > 1 and layer.images == 1
        first = written_offset(layer, out)
        f.update(o_plane=out.plane, o_base=out.base + first, o_lg=out.lg, o_h=out.image_height if one else out.height,
                 o_w=out.width, o_blk=out.pixels, o_img=out.image_height * out.width if one else 0,
                 o_channels=out.channels, o_dw=int(out.dw_read), o_dw_base=out.dw_base + written_dw_offset(layer, out),
                 o_dw_stride=out.dw_stride, o_dw_pitch=out.dw_pitch, pool=int(layer.pool is not None), pool_kh=kh,
                 pool_kw=kw)
        return f

    def _gate(self, f: dict, x, tensor: str) -> int:
        """A QMul's second input: 1 when it is one pixel per channel (read at pixel 0), 0 when x's shape."""
        b = self._input(f, tensor, "b")
        one = b.height * b.width == 1
        if b.channels != x.channels or not one and (b.height, b.width) != (x.height, x.width) or b.plane == x.plane:
            raise UnsupportedModelError("a QMul of maps of different shapes (other than by one value per channel), "
                                        "or of two maps in one activation plane, does not run on the overlay's "
                                        "vector unit")
        return int(one)

    def _input(self, f: dict, tensor: str, prefix: str = "in") -> object:
        m = self.mapping.placement(tensor)
        f.update({f"{prefix}_plane": m.plane, f"{prefix}_base": m.base, f"{prefix}_lg": m.lg})
        if prefix == "in":
            f.update(in_c=m.channels, in_h=m.height, in_w=m.width, dw_base=m.dw_base, dw_stride=m.dw_stride,
                     dw_pitch=m.dw_pitch)
        return m

    def _dma(self, layer) -> dict[str, int]:
        """A feature-map transfer between the image in external memory and an on-chip buffer map: a load
        writes the buffer as the writer would (o_* fields, depthwise window memory included), a store reads it
        (in_* fields); either way a burst of d_words image words per channel block. The mapping keeps maps
        wider than a byte on chip and gives a buffer its external map's banks (hlsgen.hw.banding)."""
        move = layer.move
        tensor, buffer = self.mapping.placement(move.tensor), self.mapping.placement(move.buffer)
        load = move.direction == "load"
        f = {name: 0 for name, _ in ROW_FIELDS}
        if load:
            f.update(o_plane=buffer.plane, o_base=buffer.base, o_lg=buffer.lg, o_h=buffer.height, o_w=buffer.width,
                     o_blk=buffer.pixels,
                     o_channels=buffer.channels, o_dw=int(buffer.dw_read), o_dw_base=buffer.dw_base,
                     o_dw_stride=buffer.dw_stride, o_dw_pitch=buffer.dw_pitch)
        else:
            f.update(in_plane=buffer.plane, in_base=buffer.base, in_lg=buffer.lg, in_c=buffer.channels,
                     in_h=buffer.height, in_w=buffer.width)
        f.update(unit=DMA, op=OP_LOAD if load else OP_STORE, d_word=move.dram_word, d_stride=move.dram_stride,
                 d_segments=move.segments, d_words=move.segment_words, d_bstride=move.buffer_stride,
                 d_signed=int(tensor.quant.signed))
        return f

    # ---- systolic array rows -----------------------------------------------------------------------
    def _array(self, layer, node: Node, chunk: int = 0) -> dict[str, int]:
        """An array row; a grouped conv's chunk `chunk` of groups: an ordinary conv from its input channels (c0
        on, a multiple of R) to its output channels (m0 on: the writer's base moves to their slot)."""
        R, C = self.R, self.C
        f = self._row(layer)
        x = self._input(f, layer.inputs[0])
        depthwise = layer.kind == "depthwise"
        c_pad = layer.tiles.work.reduction_channels  # lanes per tap, the program's; zero weights past C_in
        first_in = chunk * layer.tiles.work.channels  # a chunk's first input channel
        if node.op == "QConv":
            kernel, strides, dil, pads = _geometry(node.attrs.conv)
            out_c, out_h, out_w = map_shape(self.graph.shape(node.outputs[0]))
            if layer.kind == "grouped_conv":
                out_c = layer.tiles.work.out_channels
                m0 = chunk * out_c
                out = self.mapping.placement(layer.output)
                slot = (m0 >> out.lg) * out.pixels + written_offset(layer, out)
                dw_slot = (m0 >> out.lg) * out.dw_stride + written_dw_offset(layer, out)
                f.update(o_base=out.base + slot, o_dw_base=out.dw_base + dw_slot, o_channels=out_c)
        else:  # Dense: a window the size of the map; x flattened [c][y][x], lane order k = (y * W + x) * C_pad + c
            # (a batch's: its N images stacked, one output row per image, the window H rows down each)
            kernel, strides, dil, pads = (x.image_height, x.width), (x.image_height, 1), (1, 1), (0, 0)
            out_c, out_h, out_w = int(self.graph.constants[node.inputs[1]].shape[1]), layer.images, 1
        out_h, pad_t = _band_rows(layer, out_h, pads[0])
        c0, c1 = self._slice(layer, out_c)
        taps = [(ky * dil[0], kx * dil[1], first_in + ci) for ky in range(kernel[0]) for kx in range(kernel[1])
                for ci in range(c_pad)]
        tiles = layer.tiles
        if tiles.row_tile != min(len(taps), R) or tiles.col_tile != min(c1 - c0, C):
            raise MappingError(f"the overlay runs full array tiles ({R} lanes, {C} columns), not the program's "
                               f"{tiles.row_tile} x {tiles.col_tile}")
        tr, tc = math.ceil(len(taps) / R), math.ceil((c1 - c0) / C)
        rq = node.attrs.requant
        f.update(unit=ARRAY, op=OP_MAC, in_zp=node.attrs.input_zero_point, dw=int(depthwise), out_h=out_h,
                 out_w=out_w, pixels=out_h * out_w, sy=strides[0], sx=strides[1], pad_t=pad_t, pad_l=pads[1],
                 tr=tr, tc=tc, ts=tiles.spatial_tiles, pt=tiles.spatial_tile, wbits=layer.weight_bits,
                 tap_base=self._taps(node, x, taps, depthwise, chunk), neg=int(rq.neg_multiplier is not None),
                 zp=rq.zero_point, lo=rq.lo, hi=rq.hi)
        if (node.name, chunk) not in self.shared:  # the bands of a layer share its weights and parameters
            self.shared[node.name, chunk] = self._weights(layer, node, x, taps, out_c, kernel, c_pad, chunk)
        shared = self.shared[node.name, chunk]
        # a channel slice's column tile ct is the node's tile c0 / C + ct (tiles are stored column-major)
        f.update(w_bit=shared["w_bit"] + c0 // C * tr * R * C * layer.weight_bits,
                 par_base=shared["par_base"] + c0 // C)
        return f

    def _slice(self, layer, channels: int) -> tuple[int, int]:
        """The output channels [c0, c1) of the node the row computes: a channel-sliced band's (between
        buffers holding just those channels, c0 on a block of C), else all of them."""
        if layer.band is None or layer.band.channels is None:
            return 0, channels
        c0, c1 = layer.band.channels
        held = {self.mapping.placement(t).channels for t in (*layer.inputs, layer.output)}
        if c0 % self.C or held != {c1 - c0}:
            raise MappingError(f"the overlay runs a slice of channels [{c0}, {c1}) only on a block of {self.C} "
                               f"channels between buffers holding just those")
        return c0, c1

    def _taps(self, node: Node, x, taps: list[tuple[int, int, int]], depthwise: bool, chunk: int = 0) -> int:
        """The first tap-table word of `node` reading map `x` (its offsets depend on the map's width and
        channel slots, so bands whose input buffers are alike share them)."""
        key = (node.name, chunk, x.width, x.pixels, x.lg)
        if key in self.shared:
            return self.shared[key]
        self.shared[key] = len(self.taps)
        R = self.R
        for t in range(math.ceil(len(taps) / R)):
            lanes = []
            for r in range(R):
                k = t * R + r
                if k >= len(taps) or (not depthwise and taps[k][2] >= x.channels):  # a padded lane reads nothing
                    lanes.append((0, 0, 0, 0))
                    continue
                dy, dx, ci = taps[k]
                if not depthwise and ci % x.banks != r % x.banks:
                    raise MappingError(f"lane {r} of row tile {t} reads channel {ci}, which is not in its bank")
                coff = (0 if depthwise else (ci >> x.lg) * x.pixels) + dy * x.width + dx
                lanes.append((1, dy, dx, coff))
            self.taps.append(tuple(lanes))
        return self.shared[key]

    def _weights(self, layer, node: Node, x, taps: list, out_c: int, kernel, c_pad: int,
                 chunk: int = 0) -> dict[str, int]:
        """The node's weight tiles in the weight ROM and its per-channel parameters: w_bit, par_base (a grouped
        conv's chunk: its block-diagonal weights and its channels' parameters)."""
        R, C = self.R, self.C
        w = self.graph.constants[node.inputs[1]].astype(np.int64)
        m0 = chunk * out_c if layer.kind == "grouped_conv" else 0
        if layer.kind == "grouped_conv":
            w = chunk_weights(w, node.attrs.conv.group, layer.tiles.work.packed, chunk)
        if node.op == "QConv":
            w4 = w if w.ndim == 4 else w[:, :, None, :]
            matrix = w4.transpose(2, 3, 1, 0)  # k = (ky * kw + kx) * C_pad + c_in
        else:
            matrix = w.reshape(x.channels, kernel[0], kernel[1], out_c).transpose(1, 2, 0, 3)
        matrix = np.pad(matrix, ((0, 0), (0, 0), (0, c_pad - matrix.shape[2]), (0, 0))).reshape(-1, out_c)
        tr, tc = math.ceil(len(taps) / R), math.ceil(out_c / C)
        padded = np.zeros((tr * R, tc * C), np.int64)
        padded[:len(taps), :out_c] = matrix
        tiles_in_order = [padded[t * R:(t + 1) * R, ct * C:(ct + 1) * C] for ct in range(tc) for t in range(tr)]
        shared = {"w_bit": self.weights.append(np.stack(tiles_in_order), layer.weight_bits),
                  "par_base": len(self.params)}
        rq = node.attrs.requant
        total = m0 + out_c  # the node's channels up to the chunk's last
        bias = (self.graph.constants[node.inputs[2]].astype(np.int64) if len(node.inputs) > 2 and node.inputs[2]
                else np.zeros(total, np.int64))[m0:]
        mult, shift = _per_channel(rq.multiplier, total)[m0:], _per_channel(rq.shift, total)[m0:]
        neg = _per_channel(rq.neg_multiplier, total)[m0:] if rq.neg_multiplier is not None else [0] * out_c
        for ct in range(tc):
            self.params.append(tuple((int(bias[m]), mult[m], neg[m], shift[m]) if m < out_c else (0, 0, 0, 0)
                                     for m in range(ct * C, ct * C + C)))
        return shared

    # ---- vector unit rows --------------------------------------------------------------------------
    def _vector(self, layer, node: Node) -> dict[str, int]:
        f = self._row(layer)
        x = self._input(f, layer.inputs[0])
        a = node.attrs
        out_c, out_h, out_w = map_shape(self.graph.shape(node.outputs[0]))
        out_h = _band_rows(layer, out_h, 0)[0]
        self._slice(layer, out_c)  # a slice needs nothing else: the vector ops' parameters are per tensor
        f.update(unit=VECTOR, passes=math.ceil(x.channels / self.C), out_h=out_h, out_w=out_w, pixels=out_h * out_w,
                 ma=1, uy=1, ux=1)
        if node.op == "QAdd":
            b = self._input(f, layer.inputs[1], "b")
            if (b.channels, b.height, b.width) != (x.channels, x.height, x.width) or b.plane == x.plane:
                raise UnsupportedModelError("a QAdd of maps of different shapes (broadcasting), or of two maps in "
                                            "one activation plane, does not run on the overlay's vector unit")
            f.update(op=OP_ADD, in_zp=a.a_zero_point, b_zp=a.b_zero_point, ma=a.a_multiplier, mb=a.b_multiplier,
                     shift=a.shift, zp=a.zero_point, lo=a.lo, hi=a.hi)
        elif node.op == "QMul":
            f.update(op=OP_MUL, b_one=self._gate(f, x, layer.inputs[1]), in_zp=a.a_zero_point, b_zp=a.b_zero_point,
                     ma=a.multiplier, shift=a.shift, zp=a.zero_point, lo=a.lo, hi=a.hi)
        elif node.op == "QRequant":
            f.update(op=OP_REQ, in_zp=a.input_zero_point, ma=a.multiplier, shift=a.shift, zp=a.zero_point,
                     lo=a.lo, hi=a.hi)
        elif node.op == "QLut":
            if node.name not in self.shared:
                self.shared[node.name] = {"lut_base": len(self.lut)}
                self.lut.extend(int(v) for v in a.table)
            f.update(op=OP_LUT, in_zp=a.input_min, **self.shared[node.name])
        elif node.op == "Resize":
            up_y, up_x = a.scales if len(a.scales) == 2 else (1, *a.scales)
            if int(up_y) != up_y or int(up_x) != up_x:
                raise UnsupportedModelError("only integer upsampling factors run on the overlay's vector unit")
            f.update(op=OP_RESIZE, uy=int(up_y), ux=int(up_x), ky0=first_row_repeat(a, _first_row(layer)),
                     kx0=-resize_edge_pads(a)[1])
        elif node.op == "QResample":
            taps = (1, 1) if a.pick else (2 if len(a.scales) == 2 else 1, 2)
            r = a.requant
            f.update(op=OP_PICK if a.pick else OP_LERP, in_zp=r.input_zero_point, ma=r.multiplier, shift=r.shift,
                     zp=r.zero_point, lo=r.lo, hi=r.hi, kh=taps[0], kw=taps[1], **interpolation_fields(a))
        elif node.op == "GlobalMaxPool" or (node.op == "QAveragePool" and a.pool is None):
            if node.op == "QAveragePool":
                (count, m, s), = a.divisors
                f.update(op=OP_GAVG, in_zp=a.input_zero_point, ma=m, shift=s, zp=a.zero_point, lo=a.lo, hi=a.hi)
            else:
                f.update(op=OP_GMAX)
            f.update(out_h=x.height, out_w=x.width, pixels=x.pixels)  # the pass walks the input's pixels
            f.update(acc=int(layer.band is not None and layer.band.in_rows[0] > 0))
        elif node.op in ("MaxPool", "QAveragePool"):
            self._window_pool(f, layer, node)
        elif node.op in ("Concat", "Transpose", "Pad", "Interleave"):  # a band's from its buffers (_copy)
            self._copy(f, layer, node)
        else:
            raise UnsupportedModelError(f"{node.op} has no overlay unit")
        return f

    def _window_pool(self, f: dict, layer, node: Node) -> None:
        a = node.attrs.pool if node.op == "QAveragePool" else node.attrs
        kernel, strides, dil, pads = _geometry(a)
        f.update(op=OP_MAXPOOL, kh=kernel[0], kw=kernel[1], sy=strides[0], sx=strides[1], dil_y=dil[0],
                 dil_x=dil[1], pad_t=_band_rows(layer, 0, pads[0])[1], pad_l=pads[1])
        if node.op == "QAveragePool":
            q = node.attrs
            if node.name not in self.shared:  # every output pixel's window count, over the whole map
                inside = np.ones((1, 1, *self.graph.shape(node.inputs[0])[2:]), np.int64)
                windows = pool_windows(a, inside, 1 if a.count_include_pad else 0, 0)
                counts = windows.sum(axis=tuple(range(-len(a.kernel_shape), 0)))
                self.shared[node.name] = {"aux_base": len(self.aux), "div_base": len(self.divisors)}
                self.aux.extend(int(c) for c in counts.reshape(-1))
                table = {int(c): (int(m), int(s)) for c, m, s in q.divisors}
                self.divisors.extend(table.get(c, (0, 0)) for c in range(max(table) + 1))
            shared = self.shared[node.name]
            first = _first_row(layer) * f["out_w"]  # a band's counts: its rows'
            f.update(op=OP_AVGPOOL, in_zp=q.input_zero_point, zp=q.zero_point, lo=q.lo, hi=q.hi,
                     aux_base=shared["aux_base"] + first, div_base=shared["div_base"])


    def _copy(self, f: dict, layer, node: Node) -> None:
        """Concat, Transpose, constant Pad: segments that move every source element to its output place (a
        band's: from its input buffers, a Pad's rows shifted by the padding above the band)."""
        out_rank = len(self.graph.shape(node.outputs[0]))
        f.update(op=OP_COPY, seg_base=len(self.segments))
        if node.op == "Transpose":
            perm = node.attrs.perm
            if perm[0] != 0:
                raise UnsupportedModelError("a Transpose that moves the batch axis does not run on the overlay")
            sel = {_slot(a, out_rank): _slot(perm[a], out_rank) for a in range(1, out_rank)}
            self._segment(layer.inputs[0], out_rank, sel, {})
        elif node.op == "Pad":
            a = node.attrs
            begins = a.pads[:out_rank]
            if a.mode != "constant" or begins[0] or a.pads[out_rank]:
                raise UnsupportedModelError("only constant padding of channels and pixels runs on the overlay")
            f.update(fill=1, zp=int(a.value))
            offsets = {_slot(i, out_rank): begins[i] for i in range(1, out_rank)}
            if layer.band is not None:
                offsets[1] = layer.band.pad_top
            self._segment(layer.inputs[0], len(layer.input_shapes[0]), {}, offsets)
        elif node.op == "Interleave":  # a segment per phase, into every step-th row and column from its offset
            strides = node.attrs.map_strides
            for t, shape, (dy, dx) in zip(layer.inputs, layer.input_shapes, np.ndindex(*strides)):
                self._segment(t, len(shape), {}, {1: dy, 2: dx}, strides)
        else:
            axis, offset = node.attrs.axis, 0
            if axis == 0:
                raise UnsupportedModelError("a Concat along the batch axis does not run on the overlay")
            for t, shape in zip(layer.inputs, layer.input_shapes):
                self._segment(t, len(shape), {}, {_slot(axis, out_rank): offset})
                offset += shape[axis]
        f["seg_count"] = len(self.segments) - f["seg_base"]

    def _segment(self, tensor: str, rank: int, sel: dict[int, int], offsets: dict[int, int],
                 steps: tuple[int, int] = (1, 1)) -> None:
        m = self.mapping.placement(tensor)
        if rank > 4:
            raise UnsupportedModelError("copies of tensors of rank above 4 do not run on the overlay")
        present = {_slot(a, rank) for a in range(1, rank)}
        slots = [sel.get(o, o if o in present else NO_SLOT) for o in range(3)]
        self.segments.append((m.plane, m.base, m.lg, m.channels, m.height, m.width, *slots,
                              *(offsets.get(o, 0) for o in range(3)), *steps))


def _geometry(a) -> tuple[tuple[int, int], ...]:
    """(kernel, strides, dilations, leading pads) as (rows, columns): a 1-D window is one row."""
    if len(a.kernel_shape) == 1:
        return (1, *a.kernel_shape), (1, *a.strides), (1, *a.dilations), (0, a.pads[0])
    return tuple(a.kernel_shape), tuple(a.strides), tuple(a.dilations), tuple(a.pads[:2])


def _band_rows(layer, rows: int, pad_top: int) -> tuple[int, int]:
    """(rows computed, top padding) of a row: the layer's, or those of the band of it the row runs (in
    its input buffer's coordinates; rows past the buffer's height read the zero point, as past a map's)."""
    band = layer.band
    return (rows, pad_top) if band is None else (band.rows_computed, band.pad_top)


def _first_row(layer) -> int:
    """The layer's first output row (before a fused pool) the row computes."""
    return 0 if layer.band is None else layer.band.out_rows[0] * (layer.pool or (1, 1))[0]


def _slot(axis: int, rank: int) -> int:
    """The map coordinate (0 c, 1 y, 2 x) axis `axis` of a rank-`rank` tensor is stored as (map_shape)."""
    return {4: {1: 0, 2: 1, 3: 2}, 3: {1: 0, 2: 2}, 2: {1: 0}}[rank][axis]


def _per_channel(values, count: int) -> list[int]:
    values = [int(v) for v in values]
    return values * count if len(values) == 1 else values
