"""The RTL program of a model: its layers in the order the sequencer runs them, each a row of the
generated top's layer table (configuration fields of the array engine, the vector engine and the
writer), the feature maps' places in activation memory, and the ROM contents (weight tiles, tap tables,
per-channel requantization parameters, lookup tables).

Array layers reduce over k = tap * C_in + c_in (the input channel fastest): row tile t gives lane r the
index t * R + r. Every other choice follows docs/hardware.md: tiles of R reduction lanes and C output
channels, spatial tiles of at most D pixels, tile order spatial > column > row.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import MappingError
from ..hw.target import Target
from ..hw.tiling import accumulator_depth
from ..ir import Graph, Node
from .layout import FeatureMap, allocate, allocate_copies, choose_banks, map_shape

ARRAY, VECTOR = 0, 1
OP_ADD, OP_REQ, OP_LUT, OP_GAVG, OP_GMAX = range(5)
PARAM_FIELDS = 38  # per lane, besides the bias: multiplier (16), negative multiplier (16), shift (6)
DIM_LIMIT = 255
DIM_W = 8
ACT_BITS = 8  # the activation memory, the writer and the streams hold bytes
VECTOR_OPS = ("QAdd", "QRequant", "QLut", "QAveragePool", "GlobalMaxPool", "Resize")
MAX_UPSAMPLING = 16  # the vector engine counts upsampling factors in 4 bits


@dataclass
class Layer:
    name: str
    kind: int
    node: Node
    inputs: list[str]  # feature maps read
    output: str  # feature map written
    covers: list[str]  # graph nodes it implements (a fused MaxPool adds its own)
    fields: dict[str, int] = field(default_factory=dict)
    pool: Node | None = None


@dataclass
class Program:
    name: str
    graph: Graph  # the integer graph
    target: Target
    layers: list[Layer]
    maps: dict[str, FeatureMap]
    input_map: str
    output_map: str
    plane_depth: tuple[int, int]
    weights: list[int]  # words of C weights
    taps: list[int]  # words of R lane taps
    params: list[int]  # words of C lanes of {bias, multiplier, negative multiplier, shift}
    lut: list[int]  # lookup-table entries, every table one after the other
    widths: dict[str, int]
    dw_copies: int  # depthwise window copies (0: no depthwise layer)
    dw_depth: int

    @property
    def rows(self) -> int:
        return self.target.array.rows

    @property
    def cols(self) -> int:
        return self.target.array.cols


def compile_program(graph: Graph, target: Target) -> Program:
    return _Compiler(graph, target).run()


class _Compiler:
    def __init__(self, graph: Graph, target: Target):
        self.graph, self.target = graph, target
        self.R, self.C = target.array.rows, target.array.cols
        self.D = accumulator_depth(target)
        self.layers: list[Layer] = []
        self.storage: dict[str, str] = {}  # tensor -> the feature map that holds it
        self.weights: list[int] = []
        self.taps: list[int] = []
        self.params: list[int] = []
        self.lut: list[int] = []

    def fail(self, node: Node, why: str):
        raise MappingError(f"{self.graph.describe(node.name)} has no RTL implementation: {why}")

    def run(self) -> Program:
        g, R, C = self.graph, self.R, self.C
        if R != C or R & (R - 1):
            raise MappingError(f"the RTL needs a square array with a power-of-two side, not {R} x {C}")
        if self.target.array.dataflow != "weight_stationary":
            raise MappingError("the RTL implements the weight-stationary dataflow only "
                                        f"(target {self.target.name} is {self.target.array.dataflow})")
        if len(g.inputs) != 1 or len(g.outputs) != 1:
            raise MappingError("the RTL streams one input and one output")
        widths = self.target.widths
        if widths.operand_bits > 8 or widths.accumulator_bits > 48:
            raise MappingError("the RTL keeps activations in bytes and partial sums in at most 48 bits "
                                        f"(target {self.target.name}: {widths.operand_bits}-bit operands, "
                                        f"{widths.accumulator_bits}-bit accumulators)")
        self.storage[g.inputs[0]] = g.inputs[0]
        for node in g.topological():
            self._schedule(node)
        maps = self._maps()
        # addresses, and strides up to a whole plane
        self.addr_w = max([*self.depths, self.dw_depth] + [m.pixels for m in maps.values()]).bit_length()
        self.tap_w = 1 + 2 * DIM_W + self.addr_w
        # the weight ROM and the PEs hold the model's widest integer weight, not the target's operand width
        weights = [self.graph.constants[layer.node.inputs[1]] for layer in self.layers if layer.kind == ARRAY]
        self.weight_w = max([2] + [int(np.abs(w.astype(np.int64)).max(initial=0)).bit_length() + 1 for w in weights])
        for layer in self.layers:
            (self._array_fields if layer.kind == ARRAY else self._vector_fields)(layer, maps)
            self._writer_fields(layer, maps[layer.output])
        output = self.storage[g.outputs[0]]
        widths = self._widths(maps)
        return Program(g.name, g, self.target, self.layers, maps, g.inputs[0], output, self.depths, self.weights,
                       self.taps, self.params, self.lut, widths, self.dw_copies, self.dw_depth)

    # ---- which hardware runs each node ---------------------------------------------------------
    def _schedule(self, node: Node) -> None:
        x = node.inputs[0]
        if node.op == "Reshape":
            self.storage[node.outputs[0]] = self.storage[x]
        elif node.op == "MaxPool":
            self._fuse_pool(node)
        elif node.op in ("QConv", "QDense"):
            if node.op == "QConv" and node.attrs.conv.group != 1 and not _depthwise(node, self.graph):
                self.fail(node, "grouped convolutions other than depthwise (one input and one output channel per "
                                "group) are not implemented in the RTL")
            self._add_layer(node, ARRAY, [x])
        elif node.op in VECTOR_OPS:
            if node.op == "QAveragePool" and node.attrs.pool is not None:
                self.fail(node, "only global average pooling is implemented in the RTL")
            inputs = [t for t in node.inputs if t not in self.graph.constants]
            self._add_layer(node, VECTOR, inputs)
        else:
            self.fail(node, "no RTL unit implements this op")

    def _add_layer(self, node: Node, kind: int, inputs: list[str]) -> None:
        for t in inputs:  # a Reshape only renames a map when a Dense reads it flattened
            if self.storage[t] != t and not (node.op == "QDense" and len(self.graph.shape(t)) == 2):
                self.fail(node, f"it reads {t!r}, a reshaped feature map; only a Dense layer may (as a Flatten)")
        if node.op == "QConv" and max(node.attrs.conv.strides) > 15:
            self.fail(node, "strides above 15 are not implemented in the RTL")
        out = node.outputs[0]
        self.storage[out] = out
        self.layers.append(Layer(node.name, kind, node, [self.storage[t] for t in inputs], out, [node.name]))

    def _fuse_pool(self, node: Node) -> None:
        """A MaxPool with disjoint windows (stride = kernel, no padding, floor mode) right after the
        layer that computes its only input becomes part of that layer's writer."""
        a, x = node.attrs, node.inputs[0]
        producer = next((layer for layer in self.layers if layer.output == x), None)
        if producer is None or producer.pool is not None or len(self.graph.consumers(x)) != 1 or x in self.graph.outputs:
            self.fail(node, "a MaxPool runs fused into the layer that computes its input, which must have no other reader")
        if (len(a.kernel_shape) != 2 or tuple(a.strides) != tuple(a.kernel_shape) or any(a.pads) or
                any(d != 1 for d in a.dilations) or a.ceil_mode or max(a.kernel_shape) > 15):
            self.fail(node, "only MaxPool with disjoint windows (stride = kernel, no padding, floor mode) is implemented")
        producer.pool = node
        producer.output = node.outputs[0]
        producer.covers.append(node.name)
        producer.name = f"{producer.name}+{node.name}"
        self.storage[node.outputs[0]] = node.outputs[0]

    # ---- feature maps ------------------------------------------------------------------------------
    def _maps(self) -> dict[str, FeatureMap]:
        g = self.graph
        maps: dict[str, FeatureMap] = {}

        def add(name: str, birth: int):
            c, h, w = map_shape(g.shape(name))
            if max(h, w) > DIM_LIMIT:
                raise MappingError(f"feature map {name!r} is {h}x{w}; the RTL handles at most {DIM_LIMIT} per side")
            if g.quant[name].bits > ACT_BITS:
                raise MappingError(f"feature map {name!r} holds {g.quant[name].bits}-bit values; the RTL keeps "
                                   f"activations in {ACT_BITS} bits (an unquantized model output kept at "
                                   "accumulator precision runs in the HLS C++)")
            maps[name] = FeatureMap(name, c, h, w, g.quant[name], birth)

        add(g.inputs[0], -1)
        for i, layer in enumerate(self.layers):
            add(layer.output, i)
        for i, layer in enumerate(self.layers):
            depthwise = _depthwise(layer.node, g)
            for name in layer.inputs:
                maps[name].death = max(maps[name].death, i)
                maps[name].array_read |= layer.kind == ARRAY and not depthwise
                maps[name].tap_read |= layer.kind == ARRAY and not depthwise and _taps(layer.node, maps[name]) > 1
                maps[name].dw_read |= depthwise
            if depthwise and maps[layer.inputs[0]].birth < 0:
                raise MappingError(f"layer {layer.node.name!r}: a depthwise layer cannot read the input stream "
                                            "directly in the RTL")
        maps[self.storage[g.outputs[0]]].death = len(self.layers) + 1
        for fmap in maps.values():
            choose_banks(fmap, self.R)
        apart = [(layer.inputs[0], layer.inputs[1]) for layer in self.layers if len(layer.inputs) == 2]
        for a, b in apart:
            if a == b:
                raise MappingError(f"a QAdd of {a!r} with itself is not implemented in the RTL")
        self.depths = allocate(list(maps.values()), apart)
        self.dw_depth = allocate_copies(list(maps.values()))
        taps = [int(np.prod(layer.node.attrs.conv.kernel_shape)) for layer in self.layers if _depthwise(layer.node, g)]
        self.dw_copies = min(self.R, max(taps, default=0))
        return maps

    # ---- array layers ------------------------------------------------------------------------------
    def _array_fields(self, layer: Layer, maps: dict[str, FeatureMap]) -> None:
        node, R, C = layer.node, self.R, self.C
        x = maps[layer.inputs[0]]
        w = self.graph.constants[node.inputs[1]].astype(np.int64)
        depthwise = _depthwise(node, self.graph)
        if node.op == "QConv":
            a = node.attrs.conv
            if len(a.kernel_shape) == 1:
                kernel, strides, dil, pads = (1, *a.kernel_shape), (1, *a.strides), (1, *a.dilations), (0, a.pads[0])
            else:
                kernel, strides, dil, pads = tuple(a.kernel_shape), tuple(a.strides), tuple(a.dilations), tuple(a.pads[:2])
            out_c, out_h, out_w = map_shape(self.graph.shape(node.outputs[0]))
            # lane order: k = (ky * kw + kx) * C_in + c_in; depthwise: k = ky * kw + kx, a channel per column
            w4 = w if w.ndim == 4 else w[:, :, None, :]
            matrix = w4.transpose(2, 3, 1, 0).reshape(-1, out_c)
        else:
            kernel, strides, dil, pads = (x.height, x.width), (1, 1), (1, 1), (0, 0)
            out_c, out_h, out_w = w.shape[1], 1, 1
            # the Dense input is x flattened as [c][y][x]; lane order k = (y * W + x) * C + c
            matrix = w.reshape(x.channels, x.height, x.width, out_c).transpose(1, 2, 0, 3).reshape(-1, out_c)
        taps = [(ky * dil[0], kx * dil[1], ci) for ky in range(kernel[0]) for kx in range(kernel[1])
                for ci in range(1 if depthwise else x.channels)]
        reduction, pixels = len(taps), out_h * out_w
        tr, tc = math.ceil(reduction / R), math.ceil(out_c / C)
        ts = math.ceil(pixels / self.D)
        pt = math.ceil(pixels / ts)
        rq = node.attrs.requant
        f = layer.fields
        f.update(kind=ARRAY, in_base=x.base, in_h=x.height, in_w=x.width, out_w=out_w, sx=strides[1], sy=strides[0],
                 x0=-pads[1], y0=-pads[0], pix0=-pads[0] * x.width - pads[1], row_step=strides[0] * x.width,
                 in_zp=node.attrs.input_zero_point, in_signed=int(x.quant.signed), in_plane=x.plane,
                 tr=tr, tc=tc, ts=ts, pt=pt, pt_last=pixels - (ts - 1) * pt,
                 w_base=len(self.weights), tap_base=len(self.taps), par_base=len(self.params),
                 neg=int(rq.neg_multiplier is not None), zp=rq.zero_point, lo=rq.lo, hi=rq.hi,
                 dw=int(depthwise), dw_base=x.dw_base, in_slot=x.pixels)
        for t in range(tr):
            lanes = []
            for r in range(R):
                k = t * R + r
                if k >= reduction:
                    lanes.append(0)
                    continue
                dy, dx, ci = taps[k]
                if not depthwise and ci % x.banks != r % x.banks:
                    raise MappingError(f"layer {node.name!r}: lane {r} of row tile {t} reads channel {ci}, "
                                                f"which is not in its bank")
                coff = (ci >> x.lg) * x.pixels + dy * x.width + dx
                lanes.append((1 << (2 * DIM_W + self.addr_w)) | (dy << (DIM_W + self.addr_w))
                             | (dx << self.addr_w) | coff)
            self.taps.append(_pack(lanes, self.tap_w))
        padded = np.zeros((tr * R, tc * C), np.int64)
        padded[:reduction, :out_c] = matrix
        for ct in range(tc):
            for t in range(tr):
                for row in padded[t * R:(t + 1) * R, ct * C:(ct + 1) * C]:
                    self.weights.append(_pack(row, self.weight_w))
        bias = (self.graph.constants[node.inputs[2]].astype(np.int64) if len(node.inputs) > 2 and node.inputs[2]
                else np.zeros(out_c, np.int64))
        mult, shift = _per_channel(rq.multiplier, out_c), _per_channel(rq.shift, out_c)
        neg = _per_channel(rq.neg_multiplier, out_c) if rq.neg_multiplier is not None else [0] * out_c
        if max(max(mult), max(neg)) >= 1 << 16:
            self.fail(node, "a requantization multiplier does not fit 16 bits")
        p_w = self.target.widths.accumulator_bits
        for ct in range(tc):
            lanes = []
            for c in range(C):
                m = ct * C + c
                if m >= out_c:
                    lanes.append(0)
                    continue
                lanes.append(((int(bias[m]) & ((1 << p_w) - 1)) << PARAM_FIELDS) | (mult[m] << 22) | (neg[m] << 6) | shift[m])
            self.params.append(_pack(lanes, p_w + PARAM_FIELDS))
        self._pool_walk(layer)

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
        elif node.op == "QRequant":
            f.update(op=OP_REQ, a_zp=a_attrs.input_zero_point, ma=a_attrs.multiplier, shift=a_attrs.shift,
                     zp=a_attrs.zero_point, lo=a_attrs.lo, hi=a_attrs.hi)
        elif node.op == "QLut":
            f.update(op=OP_LUT, a_zp=a_attrs.input_min, lut_base=len(self.lut))
            self.lut.extend(int(v) & 0xFF for v in a_attrs.table)
        elif node.op == "QAveragePool":
            (count, m, s), = a_attrs.divisors
            f.update(op=OP_GAVG, a_zp=a_attrs.input_zero_point, ma=m, shift=s, zp=a_attrs.zero_point,
                     lo=a_attrs.lo, hi=a_attrs.hi)
        elif node.op == "Resize":  # the identity requantization, reading each output pixel's source pixel
            out = maps[layer.output]
            up_y, up_x = node.attrs.scales if len(node.attrs.scales) == 2 else (1, *node.attrs.scales)
            if max(up_x, up_y) > MAX_UPSAMPLING:
                self.fail(node, f"upsampling factors above {MAX_UPSAMPLING} are not implemented in the RTL")
            f.update(op=OP_REQ, vw=out.width, pixels=out.pixels, up_x=up_x - 1, up_y=up_y - 1)
        else:
            f.update(op=OP_GMAX, lo=x.quant.qmin, hi=x.quant.qmax)
        if max(f["ma"], f.get("mb", 0)) >= 1 << 17 or f["shift"] > 62:
            self.fail(node, "a multiplier or shift is out of the vector unit's range")
        self._pool_walk(layer)

    def _pool_walk(self, layer: Layer) -> None:
        kh, kw = layer.pool.attrs.kernel_shape if layer.pool is not None else (1, 1)
        layer.fields.update(pool=int(layer.pool is not None), pool_kh=kh, pool_kw=kw)

    def _writer_fields(self, layer: Layer, out: FeatureMap) -> None:
        layer.fields.update(out_base=out.base, out_chan_stride=out.pixels, out_width=out.width, out_lg=out.lg,
                            out_channels=out.channels, out_signed=int(out.quant.signed), out_plane=out.plane,
                            pool_h=out.height, pool_w=out.width, out_dw=int(out.dw_read), out_dw_base=out.dw_base)

    # ---- widths ------------------------------------------------------------------------------------
    def _widths(self, maps: dict[str, FeatureMap]) -> dict[str, int]:
        """Bit widths of the generated top's counters and addresses (each with room to spare).

        Every map may be 1x1 (a dense-only model) with short addresses: a signed linear offset (OFF_W) still
        holds a sign-extended window origin (DIM_W + 1 bits), and a vector pixel index (VPIX_W) a column
        (DIM_W bits), each with a bit to spare, so no replication that widens one into the other is empty."""
        counts = [1, self.target.buffers.accumulator.banks]
        for layer in self.layers:
            f = layer.fields
            counts += [f.get(k, 0) for k in ("tr", "tc", "ts", "passes", "out_channels")]
        pixels = max([1] + [m.pixels for m in maps.values()])
        widths = {
            "ADDR_W": self.addr_w, "DIM_W": DIM_W, "OFF_W": max(self.addr_w, pixels.bit_length(), DIM_W) + 2,
            "CNT_W": max(counts).bit_length() + 1, "PIX_W": max(self.D, self.R).bit_length() + 1,
            "VPIX_W": max(pixels.bit_length(), DIM_W) + 1, "TAP_W": self.tap_w, "W_W": self.weight_w,
        }
        return {name: max(width, 1) for name, width in widths.items()}  # no Verilog range is ever empty


def _depthwise(node: Node, graph: Graph) -> bool:
    """A Conv with one input and one output channel per group (channel multiplier 1)."""
    if node.op != "QConv" or node.attrs.conv.group == 1:
        return False
    group = node.attrs.conv.group
    return graph.shape(node.inputs[0])[1] == group and graph.shape(node.outputs[0])[1] == group


def _taps(node: Node, x: FeatureMap) -> int:
    """Kernel positions an array layer reduces over: a Conv's kernel, a Dense's input pixels."""
    return int(np.prod(node.attrs.conv.kernel_shape)) if node.op == "QConv" else x.pixels


def _per_channel(values, count: int) -> list[int]:
    values = [int(v) for v in values]
    return values * count if len(values) == 1 else values


def _pack(lanes, width: int) -> int:
    """Lane i in bits [i * width, (i + 1) * width), two's complement."""
    word, mask = 0, (1 << width) - 1
    for i, v in enumerate(lanes):
        word |= (int(v) & mask) << (i * width)
    return word
