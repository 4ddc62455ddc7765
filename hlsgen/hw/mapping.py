"""Map an integer graph onto a target: a hardware unit, tiles, cycles and buffer use for every layer.

Conv and Dense run on the systolic array, fed by the line buffer (sliding windows formed on the fly, no
im2col copy); depthwise Conv runs on the array in depthwise mode (docs/hardware.md); pooling, residual
QAdd, global pooling, QRequant, QLut, nearest upsampling (Resize) and copies run on the vector unit;
Reshape only changes addressing.
Anything that does not fit (activation, weight or accumulator memory, line buffer, operand or
accumulator width, device resources) raises MappingError naming the layer and what overflows.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import MappingError
from ..ir import Graph, Node
from . import cycles as cyc
from .resources import estimate, fit
from .target import Target
from .tiling import ACC_BYTES, ArrayTiles, ArrayWork, search_tiles

ARRAY, VECTOR, NONE = "systolic_array", "vector_unit", "none"
WINDOW_POOLS = ("MaxPool",)
ELEMENTWISE = ("QAdd", "QRequant", "QLut")
COPIES = ("Concat", "Transpose", "Pad")


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
    name: str  # activation, weight, accumulator, line_buffer
    used: int  # bytes
    capacity: int

    def to_json(self) -> dict:
        return {"used": self.used, "capacity": self.capacity, "fraction": round(self.used / self.capacity, 4)}


@dataclass(frozen=True)
class LayerMap:
    name: str
    op: str
    unit: str
    kind: str  # conv, grouped_conv, depthwise, dense, pool, global_pool, elementwise, resize, copy, reshape
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
    bits: tuple[int, int, int] = (8, 8, 8)  # input activation, output activation, weight bits
    input_shapes: tuple[tuple[int, ...], ...] = ()  # of every activation input


@dataclass(frozen=True)
class Mapping:
    target: Target
    graph_name: str
    layers: tuple[LayerMap, ...]
    input_elements: int
    output_elements: int
    resources: dict = field(default_factory=dict)
    fit: dict = field(default_factory=dict)

    @property
    def macs(self) -> int:
        return sum(layer.macs for layer in self.layers)

    @property
    def cycles(self) -> int:
        return cyc.inference_cycles(self.input_elements, [layer.cycles for layer in self.layers], self.output_elements)

    @property
    def ideal_cycles(self) -> int:
        return cyc.ideal_cycles(self.macs, self.target.array.rows, self.target.array.cols)

    @property
    def utilization(self) -> float:
        return cyc.utilization(self.macs, self.cycles, self.target.array.rows, self.target.array.cols)

    def layer(self, name: str) -> LayerMap:
        return next(layer for layer in self.layers if layer.name == name)


def map_model(graph: Graph, target: Target) -> Mapping:
    """Map every node of the integer graph `graph` (topological order = execution order)."""
    nodes = list(graph.topological())
    live = _liveness(graph, nodes)
    layers, weight_total = [], 0
    for node, (live_bytes, live_names) in zip(nodes, live):
        mapper = _Layer(graph, node, target)
        if live_bytes > target.buffers.input.bytes:
            mapper.fail(f"live feature maps need {live_bytes:,} bytes ({', '.join(live_names)}), more than the "
                        f"activation memory (buffers.input = {target.buffers.input.kib} KiB)")
        layer = mapper.run(BufferUse("activation", live_bytes, target.buffers.input.bytes), live_names)
        weight_total += layer.weight_bytes
        if weight_total > target.buffers.weight.bytes:
            mapper.fail(f"the weights up to this layer need {weight_total:,} bytes, more than the weight memory "
                        f"(buffers.weight = {target.buffers.weight.kib} KiB)")
        layers.append(layer)
    used = estimate(target)
    budget = fit(target, used)
    if not budget["ok"]:
        name = next(n for n in ("dsp", "lut", "ff", "bram_18k") if used[n] > budget["budget"][n])
        raise MappingError(f"target {target.name!r} does not fit its device {target.device.part}: the design needs "
                           f"{used[name]:,} {name.upper()}, the device has {budget['budget'][name]:,}")
    elements = lambda names: sum(int(np.prod(graph.shape(t))) for t in names)  # noqa: E731
    return Mapping(target, graph.name, tuple(layers), elements(graph.inputs), elements(graph.outputs), used, budget)


def tensor_bytes(graph: Graph, tensor: str) -> int:
    """Elements times one byte per value up to 8 bits (two up to 16, ...)."""
    quant = graph.quant.get(tensor)
    width = math.ceil(getattr(quant, "bits", 8) / 8)
    return int(np.prod(graph.shape(tensor))) * width


def _liveness(graph: Graph, nodes: list[Node]) -> list[tuple[int, list[str]]]:
    """Per node: bytes and names of the feature maps live while it runs (Reshape outputs alias their input)."""
    root = {t: t for t in graph.inputs}
    birth = {t: -1 for t in graph.inputs}
    death = {t: -1 for t in graph.inputs}
    for i, node in enumerate(nodes):
        for t in node.inputs:
            if t in root:
                death[root[t]] = max(death[root[t]], i)
        out = node.outputs[0]
        if node.op == "Reshape":
            root[out] = root[node.inputs[0]]
        else:
            root[out], birth[out], death[out] = out, i, i
    for t in graph.outputs:
        death[root[t]] = len(nodes)  # streamed out after the last layer
    result = []
    for i in range(len(nodes)):
        names = [t for t in birth if birth[t] <= i <= death[t]]
        result.append((sum(tensor_bytes(graph, t) for t in names), names))
    return result


class _Layer:
    def __init__(self, graph: Graph, node: Node, target: Target):
        self.graph, self.node, self.target = graph, node, target
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
            self._check_line_buffer(self.node.attrs.pool if op == "QAveragePool" else self.node.attrs)
            unit, kind, tiles, cycles, extra = self._vector("pool", self._batch_pixels(self.ys))
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
        elif op in COPIES:
            count = int(np.prod(self.ys))
            tiles = VectorTiles(self.C, count, 1, math.ceil(count / self.C))
            unit, kind, cycles, extra, macs, wbytes = VECTOR, "copy", cyc.copy_cycles(count, self.C), (), 0, 0
        elif op == "Reshape":
            unit, kind, tiles, cycles, extra, macs, wbytes = NONE, "reshape", None, 0, (), 0, 0
        else:
            self.fail("no hardware unit implements this op")
        inputs = tuple(t for t in self.node.inputs if t and t not in self.graph.constants)
        bits = (self._bits(self.x), self._bits(self.node.outputs[0]),
                self._weight_bits(self.graph.constants[self.node.inputs[1]]) if unit == ARRAY else 0)
        return LayerMap(self.node.name, op, unit, kind, inputs, self.node.outputs[0], tuple(self.xs), tuple(self.ys),
                        macs, cycles, tiles, (activation, *extra), wbytes, self.node.attrs, tuple(live), bits,
                        tuple(tuple(self.graph.shape(t)) for t in inputs))

    def _bits(self, tensor: str) -> int:
        return getattr(self.graph.quant.get(tensor), "bits", 8)

    # ---- systolic array ------------------------------------------------------------------------
    def _array(self):
        node, graph, target = self.node, self.graph, self.target
        w = graph.constants[node.inputs[1]]
        if node.op == "QConv":
            geometry = node.attrs.conv
            if len(self.xs) not in (3, 4):
                self.fail(f"only 1-D and 2-D convolutions map to the line buffer (input rank {len(self.xs)})")
            self._check_line_buffer(geometry)
            groups, cin, m = geometry.group, self.xs[1], self.ys[1]
            depthwise = groups > 1 and cin // groups == 1
            taps = int(np.prod(geometry.kernel_shape))
            work = (ArrayWork(1, taps, m, self._batch_pixels(self.ys), True) if depthwise
                    else ArrayWork(groups, cin // groups * taps, m // groups, self._batch_pixels(self.ys)))
            kind = "depthwise" if depthwise else ("grouped_conv" if groups > 1 else "conv")
        else:
            work = ArrayWork(1, int(np.prod(self.xs[1:])), int(w.shape[1]), int(self.xs[0]))
            kind = "dense"
        self._check_widths(w)
        tiles = search_tiles(work, target)
        if tiles is None:
            self.fail(f"no spatial tile fits the accumulator buffer (buffers.accumulator = "
                      f"{target.buffers.accumulator.kib} KiB holds less than one {ACC_BYTES}-byte partial sum per column)")
        weight_bytes = int(w.size) * math.ceil(self._weight_bits(w) / 8)
        if len(node.inputs) > 2 and node.inputs[2]:
            weight_bytes += ACC_BYTES * int(graph.constants[node.inputs[2]].size)
        acc_used = 0 if target.array.dataflow == "output_stationary" else tiles.spatial_tile * self.C * ACC_BYTES
        extra = (BufferUse("weight", weight_bytes, target.buffers.weight.bytes),
                 BufferUse("accumulator", acc_used, target.buffers.accumulator.bytes))
        if node.op == "QConv":
            extra += (self._line_buffer_use(node.attrs.conv),)
        return ARRAY, kind, tiles, work.macs, tiles.cycles(self.R, self.C), extra, weight_bytes

    def _weight_bits(self, w: np.ndarray) -> int:
        return max(int(np.abs(w.astype(np.int64)).max(initial=0)).bit_length() + 1, 2)

    def _check_widths(self, w: np.ndarray) -> None:
        widths = self.target.widths
        if self._weight_bits(w) > widths.operand_bits:
            self.fail(f"{self._weight_bits(w)}-bit weights exceed the PE operand width (widths.operand_bits = "
                      f"{widths.operand_bits})")
        bits = self._bits(self.x)
        if bits > widths.operand_bits:
            self.fail(f"{bits}-bit input activations exceed the PE operand width (widths.operand_bits = "
                      f"{widths.operand_bits})")
        if self.node.attrs.acc_bits > widths.accumulator_bits:
            self.fail(f"needs a {self.node.attrs.acc_bits}-bit accumulator, wider than the array's "
                      f"(widths.accumulator_bits = {widths.accumulator_bits})")

    # ---- line buffer and vector unit -------------------------------------------------------------
    def _window(self, geometry) -> tuple[int, int, int]:
        """(input row width, kernel extent rows, kernel extent cols) with dilation."""
        k, d = geometry.kernel_shape, geometry.dilations
        extents = [(kk - 1) * dd + 1 for kk, dd in zip(k, d)]
        return self.xs[-1], (extents[0] if len(extents) == 2 else 1), extents[-1]

    def _check_line_buffer(self, geometry) -> None:
        lb = self.target.line_buffer
        width, eh, ew = self._window(geometry)
        if len(self.xs) not in (3, 4):
            self.fail(f"only 1-D and 2-D windows map to the line buffer (input rank {len(self.xs)})")
        if width > lb.max_row_width:
            self.fail(f"input rows of {width} pixels exceed the line buffer (line_buffer.max_row_width = {lb.max_row_width})")
        if self.xs[1] > lb.max_channels:
            self.fail(f"{self.xs[1]} input channels exceed the line buffer (line_buffer.max_channels = {lb.max_channels})")
        if max(eh, ew) > lb.max_kernel:
            self.fail(f"a {eh}x{ew} window (kernel with dilation) exceeds the line buffer "
                      f"(line_buffer.max_kernel = {lb.max_kernel})")

    def _line_buffer_use(self, geometry) -> BufferUse:
        lb = self.target.line_buffer
        width, eh, _ = self._window(geometry)
        per_value = math.ceil(self._bits(self.x) / 8)
        return BufferUse("line_buffer", eh * width * self.xs[1] * per_value,
                         lb.max_kernel * lb.max_row_width * lb.max_channels)

    def _vector(self, kind: str, positions: int):
        shape = self.ys if kind != "global_pool" else self.xs
        channels = shape[1] if len(shape) >= 2 else 1
        passes = math.ceil(channels / self.C)
        extra = ()
        if kind == "pool":
            attrs = self.node.attrs.pool if self.node.op == "QAveragePool" else self.node.attrs
            extra = (self._line_buffer_use(attrs),)
        return VECTOR, kind, VectorTiles(self.C, channels, passes, positions), cyc.vector_cycles(passes, positions), extra

    @staticmethod
    def _batch_pixels(shape: tuple[int, ...]) -> int:
        """N * H * W (Dense-shaped [N, K] tensors: N)."""
        return int(shape[0]) * int(np.prod(shape[2:], dtype=np.int64))
