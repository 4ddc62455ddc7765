"""The RTL encoding of a layer program (hlsgen.hw.map_model): every row of the program becomes a row of
the generated top's layer table (configuration fields of the array engine, the vector engine and the
writer), and the ROM contents (weight tiles, tap tables, per-channel requantization parameters, lookup
tables). Units, fused MaxPools, tiles, feature-map placement and bit widths are the program's; this
module only encodes them, and rejects what the RTL's modules do not implement.

Array layers reduce over k = tap * C_pad + c_in (the input channel fastest; C_pad the row's
reduction_channels, lanes c_in >= C_in read nothing): row tile t gives lane r the index t * R + r.

Feature maps in external memory: the `dma` rows are the rows of a table of their own, the move table (its
own cursor in the sequencer starts hg_fmap_dma), their words and addresses in its dma_* fields; every row of
either table has the program's `wait` (docs/program.md, "Two queues"). A band of a layer is
an ordinary row over its buffers, with the band's geometry (input height, output rows, top padding, an
average pool's counted rows); the bands of a layer share its weights, parameters and (when equal) taps.

Throughput mode (--batch N, hlsgen.hw.batching): the maps the Dense tail reads and writes stack their N images
along the height. A tail Dense reads its map as a window of H x W taps moving H rows per output row (one
output row per image, as the HLS C++'s); a head row writing such a map writes one image a run, at the
writer's base plus the image's index times `image_words` (the sequencer counts the images). The streams take
and send one image's map at a time, a channel block apart by the stacked map's words.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import MappingError
from ..hw.groups import chunk_weights
from ..hw.mapping import SWAP_ROWS_COLUMNS, Mapping
from ..hw.placement import MapPlacement as FeatureMap
from ..hw.placement import TWO_MAP_OPS, map_shape
from ..hw.queues import COMPUTE_QUEUE, queue
from ..hw.rows import ARRAY as ARRAY_UNIT
from ..hw.rows import DMA as DMA_UNIT
from ..hw.rows import LayerMap, written_dw_offset, written_offset
from ..hw.target import Target
from ..hw.tiling import accumulator_depth
from ..ir import Graph, Node
from ..ops.registry import UnsupportedAttribute
from ..ops.resize import first_row_repeat, interpolation_fields, resize_edge_pads
from .overlay import MAX_INPUTS, MAX_OUTPUTS, Overlay, OverlayFitError, check_fits, overlay
from .weight_rom import WeightSlices, slices_per_word
from .words import (MAX_POOL, MAX_UPSAMPLING, MIN_DIM_W, MULT_W, SHIFT_W, STRIDE_W, VEC_MULT_W, divisor_word,
                    param_word, tap_word, verilog_parameters)

ARRAY, VECTOR, DMA = 0, 1, 2  # DMA: a row of the move table
OP_ADD, OP_REQ, OP_LUT, OP_GAVG, OP_GMAX, OP_WAVG, OP_WMAX, OP_MUL, OP_LERP, OP_PICK = range(10)
ACT_BITS = 8  # the activation memory, the writer and the streams hold bytes
VECTOR_OPS = ("QAdd", "QMul", "QRequant", "QLut", "QAveragePool", "GlobalMaxPool", "Resize", "QResample", "MaxPool",
              "Concat", "Pad",
              "Transpose", "Interleave")
# the layer table's map coordinates (DIM_W bits; hlsgen.rtl.render.config_fields), and those signed (DIM_W + 1)
DIM_FIELDS = ("in_h", "in_w", "out_w", "vw", "src_w", "src_h", "win_kh", "win_kw", "dil_x", "dil_y", "out_width",
              "pool_h", "pool_w", "out_dw_pitch", "dma_dw_width", "dma_dw_pitch")
SIGNED_DIM_FIELDS = ("x0", "y0", "cnt_y0", "cnt_y1", "cnt_x0", "cnt_x1")
# what a model's program needs of the overlay (--program external), in the words of a refusal
OVERLAY_NEEDS = {
    "ADDR_W": "bits of activation-memory addresses (ADDR_W)", "DIM_W": "bits of map coordinates (DIM_W)",
    "OFF_W": "bits of window offsets (OFF_W)", "ST_W": "bits of strides (ST_W)", "CNT_W": "bits of tile and channel counts (CNT_W)",
    "VPIX_W": "bits of vector-unit pixel counts (VPIX_W)", "WORD_W": "bits of feature-map image words (WORD_W)",
    "SEG_W": "bits of move segments (SEG_W)", "plane0": "words per bank in activation plane 0",
    "plane1": "words per bank in activation plane 1", "dw_copies": "banks of the depthwise window memory",
    "dw_depth": "words per depthwise window bank", "pool_depth": "pixels in a fused MaxPool's input row",
    "layers": "layer-table rows", "taps": "tap-table words", "params": "parameter words",
    "lut": "lookup-table entries", "divisors": "divisor words", "moves": "move-table rows",
    "weight_words": "words of the weight RAM (buffers.weight)"}


@dataclass
class Layer:
    name: str
    kind: int
    node: Node | None  # None: a dma row
    inputs: list[str]  # feature maps read
    output: str  # feature map written
    covers: tuple[str, ...]  # graph nodes it implements (a fused MaxPool adds its own)
    row: LayerMap  # the layer program's row
    fields: dict[str, int] = field(default_factory=dict)
    chunk: int = 0  # a grouped conv's chunk of groups (hlsgen.hw.groups), a Concat's input: a table row each
    channels: tuple[int, int] | None = None  # the output channels [m0, m1) it writes (None: all)
    origin: tuple[int, int] = (0, 0)  # a Concat's input along rows or columns: its first output row and column
    step: tuple[int, int] = (1, 1)  # an Interleave's phase: output rows and columns between its pixels
    image_words: int = 0  # a head row writing a batch's map: words between its images (0: none)


@dataclass
class Program:
    name: str
    graph: Graph  # the integer graph
    target: Target
    layers: list[Layer]
    maps: dict[str, FeatureMap]
    input_maps: tuple[str, ...]  # the graph's inputs' maps, in graph-input order: streamed in in turn
    output_maps: tuple[str, ...]  # the graph's outputs' maps, in graph-output order: streamed out in turn
    plane_depth: tuple[int, int]
    weights: list[int]  # words of `weight_word_slices` slices of C bits (hlsgen.rtl.weight_rom)
    weight_word_slices: int
    taps: list[int]  # words of R lane taps
    params: list[int]  # words of C lanes of {bias, multiplier, negative multiplier, shift}
    lut: list[int]  # lookup-table entries, every table one after the other
    divisors: list[int]  # divisor words (average pools: one per window count 0..kh*kw), table after table
    widths: dict[str, int]
    dw_copies: int  # banks of the depthwise window memory (0: no depthwise layer)
    dw_depth: int
    weights_external: bool = False  # the weights stream from external memory (hg_weight_dma), whole words
    fmaps_external: bool = False  # feature maps move through external memory (hg_fmap_dma, m_axi_fmap)
    input_in_dram: bool = False  # the host writes the input into the feature-map image (no input stream)
    dram_words: int = 0  # the feature-map image, in activation-memory words
    overlay: Overlay | None = None  # --program external: the target's top, which loads this program (widths are its)
    images: int = 1  # per run (--batch N): the layer table's rows [:head] run once per image, the rest once
    head: int = 0  # the layer table's first tail row (its row count: nothing batched)
    weights_loaded: bool = False  # the target's top: the weights fit its weight RAM, loaded with the program
    # the first row runs under the input stream (hlsgen.hw.stream_overlap): the input elements its first spatial
    # tile reads, and how many more each next one reads (None: every row waits for the whole input)
    stream_need: tuple[int, int] | None = None

    @property
    def input_map(self) -> str:
        """The first input's map (the only one where the input lives in the feature-map image)."""
        return self.input_maps[0]

    @property
    def inputs(self) -> list[FeatureMap]:
        """The input maps, in graph-input order (the input stream takes them one after another)."""
        return [self.maps[name] for name in self.input_maps]

    @property
    def outputs(self) -> list[FeatureMap]:
        """The output maps, in graph-output order (the output stream sends them one after another)."""
        return [self.maps[name] for name in self.output_maps]

    @property
    def compute(self) -> list[Layer]:
        """The layer table: the rows the engines run, in order."""
        return [layer for layer in self.layers if layer.kind != DMA]

    @property
    def moves(self) -> list[Layer]:
        """The move table: the rows hg_fmap_dma runs, in order."""
        return [layer for layer in self.layers if layer.kind == DMA]

    @property
    def word_parameters(self) -> dict[str, int]:
        """The shared layouts and widths (hlsgen.rtl.words) as the modules' parameters."""
        return verilog_parameters(self.target.widths.accumulator_bits, self.widths["ADDR_W"], self.widths["DIM_W"],
                                  self.widths["ST_W"])

    @property
    def weight_rom_bits(self) -> int:
        return len(self.weights) * self.weight_word_slices * self.cols

    @property
    def rows(self) -> int:
        return self.target.array.rows

    @property
    def cols(self) -> int:
        return self.target.array.cols


def compile_program(mapping: Mapping, graph: Graph) -> Program:
    """Encode the layer program `mapping` of the integer graph `graph` for the RTL's modules."""
    return _Compiler(mapping, graph).run()


class _Compiler:
    def __init__(self, mapping: Mapping, graph: Graph):
        self.mapping, self.graph, self.target = mapping, graph, mapping.target
        self.R, self.C = self.target.array.rows, self.target.array.cols
        self.D = accumulator_depth(self.target)
        self.layers: list[Layer] = []
        self.weights = WeightSlices(self.C)
        self.taps: list[tuple[tuple[int, int, int, int], ...]] = []  # per row tile: R lanes of (valid, dy, dx, off)
        self.params: list[int] = []
        self.lut: list[int] = []
        self.divisors: list[int] = []
        self.node_roms: dict[str, tuple[int, int]] = {}  # a node's (w_base, par_base): its bands share them
        self.tap_tables: dict[tuple, int] = {}  # (node, its tap table) -> base: bands with equal tables share it

    def fail(self, node: Node, why: str):
        raise MappingError(f"{self.graph.describe(node.name)} has no RTL implementation: {why}")

    def run(self) -> Program:
        g, R, C, memory = self.graph, self.R, self.C, self.mapping.memory
        if R != C or R & (R - 1):
            raise MappingError(f"the RTL needs a square array with a power-of-two side, not {R} x {C}")
        if self.target.array.dataflow != "weight_stationary":
            raise MappingError("the RTL implements the weight-stationary dataflow only "
                                        f"(target {self.target.name} is {self.target.array.dataflow})")
        if len(g.inputs) > MAX_INPUTS and self.mapping.program_external:
            raise OverlayFitError(f"the target's top (--program external) takes up to {MAX_INPUTS} input maps, the "
                                  f"model has {len(g.inputs)}: --program rom streams them in turn")
        if len(g.inputs) > 1 and self.mapping.images > 1:
            raise MappingError(f"--batch {self.mapping.images}: the RTL takes a batch of a model with one input "
                               f"(the model has {len(g.inputs)})")
        if len(g.inputs) > 1 and self.mapping.input_in_dram:
            raise MappingError(f"the model's {len(g.inputs)} inputs do not all fit on chip: the RTL streams "
                               "several inputs into the activation memory only")
        if len(g.outputs) > MAX_OUTPUTS and self.mapping.program_external:
            raise OverlayFitError(f"the target's top (--program external) sends up to {MAX_OUTPUTS} output maps, "
                                  f"the model has {len(g.outputs)}: --program rom streams them in turn")
        if self.mapping.images > 1 and self.mapping.program_external:
            raise MappingError(f"--batch {self.mapping.images}: the target's top (--program external) runs one "
                               "image per call; build the batch with --program rom")
        widths = self.target.widths
        if widths.operand_bits > 8 or widths.accumulator_bits > 48:
            raise MappingError("the RTL keeps activations in bytes and partial sums in at most 48 bits "
                                        f"(target {self.target.name}: {widths.operand_bits}-bit operands, "
                                        f"{widths.accumulator_bits}-bit accumulators)")
        batching, head = self.mapping.batching, None
        for i, row in enumerate(self.mapping.layers):
            if batching is not None and i == batching.tail:
                head = len(self.compute_rows())
            if row.unit == DMA_UNIT:
                self._add_move(row)
            elif row.kind != "reshape":
                self._add_layer(row)
        head = len(self.compute_rows()) if head is None else head
        maps = {m.name: m for m in memory.maps}
        self._check_maps(maps)
        self.depths, self.dw_depth, self.dw_copies = memory.plane_depth, memory.dw_depth, memory.dw_copies
        # addresses, and strides up to a whole plane (maps in external memory have no on-chip address)
        self.addr_w = max([*self.depths, self.dw_copies * self.dw_depth] + [m.pixels for m in maps.values()
                                                           if m.dram_base is None]).bit_length()
        self.param_word = param_word(widths.accumulator_bits)
        # the PEs hold the program's widest weights; the ROM each layer's at its own width (as quantization
        # chose them)
        self.weight_w = max([2] + [layer.row.weight_bits for layer in self.layers if layer.kind == ARRAY])
        self.word_slices = slices_per_word(self.weight_w)
        # a word of the weight image is one AXI4 beat or several (hg_weight_dma; the target's top has it always)
        if self.mapping.weights_external or self.mapping.program_external:
            self.word_slices = max(self.word_slices, self.target.external_memory.data_bits // C)
        self._waits()
        for layer in self.layers:
            if layer.kind == DMA:
                self._move_fields(layer, maps)
                continue
            (self._array_fields if layer.kind == ARRAY else self._vector_fields)(layer, maps)
            self._writer_fields(layer, maps[layer.output], maps[layer.inputs[0]])
        widths = self._widths(maps)
        shape = self._on_overlay(widths) if self.mapping.program_external else None
        if shape is not None:
            widths = shape.width
        word = tap_word(self.addr_w, widths["DIM_W"])  # a tap's kernel offsets are map coordinates
        taps = [_pack([word.pack(valid=v, dy=dy, dx=dx, off=off) for v, dy, dx, off in lanes], word.width)
                for lanes in self.taps]
        # the overlay has the feature-map master whether or not this model uses it
        fmaps_external = self.mapping.maps_external or self.mapping.input_in_dram or shape is not None
        if fmaps_external and self.target.external_memory.data_bits > R * ACT_BITS:
            raise MappingError(f"feature maps move through external memory, and a {self.target.external_memory.data_bits}"
                               f"-bit AXI4 beat is wider than an activation-memory word ({R} bytes): the RTL moves "
                               "a word in whole beats")
        return Program(g.name, g, self.target, self.layers, maps,
                       tuple(memory.placement(t).name for t in g.inputs),
                       tuple(memory.placement(t).name for t in g.outputs), self.depths, self.weights.words(self.word_slices),
                       self.word_slices, taps, self.params,
                       self.lut, self.divisors, widths, self.dw_copies, self.dw_depth,
                       self.mapping.weights_external or shape is not None, fmaps_external, self.mapping.input_in_dram,
                       memory.dram_words, shape, self.mapping.images, head,
                       weights_loaded=shape is not None and not self.mapping.weights_external,
                       stream_need=self.mapping.stream.need if self.mapping.stream else None)

    def compute_rows(self) -> list[Layer]:
        return [layer for layer in self.layers if layer.kind != DMA]

    # ---- what the RTL's modules implement ---------------------------------------------------------
    def _add_move(self, row: LayerMap) -> None:
        memory = self.mapping.memory
        self.layers.append(Layer(row.name, DMA, None, [memory.placement(t).name for t in row.inputs],
                                 memory.placement(row.output).name, (), row))

    def _add_layer(self, row: LayerMap) -> None:
        node = self.graph.nodes[row.nodes[0]]
        if row.unit == ARRAY_UNIT:
            kind = ARRAY
            t = row.tiles
            if (t.row_tiles, t.col_tiles) != (-(-t.work.reduction // self.R), -(-t.work.out_channels // self.C)):
                self.fail(node, "the RTL runs full array tiles only")
        elif node.op in VECTOR_OPS:
            kind = VECTOR
        else:
            self.fail(node, "no RTL unit implements this op")
        memory = self.mapping.memory
        for t in row.inputs:  # a Reshape only renames a map when a Dense reads it flattened
            if t in memory.aliases and not (node.op == "QDense" and len(self.graph.shape(t)) == 2):
                self.fail(node, f"it reads {t!r}, a reshaped feature map; only a Dense layer may (as a Flatten)")
        if node.op in TWO_MAP_OPS and memory.placement(row.inputs[0]) == memory.placement(row.inputs[1]):
            raise MappingError(f"a {node.op} of {row.inputs[0]!r} with itself is not implemented in the RTL")
        output = memory.placement(row.output).name
        if row.kind == "grouped_conv":  # a table row per chunk of groups, writing its channels
            per = row.tiles.work.out_channels
            self.layers.extend(Layer(row.name, kind, node, [memory.placement(row.inputs[0]).name], output, row.nodes,
                                     row, chunk=i, channels=(i * per, (i + 1) * per)) for i in range(row.tiles.work.groups))
        elif node.op == "Concat":  # a copy per input, into its channels (rows, columns) of the output
            self._check_copy(node, row)
            # the map coordinate (0 channel, 1 row, 2 column) the axis is (hlsgen.hw.placement.map_shape)
            slot = {4: (None, 0, 1, 2), 3: (None, 0, 2), 2: (None, 0)}[len(row.output_shape)][node.attrs.axis]
            first, copies = 0, []
            for i, (t, shape) in enumerate(zip(row.inputs, row.input_shapes)):  # a band's inputs are buffers
                count = shape[node.attrs.axis]
                place = {"channels": (first, first + count)} if slot == 0 else {
                    "origin": (first, 0) if slot == 1 else (0, first)}
                copies.append(Layer(row.name, kind, node, [memory.placement(t).name], output, row.nodes, row,
                                    chunk=i, **place))
                first += count
            # last input first: one that starts inside a block also writes the block's channels below it, which
            # the inputs before it then overwrite
            self.layers.extend(reversed(copies))
        elif node.op == "Interleave":  # a copy per phase, into every step-th row and column from its offset
            strides = node.attrs.map_strides
            self.layers.extend(Layer(row.name, kind, node, [memory.placement(t).name], output, row.nodes, row, chunk=i,
                                     origin=offset, step=strides)
                               for i, (t, offset) in enumerate(zip(row.inputs, np.ndindex(*strides))))
        else:
            if node.op in ("Pad", "Transpose"):
                self._check_copy(node, row)
            self.layers.append(Layer(row.name, kind, node, [memory.placement(t).name for t in row.inputs], output,
                                     row.nodes, row))

    def _check_copy(self, node: Node, row: LayerMap) -> None:
        """The copies the vector engine runs: a Concat of channels, rows or columns, a constant Pad of pixels,
        a Transpose of rows and columns (the model's cycles are theirs: hlsgen.hw.mapping); the first two and
        the Pad also in bands of rows (hlsgen.hw.band_geometry)."""
        rank = len(row.output_shape)
        if node.op == "Concat" and (node.attrs.axis == 0 or rank not in (2, 3, 4)):
            self.fail(node, "a Concat along the batch is not implemented in the RTL")
        if node.op == "Pad":
            a = node.attrs
            if a.mode != "constant" or rank < 3 or any(a.pads[i] or a.pads[i + rank] for i in (0, 1)):
                self.fail(node, f"a {a.mode} Pad of the batch or channels is not implemented in the RTL (only a "
                                "constant Pad of a map's rows and columns)")
        if node.op == "Transpose" and tuple(node.attrs.perm) != SWAP_ROWS_COLUMNS:
            self.fail(node, f"a Transpose with perm {list(node.attrs.perm)} moves the channels, which the RTL keeps "
                            "one per bank and lane: only swapping rows and columns (perm [0, 1, 3, 2]) is implemented")

    def _check_maps(self, maps: dict[str, FeatureMap]) -> None:
        for fmap in maps.values():
            if fmap.quant.bits > ACT_BITS:
                raise MappingError(f"feature map {fmap.name!r} holds {fmap.quant.bits}-bit values; the RTL keeps "
                                   f"activations in {ACT_BITS} bits (an unquantized model output kept at "
                                   "accumulator precision runs in the HLS C++)")
            if fmap.dw_read and fmap.birth < 0:
                reader = next(layer for layer in self.layers if fmap.name in layer.inputs and layer.node)
                raise MappingError(f"layer {reader.node.name!r}: a depthwise layer cannot read the input stream "
                                   "directly in the RTL")

    # ---- array layers ------------------------------------------------------------------------------
    def _array_fields(self, layer: Layer, maps: dict[str, FeatureMap]) -> None:
        node, R, C = layer.node, self.R, self.C
        x = maps[layer.inputs[0]]
        w = self.graph.constants[node.inputs[1]].astype(np.int64)
        depthwise = layer.row.kind == "depthwise"
        c_pad = layer.row.tiles.work.reduction_channels  # lanes per tap, the program's; zero weights past C_in
        if node.op == "QConv":
            a = node.attrs.conv
            if len(a.kernel_shape) == 1:
                kernel, strides, dil, pads = (1, *a.kernel_shape), (1, *a.strides), (1, *a.dilations), (0, a.pads[0])
            else:
                kernel, strides, dil, pads = tuple(a.kernel_shape), tuple(a.strides), tuple(a.dilations), tuple(a.pads[:2])
            out_c, out_h, out_w = map_shape(self.graph.shape(node.outputs[0]))
            band = layer.row.band
            if band is not None:  # the band's rows, over its input buffer (padding above its first row only)
                out_h, pads = band.rows_computed, (band.pad_top, pads[1])
            # lane order: k = (ky * kw + kx) * C_pad + c_in; depthwise: k = ky * kw + kx, a channel per column
            if layer.row.kind == "grouped_conv":  # the chunk: a conv over its groups' channels, block-diagonal
                w = chunk_weights(w, a.group, layer.row.tiles.work.packed, layer.chunk)
                out_c = w.shape[0]
            w4 = w if w.ndim == 4 else w[:, :, None, :]
            matrix = w4.transpose(2, 3, 1, 0)
        else:  # a batch's x: N images stacked, an output row per image, the window H rows down each
            kernel, strides, dil, pads = (x.image_height, x.width), (x.image_height, 1), (1, 1), (0, 0)
            out_c, out_h, out_w = w.shape[1], layer.row.images, 1
            # the Dense input is x flattened as [c][y][x]; lane order k = (y * W + x) * C_pad + c
            matrix = w.reshape(x.channels, x.image_height, x.width, out_c).transpose(1, 2, 0, 3)
        in_c, pad = matrix.shape[2], c_pad - matrix.shape[2]  # the channels it reads per tap, and padded lanes
        matrix = np.pad(matrix, ((0, 0), (0, 0), (0, pad), (0, 0))).reshape(-1, out_c)
        # a chunk reads its groups' input channels, from c0 on (a multiple of R: still lane r's bank)
        c0 = layer.chunk * layer.row.tiles.work.channels
        taps = [(ky * dil[0], kx * dil[1], c0 + ci) for ky in range(kernel[0]) for kx in range(kernel[1])
                for ci in range(c_pad)]
        reduction, pixels = len(taps), out_h * out_w
        # a stride along an axis with one output is never taken (1 keeps ST_W narrow)
        strides = tuple(s if o > 1 else 1 for s, o in zip(strides, (out_h, out_w)))
        tiles = layer.row.tiles
        tr, tc, ts, pt = tiles.row_tiles, tiles.col_tiles, tiles.spatial_tiles, tiles.spatial_tile
        if (reduction, pixels) != (tiles.work.reduction, tiles.work.pixels):
            self.fail(node, f"the program's tiles cover {tiles.work.reduction} x {tiles.work.pixels}, the layer "
                            f"{reduction} x {pixels}")
        rq = node.attrs.requant
        f = layer.fields
        tap_lanes = self._tap_lanes(layer, x, taps, reduction, depthwise, c0 + in_c)
        key = tap_lanes
        if key not in self.tap_tables:
            self.tap_tables[key] = len(self.taps)
            self.taps.extend(tap_lanes)
        pitch = x.dw_pitch if depthwise else x.width  # a depthwise row reads the window memory, rows that far apart
        f.update(kind=ARRAY, in_base=x.base, in_h=x.height, in_w=x.width, out_w=out_w, sx=strides[1], sy=strides[0],
                 x0=-pads[1], y0=-pads[0], pix0=-pads[0] * pitch - pads[1], row_step=strides[0] * pitch,
                 in_zp=node.attrs.input_zero_point, in_signed=int(x.quant.signed), in_plane=x.plane,
                 tr=tr, tc=tc, ts=ts, pt=pt, pt_last=pixels - (ts - 1) * pt,
                 w_bits=layer.row.weight_bits, tap_base=self.tap_tables[key],
                 neg=int(rq.neg_multiplier is not None), zp=rq.zero_point, lo=rq.lo, hi=rq.hi,
                 dw=int(depthwise), dw_base=x.dw_base, in_slot=x.dw_stride if depthwise else x.pixels)
        m0 = layer.channels[0] if layer.channels else 0
        if (node.name, layer.chunk) not in self.node_roms:  # the first band of the layer emits all of its columns
            self.node_roms[node.name, layer.chunk] = self._node_roms(node, matrix, reduction, m0, out_c, tr,
                                                                     layer.row.weight_bits)
        # a band of a channel-separable row (depthwise) over channels [c0, c1) starts at column tile c0 / C
        w_base, par_base = self.node_roms[node.name, layer.chunk]
        band = layer.row.band
        first = band.channels[0] // C if band is not None and band.channels else 0
        f["w_base"], f["par_base"] = w_base + first * tr * R * layer.row.weight_bits, par_base + first
        self._pool_walk(layer)

    def _node_roms(self, node: Node, matrix: np.ndarray, reduction: int, m0: int, out_c: int, tr: int,
                   bits: int) -> tuple[int, int]:
        """Append a node's weight tiles and requantization parameters of its output channels [m0, m0 + out_c)
        (every column tile); their bases."""
        R, C, rq = self.R, self.C, node.attrs.requant
        tc = -(-out_c // C)
        par_base = len(self.params)
        padded = np.zeros((tr * R, tc * C), np.int64)
        padded[:reduction, :out_c] = matrix
        # tiles in the engine's order (column tile, then row tile), R rows of C weights each
        tiles = padded.reshape(tr, R, tc, C).transpose(2, 0, 1, 3)
        w_base = self.weights.append(tiles, bits)
        total = m0 + out_c  # the node's channels up to the last one this row writes
        bias = (self.graph.constants[node.inputs[2]].astype(np.int64) if len(node.inputs) > 2 and node.inputs[2]
                else np.zeros(total, np.int64))[m0:]
        mult, shift = _per_channel(rq.multiplier, total)[m0:], _per_channel(rq.shift, total)[m0:]
        neg = _per_channel(rq.neg_multiplier, total)[m0:] if rq.neg_multiplier is not None else [0] * out_c
        if max(max(mult), max(neg)) >= 1 << MULT_W or max(shift) >= 1 << SHIFT_W:
            self.fail(node, f"a requantization multiplier does not fit {MULT_W} bits or a shift {SHIFT_W} bits")
        for ct in range(tc):
            lanes = []
            for c in range(C):
                m = ct * C + c
                if m >= out_c:
                    lanes.append(0)
                    continue
                lanes.append(self.param_word.pack(bias=bias[m], mult=mult[m], neg=neg[m], shift=shift[m]))
            self.params.append(_pack(lanes, self.param_word.width))
        return w_base, par_base

    def _tap_lanes(self, layer: Layer, x: FeatureMap, taps: list, reduction: int, depthwise: bool,
                   channels: int) -> tuple[tuple, ...]:
        """A row's tap table: per row tile, R lane taps (valid, dy, dx, offset within the input map `x`), packed
        once the program's DIM_W is known."""
        R, tiles = self.R, []
        for t in range(layer.row.tiles.row_tiles):
            lanes = []
            for r in range(R):
                k = t * R + r
                if k >= reduction or (not depthwise and taps[k][2] >= channels):  # a padded lane reads nothing
                    lanes.append((0, 0, 0, 0))
                    continue
                dy, dx, ci = taps[k]
                if not depthwise and ci % x.banks != r % x.banks:
                    raise MappingError(f"layer {layer.node.name!r}: lane {r} of row tile {t} reads channel {ci}, "
                                       f"which is not in its bank")
                coff = dy * x.dw_pitch + dx if depthwise else (ci >> x.lg) * x.pixels + dy * x.width + dx
                lanes.append((1, dy, dx, coff))
            tiles.append(tuple(lanes))
        return tuple(tiles)

    # ---- vector layers -----------------------------------------------------------------------------
    def _vector_fields(self, layer: Layer, maps: dict[str, FeatureMap]) -> None:
        node, a_attrs = layer.node, layer.node.attrs
        x = maps[layer.inputs[0]]
        out_q = self.graph.quant[layer.node.outputs[0]]
        f = layer.fields
        f.update(kind=VECTOR, a_base=x.base, a_lg=x.lg, a_plane=x.plane, b_plane=1 - x.plane, stride=x.pixels,
                 vw=x.width, pixels=x.pixels, passes=math.ceil(x.channels / self.C), a_signed=int(x.quant.signed),
                 a_zp=0, ma=1, shift=0, zp=0, lo=out_q.qmin, hi=out_q.qmax, src_w=x.width)
        if node.op == "QAdd":
            b = maps[layer.inputs[1]]
            if (b.channels, b.height, b.width) != (x.channels, x.height, x.width):
                self.fail(node, "broadcasting QAdd is not implemented in the RTL")
            f.update(op=OP_ADD, b_base=b.base, b_lg=b.lg, b_plane=b.plane, b_signed=int(b.quant.signed),
                     a_zp=a_attrs.a_zero_point, b_zp=a_attrs.b_zero_point, ma=a_attrs.a_multiplier,
                     mb=a_attrs.b_multiplier, shift=a_attrs.shift, zp=a_attrs.zero_point, lo=a_attrs.lo, hi=a_attrs.hi)
        elif node.op == "QMul":
            self._product(layer, x, maps[layer.inputs[1]])
        elif node.op == "QRequant":
            f.update(op=OP_REQ, a_zp=a_attrs.input_zero_point, ma=a_attrs.multiplier, shift=a_attrs.shift,
                     zp=a_attrs.zero_point, lo=a_attrs.lo, hi=a_attrs.hi)
        elif node.op == "QLut":
            if node.name not in self.node_roms:  # the bands of a layer share its table
                self.node_roms[node.name] = len(self.lut), 0
                self.lut.extend(int(v) & 0xFF for v in a_attrs.table)
            f.update(op=OP_LUT, a_zp=a_attrs.input_min, lut_base=self.node_roms[node.name][0])
        elif node.op == "MaxPool" or (node.op == "QAveragePool" and a_attrs.pool is not None):
            self._window_pool(layer, x, _written(layer, maps[layer.output]))
        elif node.op == "QAveragePool":
            (count, m, s), = a_attrs.divisors
            f.update(op=OP_GAVG, a_zp=a_attrs.input_zero_point, ma=m, shift=s, zp=a_attrs.zero_point,
                     lo=a_attrs.lo, hi=a_attrs.hi, acc=_continues(layer.row))
        elif node.op == "Interleave":  # the identity requantization, into every step-th pixel of the output
            f.update(op=OP_REQ, lo=x.quant.qmin, hi=x.quant.qmax)
        elif node.op == "Concat":  # the identity requantization, into the input's channels of the output
            f.update(op=OP_REQ, lo=x.quant.qmin, hi=x.quant.qmax)
            if x.banks == x.channels < self.C:  # replicated (placement.concat_replicas): lane j finds channel
                f["a_lg"] = self.C.bit_length() - 1  # j mod G in slot 0 of its bank, as a map of C banks keeps it
        elif node.op == "Pad":
            self._pad(layer, x, _written(layer, maps[layer.output]))
        elif node.op == "Transpose":
            self._transpose(layer, x, maps[layer.output])
        elif node.op == "QResample":
            self._interpolation(layer, x, _written(layer, maps[layer.output]))
        elif node.op == "Resize":  # the identity requantization, reading each output pixel's source pixel
            out = _written(layer, maps[layer.output])
            up_y, up_x = node.attrs.scales if len(node.attrs.scales) == 2 else (1, *node.attrs.scales)
            pad_y, pad_x = resize_edge_pads(node.attrs)
            if max(up_x, up_y, pad_x + 1, pad_y + 1) > MAX_UPSAMPLING:
                self.fail(node, f"upsampling factors above {MAX_UPSAMPLING} (or as many repeated edge pixels) are "
                                "not implemented in the RTL")
            first = 0 if layer.row.band is None else layer.row.band.out_rows[0]
            f.update(op=OP_REQ, vw=out.width, pixels=out.pixels, up_x=up_x - 1, up_y=up_y - 1, jx0=-pad_x,
                     jy0=first_row_repeat(node.attrs, first), edge=int(bool(node.attrs.pads)), src_h=x.height)
        else:
            f.update(op=OP_GMAX, lo=x.quant.qmin, hi=x.quant.qmax, acc=_continues(layer.row))
        if max(f["ma"], f.get("mb", 0)) >= 1 << VEC_MULT_W or f["shift"] >= 1 << SHIFT_W:
            self.fail(node, "a multiplier or shift is out of the vector unit's range")
        self._pool_walk(layer)

    def _product(self, layer: Layer, x: FeatureMap, b: FeatureMap) -> None:
        """A QMul: the lanes requantize (a - za) * (b - zb); a per-channel b (one pixel) is read at its pixel 0
        (b_one: b's pixel stays 0 and its channel slots are one word apart)."""
        node, q = layer.node, layer.node.attrs
        per_channel = b.height * b.width == 1 and x.height * x.width > 1
        if b.channels != x.channels or not per_channel and (b.height, b.width) != (x.height, x.width):
            self.fail(node, f"a product of a {x.channels}x{x.height}x{x.width} map and a {b.channels}x{b.height}x"
                            f"{b.width} one is not implemented in the RTL")
        layer.fields.update(op=OP_MUL, b_base=b.base, b_lg=b.lg, b_plane=b.plane, b_signed=int(b.quant.signed),
                            b_one=int(per_channel), a_zp=q.a_zero_point, b_zp=q.b_zero_point, ma=q.multiplier,
                            shift=q.shift, zp=q.zero_point, lo=q.lo, hi=q.hi)

    def _window_pool(self, layer: Layer, x: FeatureMap, out: FeatureMap) -> None:
        """A windowed MaxPool or average pool: the window's geometry, and an average's divisor table (one
        (multiplier, shift) per window count, 0 where no window has that count)."""
        node, f = layer.node, layer.fields
        a = node.attrs if node.op == "MaxPool" else node.attrs.pool
        n = len(a.kernel_shape)
        if n == 1:  # a 1-D map is one row
            kernel, strides, dil = (1, *a.kernel_shape), (1, *a.strides), (1, *a.dilations)
            begin, end = (0, a.pads[0]), (0, a.pads[1])
        else:
            kernel, strides, dil = tuple(a.kernel_shape), tuple(a.strides), tuple(a.dilations)
            begin, end = tuple(a.pads[:2]), tuple(a.pads[2:])
        # a stride along an axis with one output is never taken: 1 lets DS-CNN's 24 x 5 pool fit the field;
        # nor a dilation along an axis of a one-tap window
        sy, sx = (s if o > 1 else 1 for s, o in zip(strides, (out.height, out.width)))
        dil = tuple(d if k > 1 else 1 for d, k in zip(dil, kernel))
        # the counted region (an average's divisor) in the input's rows: a band's input buffer starts at row
        # `first` of the whole map, whose height is the graph's
        band, height, first = layer.row.band, x.height, 0
        if band is not None:
            height, first = map_shape(self.graph.shape(node.inputs[0]))[1], band.in_rows[0]
        counted = ((begin[0] + first, begin[1]), (height + end[0] - first, x.width + end[1])) if a.count_include_pad \
            else ((first, 0), (height - first, x.width))
        if band is not None:  # the window's origin: padding above the band's first row only
            begin = (band.pad_top, begin[1])
            # the band's taps stay in rows [-pad_top, height + bottom padding) of its buffer: the counted rows
            # clipped to those count the same taps, in coordinates as small as the buffer's (not the map's)
            counted = ((min(counted[0][0], band.pad_top), counted[0][1]),
                       (min(counted[1][0], x.height + end[0]), counted[1][1]))
        f.update(in_h=x.height, in_w=x.width, vw=out.width, pixels=out.pixels, sx=sx, sy=sy, x0=-begin[1],
                 y0=-begin[0], pix0=-begin[0] * x.width - begin[1], row_step=sy * x.width, win_kh=kernel[0],
                 win_kw=kernel[1], dil_y=dil[0], dil_x=dil[1], dil_row=dil[0] * x.width,
                 cnt_y0=-counted[0][0], cnt_x0=-counted[0][1], cnt_y1=counted[1][0], cnt_x1=counted[1][1])
        if node.op == "MaxPool":
            f.update(op=OP_WMAX, lo=x.quant.qmin, hi=x.quant.qmax)
            return
        q, word = node.attrs, divisor_word()
        table = {int(c): (int(m), int(s)) for c, m, s in q.divisors}
        if max(m for m, _ in table.values()) >= 1 << VEC_MULT_W or max(s for _, s in table.values()) >= 1 << SHIFT_W:
            self.fail(node, "a divisor's multiplier or shift is out of the vector unit's range")
        if node.name not in self.node_roms:  # the bands of a layer share its divisor table
            self.node_roms[node.name] = len(self.divisors), 0
            for count in range(kernel[0] * kernel[1] + 1):
                m, s = table.get(count, (0, 0))
                self.divisors.append(word.pack(mult=m, shift=s))
        f.update(op=OP_WAVG, a_zp=q.input_zero_point, zp=q.zero_point, lo=q.lo, hi=q.hi,
                 div_base=self.node_roms[node.name][0])

    def _interpolation(self, layer: Layer, x: FeatureMap, out: FeatureMap) -> None:
        """A linear Resize: a window of 2 x 2 taps (1 x 2 on a 1-D map) at each output pixel's source pixel, the
        interpolation counters' (hlsgen.ops.resize.interpolation_fields), every tap inside the map weighted."""
        q = layer.node.attrs
        try:
            f = interpolation_fields(q)
        except UnsupportedAttribute as exc:
            self.fail(layer.node, str(exc))
        # the counters' steps in the count region's fields, their offsets in the window origin's (hg_vector_engine)
        steps = {"cnt_y0": f["ly_num"], "cnt_y1": f["ly_den"], "cnt_x0": f["lx_num"], "cnt_x1": f["lx_den"],
                 "y0": f["ly_off"], "x0": f["lx_off"]}
        taps = (1, 1) if q.pick else (2 if len(q.scales) == 2 else 1, 2)
        layer.fields.update(op=OP_PICK if q.pick else OP_LERP, in_h=x.height, in_w=x.width, vw=out.width,
                            pixels=out.pixels, sx=1, sy=1, row_step=x.width, win_kh=taps[0], win_kw=taps[1],
                            dil_y=1, dil_x=1, dil_row=x.width, a_zp=q.requant.input_zero_point,
                            ma=q.requant.multiplier, shift=q.requant.shift, zp=q.requant.zero_point, lo=q.requant.lo,
                            hi=q.requant.hi, **steps)

    def _pad(self, layer: Layer, x: FeatureMap, out: FeatureMap) -> None:
        """A constant Pad of pixels as a 1x1 average pool over the padded map: a tap inside the input counts 1
        (multiplier 1, shift 0: the value itself, centred on the pad value and back), a tap in the padding 0
        (multiplier 0: the pad value, the output's zero point here)."""
        a, rank = layer.node.attrs, len(layer.row.output_shape)
        top, left = (a.pads[2], a.pads[3]) if rank == 4 else (0, a.pads[2])
        if layer.row.band is not None:  # the padding above the band's first row, in its buffer's rows
            top = layer.row.band.pad_top
        word = divisor_word()
        if layer.node.name not in self.node_roms:
            self.node_roms[layer.node.name] = len(self.divisors), 0
            self.divisors.extend([word.pack(mult=0, shift=0), word.pack(mult=1, shift=0)])
        layer.fields.update(op=OP_WAVG, in_h=x.height, in_w=x.width, vw=out.width, pixels=out.pixels, sx=1, sy=1,
                            x0=-left, y0=-top, pix0=-top * x.width - left, row_step=x.width, win_kh=1, win_kw=1,
                            dil_y=1, dil_x=1, dil_row=x.width, cnt_y0=0, cnt_x0=0, cnt_y1=x.height, cnt_x1=x.width,
                            a_zp=int(a.value), zp=int(a.value), lo=x.quant.qmin, hi=x.quant.qmax,
                            div_base=self.node_roms[layer.node.name][0])

    def _transpose(self, layer: Layer, x: FeatureMap, out: FeatureMap) -> None:
        """Rows and columns swapped, as a 1x1 max pool whose pixel walk reads output pixel (oy, ox) at input
        offset oy + ox * W: row step 1, column stride W, over an input seen as one row of H * W pixels
        (every tap inside it)."""
        layer.fields.update(op=OP_WMAX, in_h=out.height, in_w=x.pixels, vw=out.width, pixels=out.pixels,
                            sx=x.width, sy=1, x0=0, y0=0, pix0=0, row_step=1, win_kh=1, win_kw=1, dil_y=1, dil_x=1,
                            dil_row=1, lo=x.quant.qmin, hi=x.quant.qmax)

    def _pool_walk(self, layer: Layer) -> None:
        kh, kw = layer.row.pool or (1, 1)
        if max(kh, kw) > MAX_POOL:
            self.fail(layer.node, f"fused MaxPool windows above {MAX_POOL} are not implemented in the RTL")
        layer.fields.update(pool=int(layer.row.pool is not None), pool_kh=kh, pool_kw=kw)

    def _waits(self) -> None:
        """Every table row's `wait` (docs/program.md, "Two queues") in table rows: a move waits for the layer
        table's rows up to the last chunk of the program row it waits for; a layer counts moves, one a row."""
        done, count = {}, 0  # program row -> layer-table rows up to its last chunk
        for layer in self.layers:
            if layer.kind != DMA:
                count += 1
                done[id(layer.row)] = count
        computes = [row for row in self.mapping.layers if queue(row) == COMPUTE_QUEUE]
        for layer in self.layers:
            wait = layer.row.wait
            layer.fields["wait"] = done[id(computes[wait - 1])] if layer.kind == DMA and wait else wait

    def _move_fields(self, layer: Layer, maps: dict[str, FeatureMap]) -> None:
        """A dma row: hg_fmap_dma's configuration and the buffer's plane (whose read port a store takes, whose
        write port a load takes)."""
        m = layer.row.move
        buffer = maps[m.buffer]
        layer.fields.update(dma_store=int(m.direction == "store"), dma_segments=m.segments,
                            dma_words=m.segment_words, dma_dram_word=m.dram_word, dma_dram_stride=m.dram_stride,
                            dma_buf_base=buffer.base, dma_buf_stride=m.buffer_stride,
                            dma_dw=int(buffer.dw_read and m.direction == "load"), dma_dw_base=buffer.dw_base,
                            dma_dw_width=buffer.width, dma_dw_pitch=buffer.dw_pitch, dma_dw_stride=buffer.dw_stride,
                            dma_plane=buffer.plane)

    def _writer_fields(self, layer: Layer, out: FeatureMap, x: FeatureMap) -> None:
        # a chunk of a grouped conv writes channels [m0, m1) (m0 a multiple of the banks: whole slots)
        m0, m1 = layer.channels or (0, out.channels)
        inside = m0 % out.banks  # a Concat input from inside a block: written from the block's first channel
        if inside and not self._writes_from_block(layer, x, out, m0, m1):
            self.fail(layer.node, f"it writes channels {m0}..{m1 - 1} of {out.name!r} from inside a block of the "
                                  f"map's {out.banks} channel banks (docs/rtl.md, \"Copies\")")
        slot = (m0 >> out.lg) * out.pixels + layer.origin[0] * out.width + layer.origin[1] + written_offset(layer.row, out)
        dw_slot = ((m0 >> out.lg) * out.dw_stride + layer.origin[0] * out.dw_pitch + layer.origin[1]
                   + written_dw_offset(layer.row, out))
        one = out.images > 1 and layer.row.images == 1  # a head row: one image of a batch's map a run
        if one and out.dw_read:
            self.fail(layer.node, f"a batch's map {out.name!r} is also read in depthwise window memory, which hold "
                                  "one image")
        layer.image_words = out.image_height * out.width if one else 0
        layer.fields.update(out_base=out.base + slot, out_chan_stride=out.pixels, out_width=out.width * layer.step[0],
                            out_sx=layer.step[1], out_lg=out.lg,
                            out_channels=m1 - m0 + inside, out_signed=int(out.quant.signed), out_plane=out.plane,
                            pool_h=out.image_height if one else out.height, pool_w=out.width, out_dw=int(out.dw_read),
                            out_dw_base=out.dw_base + dw_slot, out_dw_stride=out.dw_stride,
                            out_dw_pitch=out.dw_pitch * layer.step[0])

    @staticmethod
    def _writes_from_block(layer: Layer, x: FeatureMap, out: FeatureMap, m0: int, m1: int) -> bool:
        """Whether a Concat input from channel m0 (inside a block) can be written from the block's first channel:
        it is replicated (hlsgen.hw.placement.concat_replicas: lane j of the vector unit reads its channel
        j mod G), fits the block, and nothing but the Concat's earlier inputs (written after it) lies below it."""
        return (layer.node.op == "Concat" and x.banks == x.channels and m0 % x.channels == 0 and
                m0 % out.banks + (m1 - m0) <= out.banks and not out.dw_read)

    # ---- widths ------------------------------------------------------------------------------------
    def _on_overlay(self, widths: dict[str, int]) -> Overlay:
        """--program external: the target's overlay, once the model's own `widths`, memory and tables are
        known to fit it; the program is then encoded at the overlay's widths."""
        t = self.target
        slices = max(slices_per_word(t.widths.operand_bits), t.external_memory.data_bits // self.C)
        shape = overlay(t, slices)
        pooled = max([layer.fields["pool_w"] for layer in self.layers if layer.fields.get("pool")], default=1)
        moves = sum(layer.kind == DMA for layer in self.layers)
        # the memory and the tables first: the widths follow from them, and a refusal names the cause
        needs = {"plane0": self.depths[0], "plane1": self.depths[1], "dw_copies": self.dw_copies,
                 "dw_depth": self.dw_depth, "pool_depth": pooled, "layers": len(self.layers) - moves, "moves": moves,
                 "taps": len(self.taps),
                 "params": len(self.params), "lut": len(self.lut), "divisors": len(self.divisors)} | widths
        if not self.mapping.weights_external:  # loaded into the weight RAM (the mapper sized them as stored)
            needs["weight_words"] = len(self.weights.words(slices))
        check_fits(shape, t, needs, OVERLAY_NEEDS)
        self.addr_w, self.weight_w, self.word_slices = shape.width["ADDR_W"], shape.weight_bits, slices
        self.depths, self.dw_copies, self.dw_depth = shape.plane_depth, shape.dw_copies, shape.dw_depth
        return shape

    def _widths(self, maps: dict[str, FeatureMap]) -> dict[str, int]:
        """Bit widths of the generated top's counters and addresses (each with room to spare).

        Every map may be 1x1 (a dense-only model) with short addresses: a signed linear offset (OFF_W) still
        holds a sign-extended window origin (DIM_W + 1 bits), and a vector pixel index (VPIX_W) a column
        (DIM_W bits), each with a bit to spare, so no replication that widens one into the other is empty."""
        counts = [1, self.target.buffers.accumulator.banks]
        for layer in self.layers:
            f = layer.fields
            counts += [f.get(k, 0) for k in ("tr", "tc", "ts", "passes", "out_channels")]
        pixels = max([1] + [m.pixels for m in maps.values() if m.dram_base is None])
        # signed linear offsets: the window origins and steps (a pool's padding may reach past a map's pixels)
        offsets = max([0] + [abs(layer.fields.get(k, 0)) for layer in self.layers
                             for k in ("pix0", "row_step", "dil_row")])
        dim_w = self._dim_bits()
        strides = [layer.fields.get(k, 1) for layer in self.layers for k in ("sx", "sy", "out_sx")]
        widths = {
            "ADDR_W": self.addr_w, "DIM_W": dim_w,
            # strides: any stride widens the field (the pixel walk adds it to a DIM_W coordinate)
            "ST_W": max([STRIDE_W] + [s.bit_length() for s in strides]),
            "OFF_W": max(self.addr_w, pixels.bit_length(), offsets.bit_length(), dim_w) + 2,
            "CNT_W": max(counts).bit_length() + 1, "PIX_W": max(self.D, self.R).bit_length() + 1,
            "VPIX_W": max(pixels.bit_length(), dim_w) + 1, "W_W": self.weight_w, "WB_W": self.weight_w.bit_length(),
            # feature-map moves: image word addresses and counts, and segments
            "WORD_W": max([self.mapping.memory.dram_words] + [layer.fields.get(k, 0) for layer in self.layers
                                                               for k in ("dma_words", "dma_dram_stride")]).bit_length() + 1,
            "SEG_W": max([1] + [layer.fields.get("dma_segments", 0) for layer in self.layers]).bit_length() + 1,
        }
        return {name: max(width, 1) for name, width in widths.items()}  # no Verilog range is ever empty

    def _dim_bits(self) -> int:
        """DIM_W: the bits of the largest map coordinate a row's engine counts (its buffers' sides, windows,
        output rows and columns, the taps' kernel offsets; signed fields in DIM_W + 1 bits), at least MIN_DIM_W.
        Maps in external memory count for nothing here: the moves count words (WORD_W, SEG_W)."""
        unsigned = [lane[d] for tile in self.taps for lane in tile for d in (1, 2)]
        signed = []
        for layer in self.layers:
            f = layer.fields
            unsigned += [f.get(k, 0) for k in DIM_FIELDS + ("sx", "sy")]
            signed += [f.get(k, 0) for k in SIGNED_DIM_FIELDS]
            if layer.kind == ARRAY:  # the output rows its pixel walk counts
                unsigned.append(((f["ts"] - 1) * f["pt"] + f["pt_last"]) // f["out_w"])
            elif layer.kind == VECTOR:
                unsigned.append(f["pixels"] // f["vw"])
        # a signed v fits DIM_W + 1 bits when -2^DIM_W <= v < 2^DIM_W
        return max([MIN_DIM_W] + [v.bit_length() for v in unsigned] + [(v if v >= 0 else -v - 1).bit_length()
                                                                       for v in signed])


def _written(layer: Layer, out: FeatureMap) -> FeatureMap:
    """The rows of `out` a vector row writes: a band writing its rows into the whole map on chip
    (Band.written_row) writes its band's rows, not the map's; any other row, the map (or band buffer) it writes."""
    band = layer.row.band
    if band is None or out.holds:
        return out
    return replace(out, height=band.out_rows[1] - band.out_rows[0])


def _continues(row: LayerMap) -> int:
    """1 for a band of a global pool after a band of the same channels: the engine's totals carry on (every
    band writes the pooled values so far; the last band's are the pool's)."""
    return int(row.band is not None and row.band.in_rows[0] > 0)


def _per_channel(values, count: int) -> list[int]:
    values = [int(v) for v in values]
    return values * count if len(values) == 1 else values


def _pack(lanes, width: int) -> int:
    """Lane i in bits [i * width, (i + 1) * width), two's complement."""
    word, mask = 0, (1 << width) - 1
    for i, v in enumerate(lanes):
        word |= (int(v) & mask) << (i * width)
    return word
