"""The layer program's rows (docs/program.md, "Rows"): what one hardware step runs, its tiles, buffers, band
and copy, with the helpers every pass over them shares. The mapping (hlsgen.hw.mapping) makes them; banding,
batching, the queues and the stream overlap rewrite them; the RTL and the HLS C++ read them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..ir import Graph
from .tiling import ArrayTiles

ARRAY, VECTOR, NONE, DMA = "systolic_array", "vector_unit", "none", "dma"
LOOP_ORDER = "spatial > column > row"  # array tiles, outermost first (docs/hardware.md)


@dataclass(frozen=True)
class VectorTiles:
    lanes: int  # C
    channels: int
    passes: int  # L = ceil(channels / C); copies: 1
    positions: int  # pixels per pass (copies: ceil(output elements / C) beats)

    def to_json(self) -> dict:
        return {"lanes": self.lanes, "channels": self.channels, "passes": self.passes, "positions": self.positions}


@dataclass(frozen=True)
class BufferUse:
    name: str  # activation, weight, accumulator
    used: int  # bytes
    capacity: int

    def to_json(self) -> dict:
        return {"used": self.used, "capacity": self.capacity, "fraction": round(self.used / self.capacity, 4)}


@dataclass(frozen=True)
class Transfer:
    """Bytes a row moves through the external memory port."""

    what: str  # weights | feature_maps
    direction: str  # read | write
    bytes: int

    def to_json(self) -> dict:
        return {"what": self.what, "direction": self.direction, "bytes": self.bytes}


@dataclass(frozen=True)
class Move:
    """What a `dma` row copies (docs/program.md, "Feature maps in external memory"): rows [a, b) of an
    external map, `segments` runs of `segment_words` activation-memory words (one per channel block),
    between the feature-map image (from word `dram_word`, runs `dram_stride` apart) and an on-chip band
    buffer (from its base, runs `buffer_stride` apart)."""

    direction: str  # load (external memory -> buffer) | store
    tensor: str  # the external map
    buffer: str  # the on-chip band buffer
    rows: tuple[int, int]
    segments: int
    segment_words: int
    dram_word: int
    dram_stride: int
    buffer_stride: int
    channels: tuple[int, int] | None = None  # channels [c0, c1) of the map the buffer holds (None: all)

    @property
    def words(self) -> int:
        return self.segments * self.segment_words

    def to_json(self) -> dict:
        return {"direction": self.direction, "tensor": self.tensor, "buffer": self.buffer, "rows": list(self.rows),
                "channels": list(self.channels) if self.channels else None,
                "segments": self.segments, "segment_words": self.segment_words, "dram_word": self.dram_word,
                "dram_stride": self.dram_stride, "buffer_stride": self.buffer_stride}


@dataclass(frozen=True)
class Band:
    """The output rows one row of a layer split into bands computes (hlsgen.hw.banding)."""

    index: int
    count: int
    out_rows: tuple[int, int]  # rows [y0, y1) of the layer's output (after a fused MaxPool)
    in_rows: tuple[int, int]  # rows [a, b) of its input(s) the input buffer(s) hold
    pad_top: int  # the top padding in the buffer's coordinates: pad + a - y0 * pool * stride
    rows_computed: int  # output rows the engine computes (before a fused MaxPool): (y1 - y0) * pool
    channels: tuple[int, int] | None = None  # a channel-separable row's channels [c0, c1) (None: all)
    written_row: int = 0  # the written map's row its first output row goes to: 0 into a band buffer, y0 into an
    #                       output the band writes on chip (hlsgen.hw.banding)

    def to_json(self) -> dict:
        return {"index": self.index, "count": self.count, "out_rows": list(self.out_rows),
                "in_rows": list(self.in_rows), "pad_top": self.pad_top, "rows_computed": self.rows_computed,
                "channels": list(self.channels) if self.channels else None, "written_row": self.written_row}


@dataclass(frozen=True)
class LayerMap:
    name: str
    op: str
    unit: str
    kind: str  # conv, grouped_conv, depthwise, dense, pool, global_pool, elementwise, resize, interpolate, copy, reshape
    inputs: tuple[str, ...]  # activation inputs
    output: str
    input_shape: tuple[int, ...]
    output_shape: tuple[int, ...]
    macs: int
    cycles: int
    tiles: ArrayTiles | VectorTiles | None
    buffers: tuple[BufferUse, ...]
    weight_bytes: int = 0
    attrs: object = None  # the node's attrs (QConvAttrs geometry for the loop IR)
    live: tuple[str, ...] = ()  # feature maps in activation memory while the layer runs
    bits: tuple[int, int, int] = (8, 8, 8)  # input activation, output activation, weight bits (as quantized)
    input_shapes: tuple[tuple[int, ...], ...] = ()  # of every activation input
    nodes: tuple[str, ...] = ()  # graph nodes the row implements: the main node, then a fused MaxPool
    pool: tuple[int, int] | None = None  # the fused MaxPool's window (= stride; no padding, floor mode)
    acc_bits: int = 0  # accumulator width of an array row, as quantization chose it
    transfers: tuple[Transfer, ...] = ()  # through the external memory port
    band: Band | None = None  # a band of the layer (None: the whole layer)
    move: Move | None = None  # a dma row's copy
    wait: int = 0  # rows of the other queue that finish before this one starts (hlsgen.hw.queues)
    images: int = 1  # images one run of the row computes (a batched tail row: N, hlsgen.hw.batching)

    @property
    def dram_bytes(self) -> int:
        return sum(t.bytes for t in self.transfers)

    @property
    def weight_bits(self) -> int:
        return self.bits[2]

    def to_json(self, rows: int) -> dict:
        """The row as OUT/program.json holds it."""
        tiles = self.tiles.to_json(rows) if hasattr(self.tiles, "work") else (self.tiles.to_json() if self.tiles else {})
        row = {"name": self.name, "nodes": list(self.nodes), "op": self.op, "unit": self.unit, "kind": self.kind,
               "inputs": list(self.inputs), "output": self.output, "input_shape": list(self.input_shape),
               "input_shapes": [list(s) for s in self.input_shapes],
               "output_shape": list(self.output_shape), "fused_pool": list(self.pool) if self.pool else None,
               "tiles": tiles, "loop_order": LOOP_ORDER if self.unit == ARRAY else None,
               "bits": dict(zip(("input", "output", "weights"), self.bits)), "accumulator_bits": self.acc_bits or None,
               "weight_bytes": self.weight_bytes, "macs": self.macs, "cycles": self.cycles,
               "buffers": {b.name: [b.used, b.capacity] for b in self.buffers},
               "live": list(self.live), "transfers": [t.to_json() for t in self.transfers],
               "band": self.band.to_json() if self.band else None,
               "move": self.move.to_json() if self.move else None, "wait": self.wait, "images": self.images}
        return row


def tensor_bits(graph: Graph, tensor: str) -> int:
    return getattr(graph.quant.get(tensor), "bits", 8)


def tensor_bytes(graph: Graph, tensor: str) -> int:
    """Elements times one byte per value up to 8 bits (two up to 16, ...)."""
    return int(np.prod(graph.shape(tensor))) * math.ceil(tensor_bits(graph, tensor) / 8)


def written_offset(row: LayerMap, out) -> int:
    """The word of the written map `out` (its placement) where a row's first output pixel goes: a band writing
    an output on chip starts at its first row (Band.written_row), every other row at the map's start."""
    return row.band.written_row * out.width if row.band is not None else 0


def written_dw_offset(row: LayerMap, out) -> int:
    """written_offset's word in the depthwise window memory, whose rows are `out.dw_pitch` words apart."""
    return row.band.written_row * out.dw_pitch if row.band is not None else 0
