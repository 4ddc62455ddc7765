"""Map an integer graph onto a target: a hardware unit, tiles, cycles and buffer use for every layer.

Conv and Dense run on the systolic array, fed by the line buffer (sliding windows formed on the fly, no
im2col copy); depthwise Conv runs on the array in depthwise mode (docs/hardware.md); pooling, residual
QAdd, QMul, global pooling, QRequant, QLut, nearest upsampling (Resize) and copies run on the vector unit;
Reshape only changes addressing.
Anything that does not fit (activation, weight or accumulator memory, line buffer, operand or
accumulator width, device resources) raises MappingError naming the layer and what overflows.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import MappingError, UnsupportedModelError
from ..ir import Graph, Node
from . import cycles as cyc
from .banding import finish_moves, fit_activation_memory
from .batching import Batching, batch_rows, check_on_chip
from .groups import groups_per_chunk
from .overlay_memory import memory_split
from .placement import Memory, map_shape, odd_channels, reduction_channels
from .queues import schedule, with_waits
from .resources import estimate, fit
from .rows import ARRAY, DMA, NONE, VECTOR, BufferUse, LayerMap, Transfer, VectorTiles, tensor_bits
from .stream_overlap import StreamOverlap, overlap_first_row
from .target import Target
from .tiling import ACC_BYTES, ArrayWork, search_tiles
from .window_banks import kernel_taps, window_pitch

PROGRAM_SCHEMA = 6  # 2: rows carry `wait` (hlsgen.hw.queues); 3: `batch` and rows' `images`; 4: `stream_overlap`;
# 5: array tiles' `weight_hidden`; 6: the depthwise window memory in R banks, maps' `depthwise_pitch`
WINDOW_POOLS = ("MaxPool",)
ELEMENTWISE = ("QAdd", "QMul", "QRequant", "QLut")
COPIES = ("Concat", "Transpose", "Pad", "Interleave")
SWAP_ROWS_COLUMNS = (0, 1, 3, 2)  # the Transpose the vector unit runs (a pass over the output pixels)
MAX_FUSED_POOL = 15  # the writer counts pooling windows in 4 bits


@dataclass(frozen=True)
class Mapping:
    target: Target
    graph_name: str
    layers: tuple[LayerMap, ...]
    input_elements: int
    output_elements: int
    resources: dict = field(default_factory=dict)
    fit: dict = field(default_factory=dict)
    memory: Memory | None = None  # where every feature map lives
    weights_external: bool = False  # the weights exceed the weight memory: they stream from external memory
    program_external: bool = False  # the RTL reads its layer table from the program image (CONTROL.load)
    batching: Batching | None = None  # which rows run once for N images (None: batch 1)
    stream: StreamOverlap | None = None  # the first row runs under the input stream (hlsgen.hw.stream_overlap)

    @property
    def maps_external(self) -> bool:
        """Some feature maps live in external memory (banded rows move them)."""
        return any(layer.unit == DMA for layer in self.layers)

    @property
    def input_in_dram(self) -> bool:
        """The host writes the input into the feature-map image: there is no input stream."""
        return self.memory is not None and any(m.dram_base is not None and m.birth < 0 for m in self.memory.maps)

    @property
    def residency(self) -> dict:
        return {"weights": "external" if self.weights_external else "on_chip",
                "feature_maps": "external" if self.maps_external else "on_chip",
                "input": "external" if self.input_in_dram else "stream",
                "program": "external" if self.program_external else "rom"}

    @property
    def packed_input(self) -> bool:
        """The input image, of a channel count that neither divides R nor is a multiple of it, is packed into
        G > 1 banks (hlsgen.hw.placement.choose_banks), not kept whole in every bank."""
        return self.memory is not None and any(m.birth < 0 and not m.holds and m.banks > 1
                                               and odd_channels(m.channels, self.target.array.rows)
                                               for m in self.memory.maps)

    def placement(self, tensor: str):
        return self.memory.placement(tensor)

    def to_json(self) -> dict:
        """OUT/program.json: the layer program every back end reads (docs/program.md)."""
        t = self.target
        return {"schema": PROGRAM_SCHEMA, "model": self.graph_name,
                "target": {"name": t.name, "rows": t.array.rows, "cols": t.array.cols, "dataflow": t.array.dataflow},
                "rows": [layer.to_json(t.array.rows) for layer in self.layers],
                "memory": self.memory.to_json() if self.memory else None,
                "residency": self.residency,
                "batch": self.batching.to_json() if self.batching else {"images": 1, "tail": len(self.layers),
                                                                          "held": [], "held_bytes": 0},
                "cycles": {"input": self.images * self.input_elements, "layers": self.layer_cycles,
                           "output": self.images * self.output_elements, "total": self.cycles},
                "stream_overlap": self.stream.to_json() if self.stream else None,
                "resources": self.resources, "fit": self.fit}

    @property
    def images(self) -> int:
        """Images per run of the program (--batch N; 1: latency mode)."""
        return self.batching.images if self.batching else 1

    def runs(self, index: int) -> int:
        """How often row `index` runs per run of the program (a head row once per image)."""
        return self.batching.runs(index) if self.batching else 1

    @property
    def macs(self) -> int:
        return sum(self.runs(i) * layer.macs for i, layer in enumerate(self.layers))

    @property
    def layer_cycles(self) -> int:
        """The rows' cycles on the two queues (hlsgen.hw.queues): the DMA unit's copies beside the engines.
        Batched: the head's N times, then the tail's (it starts when the last image's head has ended)."""
        if self.images == 1:  # the first row's cycles under the input stream are not the layers'
            rows = list(self.layers)
            if self.stream is not None:
                rows[0] = replace(rows[0], cycles=rows[0].cycles - self.stream.hidden)
            return max((end for _, end in schedule(rows)), default=0)
        tail = self.batching.tail
        head = max((end for _, end in schedule(list(self.layers[:tail]))), default=0)
        return self.images * head + sum(layer.cycles for layer in self.layers[tail:])

    @property
    def cycles(self) -> int:
        """One run of the program: its N images in, through the layers, out."""
        return cyc.inference_cycles(self.images * self.input_elements, [self.layer_cycles],
                                    self.images * self.output_elements)

    @property
    def overlapped_cycles(self) -> int:
        """Cycles of the first row that run while the input streams in (hlsgen.hw.stream_overlap)."""
        return self.stream.hidden if self.stream else 0

    @property
    def ideal_cycles(self) -> int:
        return cyc.ideal_cycles(self.macs, self.target.array.rows, self.target.array.cols)

    @property
    def utilization(self) -> float:
        return cyc.utilization(self.macs, self.cycles, self.target.array.rows, self.target.array.cols)

    def layer(self, name: str) -> LayerMap:
        return next(layer for layer in self.layers if layer.name == name)


def map_model(graph: Graph, target: Target, fuse_pools: bool = True, program: str = "rom",
              packed: bool | None = None, batch: int = 1) -> Mapping:
    """The layer program of the integer graph `graph` on `target` (topological order = execution order).
    `fuse_pools=False` gives every MaxPool a row of its own (the per-layer dataflow HLS design's program).
    `program`: where the RTL's program lives, `rom` (the model's own top) or `external` (the target's top loads
    it: every weight streams from external memory, so the cycles charge that traffic, and the maps fit the
    top's split of the activation memory). `hlsgen build --program auto` chooses between them.
    An input image of a channel count that neither divides R nor is a multiple of it (RGB; 40 mel bands) is
    kept whole in every bank (G = 1, its readers' taps unpadded) unless that puts it or other maps in external
    memory (or does not fit at all): then also packed (hlsgen.hw.placement.choose_banks: G = few_channel_banks
    or R, C times or R times fewer words to hold and to load, padded taps), and the program with fewer cycles
    is kept (`packed` True or False: that layout only).
    `batch` N > 1: throughput mode, N images per run, the Dense tail batched (hlsgen.hw.batching)."""
    if batch > 1:
        return _batched_model(graph, target, fuse_pools, program, packed, batch)
    return _map_layouts(graph, target, fuse_pools, program, packed, batch)


def _map_layouts(graph: Graph, target: Target, fuse_pools: bool, program: str, packed: bool | None,
                 batch: int) -> Mapping:
    """The program in the input layout `packed`, or (None) in the one with fewer cycles (map_model)."""
    if packed is not None:
        return _map_model(graph, target, fuse_pools, program, packed, batch)
    whole = failure = None
    try:
        whole = _map_model(graph, target, fuse_pools, program, False, batch)
    except MappingError as error:
        failure = error
    if not _odd_channel_inputs(graph, target) or (whole is not None and not whole.input_in_dram
                                                    and not whole.maps_external):
        if failure is not None:
            raise failure
        return whole
    try:
        packed = _map_model(graph, target, fuse_pools, program, True, batch)
    except MappingError:
        if whole is None:
            raise
        return whole  # the packed layout's own rows may not fit where the whole one's do
    return packed if whole is None or packed.cycles < whole.cycles else whole


def _batched_model(graph: Graph, target: Target, fuse_pools: bool, program: str, packed: bool | None,
                   batch: int) -> Mapping:
    """map_model at `batch` images per run; where its maps do not fit on chip, the MappingError names the
    largest batch that does (bisection: a batch's maps only grow with it)."""
    def attempt(n: int) -> Mapping:
        return _map_layouts(graph, target, fuse_pools, program, packed, n)

    try:
        return attempt(batch)
    except MappingError as error:
        failure = error
    if attempt(1).maps_external:
        raise MappingError(f"--batch {batch}: the model keeps feature maps in external memory even at batch 1, and "
                           "a batch runs with every map on chip; build it with --batch 1") from None
    fits, over = 1, batch
    while over - fits > 1:
        middle = (fits + over) // 2
        try:
            attempt(middle)
            fits = middle
        except MappingError:
            over = middle
    why = str(failure) if str(failure).startswith("--batch") else f"--batch {batch}: {failure}"
    raise MappingError(f"{why}; use --batch {fits} or less" if fits > 1 else f"{why}; it builds at --batch 1 only") \
        from None


def _odd_channel_inputs(graph: Graph, target: Target) -> bool:
    """Whether an input image has a channel count that neither divides R nor is a multiple of it (the packed
    layout's case)."""
    return target.array.dataflow == "weight_stationary" and any(
        len(graph.shape(t)) >= 3 and odd_channels(map_shape(graph.shape(t))[0], target.array.rows)
        for t in graph.inputs)


def _map_model(graph: Graph, target: Target, fuse_pools: bool, program: str, packed: bool, batch: int) -> Mapping:
    if program not in ("rom", "external"):
        raise ValueError(f"program residency {program!r} is neither rom nor external")
    external = program == "external"
    if external and target.external_memory is None:
        raise MappingError(f"--program external reads the layer program from external memory, and target "
                           f"{target.name!r} has no external_memory")

    layers, weight_total, overflow = [], 0, None
    # the target's top loads the weights into its weight RAM as its weight ROM stores them (padded tiles)
    weight_size = _stored_weight_bytes if external else (lambda layer, _: layer.weight_bytes)
    for node, pool in _rows(graph, fuse_pools):
        mapper = _Layer(graph, node, target, packed)
        layer = mapper.run(BufferUse("activation", 0, target.buffers.input.bytes), [])
        if pool is not None:
            layer = _fused(graph, layer, pool)
        weight_total += weight_size(layer, target)
        if overflow is None and weight_total > target.buffers.weight.bytes:
            overflow = (mapper, weight_total)  # the first layer whose weights overflow the weight memory
        layers.append(layer)
    layers, batching = batch_rows(graph, layers, target, batch)  # the tail's maps hold N images: before the fit

    def weights(rows: list[LayerMap]) -> list[LayerMap]:
        """The rows with their weights streamed from external memory, when the weight memory overflows."""
        if overflow is None or target.external_memory is None:
            return rows
        return _prefetched([_external_weights(layer, target) if layer.unit == ARRAY else layer for layer in rows],
                           target)

    # maps that do not fit move to DRAM; the target's own top (external program) has its own split of the memory
    layers, memory = fit_activation_memory(graph, layers, target, weights, memory_split(target) if external else None)
    if overflow is not None:  # the weights live in external memory, streamed a tile at a time
        mapper, total = overflow
        if target.external_memory is None:
            mapper.fail(f"the weights up to this layer need {total:,} bytes, more than the weight memory "
                        f"(buffers.weight = {target.buffers.weight.kib} KiB), and the target has no external_memory")
        layers = weights(layers)
    used = estimate(target, external)
    budget = fit(target, used)
    if not budget["ok"]:
        name = next(n for n in ("dsp", "lut", "ff", "bram_18k") if used[n] > budget["budget"][n])
        raise MappingError(f"target {target.name!r} does not fit its device {target.device.part}: the design needs "
                           f"{used[name]:,} {name.upper()}, the device has {budget['budget'][name]:,}")
    elements = lambda names: sum(int(np.prod(graph.shape(t))) for t in names)  # noqa: E731
    layers = with_waits(finish_moves(layers, memory, target), memory)
    check_on_chip(layers, memory, batching)
    streamed = [t for t in graph.inputs if memory.placement(t).dram_base is None]  # the host writes the others
    layers, stream = overlap_first_row(layers, memory, target, elements(streamed), batch)
    return Mapping(target, graph.name, tuple(layers), elements(streamed), elements(graph.outputs), used, budget,
                   memory, overflow is not None, external, batching if batch > 1 else None, stream)


def _stored_weight_bytes(layer: LayerMap, target: Target) -> int:
    """Bytes of an array row's weights as the weight ROM stores them (hlsgen.rtl.weight_rom): every tile R rows
    of C weights at the row's width, padded lanes and columns included."""
    if layer.unit != ARRAY:
        return 0
    t = layer.tiles
    rows, cols = target.array.rows, target.array.cols
    return math.ceil(t.work.groups * t.row_tiles * rows * t.col_tiles * cols * layer.weight_bits / 8)


def _external_weights(layer: LayerMap, target: Target) -> LayerMap:
    """An array row whose weights stream from external memory: the weight memory double-buffers one tile
    (R x C weights at the row's width) while the previous one computes; a tile that arrives slower than
    its predecessor streams stalls the array (ArrayTiles.weight_load)."""
    memory, R, C = target.external_memory, target.array.rows, target.array.cols
    tile_bytes = math.ceil(R * C * layer.weight_bits / 8)
    tiles = replace(layer.tiles, weight_load=memory.transfer_cycles(tile_bytes), weight_latency=memory.read_latency)
    loads = tiles.work.groups * tiles.spatial_tiles * tiles.col_tiles * tiles.row_tiles
    buffers = tuple(BufferUse("weight", 2 * tile_bytes, b.capacity) if b.name == "weight" else b for b in layer.buffers)
    return replace(layer, tiles=tiles, cycles=tiles.cycles(R, C), buffers=buffers,
                   transfers=(Transfer("weights", "read", loads * tile_bytes),))


def _prefetched(rows: list[LayerMap], target: Target) -> list[LayerMap]:
    """The weight DMA walks the next row's tiles while the current row of the layer table runs (rtl/
    hg_weight_dma.v): an array row whose weights stream waits for its first tile only as long as the row
    before it in the table (its `cycles`) did not cover (ArrayTiles.weight_hidden); a program's first row
    waits in full."""
    done, before = [], None
    for layer in rows:
        if layer.unit == ARRAY and layer.tiles.weight_load is not None and before is not None:
            tiles = replace(layer.tiles, weight_hidden=before.cycles)
            layer = replace(layer, tiles=tiles, cycles=tiles.cycles(target.array.rows, target.array.cols))
        if layer.unit != DMA and layer.kind != "reshape":  # the layer table's rows (hlsgen.rtl.program)
            before = layer
        done.append(layer)
    return done


def fusable_pool(graph: Graph, node: Node, producer: Node | None) -> str | None:
    """Why MaxPool `node` cannot run in the writer of `producer` (the row computing its input), or None:
    the writer pools disjoint windows (stride = kernel, no padding, floor mode) of a map nothing else reads."""
    a, x = node.attrs, node.inputs[0]
    if producer is None or producer.op in ("Reshape", "MaxPool") or len(graph.consumers(x)) != 1 or x in graph.outputs:
        return "its input is read by another layer, is a model output or is not computed by a layer"
    if producer.op in COPIES:  # a copy writes element by element in its source's order, not pixels in raster order
        return f"its input is computed by a {producer.op}, whose writes do not reach the writer's pooling"
    if (len(a.kernel_shape) != 2 or tuple(a.strides) != tuple(a.kernel_shape) or any(a.pads) or
            any(d != 1 for d in a.dilations) or a.ceil_mode or max(a.kernel_shape) > MAX_FUSED_POOL):
        return (f"its windows overlap, are padded or exceed {MAX_FUSED_POOL} (only 2-D MaxPool with stride = kernel, "
                "no padding, floor mode runs in the writer)")
    return None


def _rows(graph: Graph, fuse_pools: bool) -> list[tuple[Node, Node | None]]:
    """The program's rows: (node, MaxPool fused into its writer or None), in execution order."""
    rows: list[tuple[Node, Node | None]] = []
    row_of: dict[str, int] = {}  # tensor -> the row that computes it
    for node in graph.topological():
        producer = row_of.get(node.inputs[0]) if node.op == "MaxPool" and fuse_pools else None
        if producer is not None and rows[producer][1] is None and \
                fusable_pool(graph, node, rows[producer][0]) is None:
            rows[producer] = (rows[producer][0], node)
            row_of[node.outputs[0]] = producer
            continue
        row_of[node.outputs[0]] = len(rows)
        rows.append((node, None))
    return rows


def _fused(graph: Graph, layer: LayerMap, pool: Node) -> LayerMap:
    """The row of `layer` with MaxPool `pool` in its writer: the array or vector unit runs as before, the
    writer keeps each window's maximum (no extra cycles: it compares as the values arrive)."""
    out = pool.outputs[0]
    return replace(layer, name=f"{layer.name}+{pool.name}", nodes=(*layer.nodes, pool.name),
                   pool=tuple(pool.attrs.kernel_shape), output=out, output_shape=tuple(graph.shape(out)),
                   bits=(layer.bits[0], tensor_bits(graph, out), layer.bits[2]))


class _Layer:
    def __init__(self, graph: Graph, node: Node, target: Target, packed: bool = False):
        self.graph, self.node, self.target, self.packed = graph, node, target, packed
        self.R, self.C = target.array.rows, target.array.cols
        self.x = node.inputs[0]
        self.xs, self.ys = graph.shape(self.x), graph.shape(node.outputs[0])

    def fail(self, why: str):
        raise MappingError(f"{self.graph.describe(self.node.name)}: {why}")

    def run(self, activation: BufferUse, live: list[str]) -> LayerMap:
        op = self.node.op
        if op in ("QConv", "QDense"):
            unit, kind, tiles, macs, cycles, extra, wbytes = self._array()
        elif op in WINDOW_POOLS or (op == "QAveragePool" and self.node.attrs.pool is not None):
            self._check_rank()
            unit, kind, tiles, _, extra = self._vector("pool", self._batch_pixels(self.ys))
            pool = self.node.attrs if op in WINDOW_POOLS else self.node.attrs.pool
            cycles = cyc.window_pool_cycles(tiles.passes, tiles.positions, math.prod(pool.kernel_shape))
            macs, wbytes = 0, 0
        elif op in ("GlobalMaxPool", "QAveragePool"):
            unit, kind, tiles, cycles, extra = self._vector("global_pool", self._batch_pixels(self.xs))
            macs, wbytes = 0, 0
        elif op in ELEMENTWISE:
            unit, kind, tiles, cycles, extra = self._vector("elementwise", self._batch_pixels(self.ys))
            macs, wbytes = 0, 0
        elif op == "Resize":  # a pass over the output pixels, each read from its source pixel
            unit, kind, tiles, cycles, extra = self._vector("resize", self._batch_pixels(self.ys))
            macs, wbytes = 0, 0
        elif op == "QResample":  # a window tap per cycle: the 2 x 2 (1-D: 2) source pixels of an output pixel, or
            self._check_rank()  # the one it picks
            unit, kind, tiles, _, extra = self._vector("interpolate", self._batch_pixels(self.ys))
            taps = 1 if self.node.attrs.pick else 2 ** len(self.node.attrs.scales)
            cycles = cyc.window_pool_cycles(tiles.passes, tiles.positions, taps)
            macs, wbytes = 0, 0
        elif op in COPIES:
            count = int(np.prod(self.ys))
            tiles = VectorTiles(self.C, count, 1, math.ceil(count / self.C))
            unit, kind, cycles, extra, macs, wbytes = VECTOR, "copy", self._copy_cycles(count), (), 0, 0
        elif op == "Reshape":
            self._check_reshape_readers()
            unit, kind, tiles, cycles, extra, macs, wbytes = NONE, "reshape", None, 0, (), 0, 0
        else:
            self.fail("no hardware unit implements this op")
        inputs = tuple(t for t in self.node.inputs if t and t not in self.graph.constants)
        bits = (self._bits(self.x), self._bits(self.node.outputs[0]), self.node.attrs.weight_bits if unit == ARRAY else 0)
        return LayerMap(self.node.name, op, unit, kind, inputs, self.node.outputs[0], tuple(self.xs), tuple(self.ys),
                        macs, cycles, tiles, (activation, *extra), wbytes, self.node.attrs, tuple(live), bits,
                        tuple(tuple(self.graph.shape(t)) for t in inputs), (self.node.name,),
                        acc_bits=self.node.attrs.acc_bits if unit == ARRAY else 0)

    def _check_reshape_readers(self) -> None:
        """A Reshape moves nothing: its output is its input's map, as it is laid out in the activation memory
        (channel blocks of pixels). Only a Dense reads that as the flattened vector; any other reader of a
        map whose channels the Reshape changes would read the elements in the wrong places. A map of one pixel
        too: its channels made pixels (a 1x1 map made NHWC and reshaped to (H*W, c) = (1, c)) are read as one
        channel's pixels, at words of bank 0 its channels do not occupy (channel c lives in bank c mod G)."""
        channels = map_shape(self.graph.shape(self._stored(self.x)))[0]
        same_layout = map_shape(self.graph.shape(self.node.outputs[0]))[0] == channels  # pixels only regrouped
        readers = sorted({r.op for r in self.graph.consumers(self.node.outputs[0]) if r.op != "QDense"})
        if readers and not same_layout:
            raise UnsupportedModelError(f"{self.graph.describe(self.node.name)}: the accelerator reads a flattened "
                                        f"map only into a Dense layer, not into {', '.join(readers)}")

    def _bits(self, tensor: str) -> int:
        return tensor_bits(self.graph, tensor)

    def _copy_cycles(self, count: int) -> int:
        """A Concat, an Interleave and a standalone Pad of pixels run as vector passes over output pixels
        (docs/rtl.md, "Copies"): a pass per input of a Concat or an Interleave (its channel blocks x its
        pixels), a window tap per output pixel of a Pad or of a Transpose of rows and columns; other copies
        (and axes) cost the copy engine's ceil(elements / C) beats."""
        node, rank = self.node, len(self.ys)
        if node.op == "Interleave" or node.op == "Concat" and node.attrs.axis >= 1 and rank in (2, 3, 4):
            return sum(cyc.vector_cycles(math.ceil(self.graph.shape(t)[1] / self.C),
                                         self._batch_pixels(self.graph.shape(t))) for t in node.inputs)
        if node.op == "Pad" and rank >= 3 and node.attrs.mode == "constant" and \
                not any(node.attrs.pads[i] or node.attrs.pads[i + rank] for i in (0, 1)):
            return cyc.vector_cycles(math.ceil(self.ys[1] / self.C), self._batch_pixels(self.ys))
        if node.op == "Transpose" and tuple(node.attrs.perm) == SWAP_ROWS_COLUMNS:
            return cyc.vector_cycles(math.ceil(self.ys[1] / self.C), self._batch_pixels(self.ys))
        return cyc.copy_cycles(count, self.C)

    # ---- systolic array ------------------------------------------------------------------------
    def _array(self):
        node, graph, target = self.node, self.graph, self.target
        w = graph.constants[node.inputs[1]]
        if node.op == "QConv":
            geometry = node.attrs.conv
            self._check_rank()
            groups, cin, m = geometry.group, self.xs[1], self.ys[1]
            # depthwise mode: a channel per column, reading its own input channel (a channel multiplier runs as a
            # grouped conv)
            taps = int(np.prod(geometry.kernel_shape))
            # its window must bank (hlsgen.hw.window_banks; a dilation of 2 on 16 banks does not): else grouped
            depthwise = (groups > 1 and cin // groups == 1 and m == groups and window_pitch(
                self.xs[-1], [kernel_taps(geometry.kernel_shape, geometry.dilations)], self.R) is not None)
            # a grouped conv runs its groups in chunks of s (block-diagonal weights, hlsgen.hw.groups)
            s = 1 if depthwise else groups_per_chunk(groups, cin // groups, m // groups, self.R)
            lanes = self._reduction_channels(s * cin // groups, taps)
            work = (ArrayWork(1, taps, m, self._batch_pixels(self.ys), True) if depthwise
                    else ArrayWork(groups // s, lanes * taps, s * m // groups, self._batch_pixels(self.ys), False,
                                   s * cin // groups, lanes, s))
            kind = "depthwise" if depthwise else ("grouped_conv" if groups > 1 else "conv")
        else:  # the map it reads, flattened: its pixels are the taps
            channels, height, width = map_shape(graph.shape(self._stored(self.x)))
            lanes = self._reduction_channels(channels, height * width)
            work = ArrayWork(1, height * width * lanes, int(w.shape[1]), int(self.xs[0]), False, channels, lanes)
            kind = "dense"
        self._check_widths()
        tiles = search_tiles(work, target)
        if tiles is None:
            self.fail(f"no spatial tile fits the accumulator buffer (buffers.accumulator = "
                      f"{target.buffers.accumulator.kib} KiB holds less than one {ACC_BYTES}-byte partial sum per column)")
        weight_bytes = math.ceil(int(w.size) * node.attrs.weight_bits / 8)  # packed at the chosen width
        if len(node.inputs) > 2 and node.inputs[2]:
            weight_bytes += ACC_BYTES * int(graph.constants[node.inputs[2]].size)
        acc_used = 0 if target.array.dataflow == "output_stationary" else tiles.spatial_tile * self.C * ACC_BYTES
        extra = (BufferUse("weight", weight_bytes, target.buffers.weight.bytes),
                 BufferUse("accumulator", acc_used, target.buffers.accumulator.bytes))
        return ARRAY, kind, tiles, self._model_macs(work, w), tiles.cycles(self.R, self.C), extra, weight_bytes

    def _model_macs(self, work: ArrayWork, w: np.ndarray) -> int:
        """The layer's MACs; of a convolution over pixel blocks the host folds, the original convolution's: the
        folded taps no original tap lands on (zero for every output channel) multiply nothing of the model
        (folded windows are the original's taps, one for one)."""
        fold = self.graph.input_folds.get(self.x)
        if fold is None or fold.windows:
            return work.macs
        used = np.any(w != 0, axis=0)  # [C, KY, KX]: what some original tap lands on
        return work.macs * int(used.sum()) // used.size

    def _stored(self, tensor: str) -> str:
        """The tensor whose map holds `tensor` (a Reshape's output is its input's map)."""
        producer = self.graph.producer(tensor)
        return self._stored(producer.inputs[0]) if producer is not None and producer.op == "Reshape" else tensor

    def _reduction_channels(self, channels: int, taps: int) -> int:
        """C_pad of the map this row reads (hlsgen.hw.placement: the input image keeps its taps unpadded unless
        packed; an output-stationary array streams the reduction through time, not across banked lanes)."""
        if self.target.array.dataflow != "weight_stationary":
            return channels
        return reduction_channels(channels, self.R, taps, self._stored(self.x) in self.graph.inputs, self.packed)

    def _check_widths(self) -> None:
        widths, weight_bits = self.target.widths, self.node.attrs.weight_bits
        if weight_bits > widths.operand_bits:
            self.fail(f"{weight_bits}-bit weights exceed the PE operand width (widths.operand_bits = "
                      f"{widths.operand_bits})")
        bits = self._bits(self.x)
        if bits > widths.operand_bits:
            self.fail(f"{bits}-bit input activations exceed the PE operand width (widths.operand_bits = "
                      f"{widths.operand_bits})")
        if self.node.attrs.acc_bits > widths.accumulator_bits:
            self.fail(f"needs a {self.node.attrs.acc_bits}-bit accumulator, wider than the array's "
                      f"(widths.accumulator_bits = {widths.accumulator_bits})")

    # ---- windows and the vector unit -------------------------------------------------------------
    def _check_rank(self) -> None:
        """The window generator reads 1-D and 2-D maps (any size: it addresses the activation memory)."""
        if len(self.xs) not in (3, 4):
            self.fail(f"only 1-D and 2-D windows run on the window generator (input rank {len(self.xs)})")

    def _vector(self, kind: str, positions: int):
        shape = self.ys if kind != "global_pool" else self.xs
        channels = shape[1] if len(shape) >= 2 else 1
        passes = math.ceil(channels / self.C)
        return VECTOR, kind, VectorTiles(self.C, channels, passes, positions), cyc.vector_cycles(passes, positions), ()

    @staticmethod
    def _batch_pixels(shape: tuple[int, ...]) -> int:
        """N * H * W (Dense-shaped [N, K] tensors: N)."""
        return int(shape[0]) * int(np.prod(shape[2:], dtype=np.int64))
