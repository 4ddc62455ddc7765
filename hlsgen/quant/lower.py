"""Lower an optimized float graph to the integer graph, given calibration statistics and bit widths.

Every activation tensor gets a TensorQuant; Conv/Dense become QConv/QDense with integer weights, an
accumulator-precision bias and a per-channel requantizer; the other ops get their integer forms.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ..ir import Graph, Node, TensorInfo
from ..ops.common import Activation
from ..ops.conv import ConvAttrs
from ..ops.pool import pool_windows
from ..ops.registry import UnsupportedAttribute, evaluate
from ..ops.resize import interpolation_fields, linear_steps, nearest_steps
from ..passes.conv_transpose import decomposition
from .arith import MAX_SHIFT, MULTIPLIER_BITS, quantize_to_grid, signed_bits_for
from .calibrate import RangeChoice, TensorStats, choose_range
from .channels import bound_channel_scales, channel_reach, clamp_bias
from .int_ops import (QAddAttrs, QAveragePoolAttrs, QConvAttrs, QDenseAttrs, QLutAttrs, QMulAttrs, QRequantAttrs,
                      QResampleAttrs, Requant)
from .lowering_errors import NoRange, NotLowerable, TooWide, requant_multiplier, user_error
from .params import TensorQuant, WeightQuant, quantize_weights
from .thresholds import fit_thresholds

MAX_LUT_BITS = 12
DEGENERATE = 1e-30  # a calibrated magnitude below this is no range at all
MOVE_WEIGHT_BITS = 2  # a Gather's 0/1 picks (_lower_Gather)
ACC_LIMIT_BITS = 31  # an interpolation's weighted sum stays a signed 32-bit total (the vector lanes')


@dataclass(frozen=True)
class BitConfig:
    """Bit widths: defaults, then per-layer weight bits and per-tensor activation bits."""

    weight_bits: int = 8
    act_bits: int = 8
    layer_weight_bits: dict = field(default_factory=dict)  # layer name -> bits
    tensor_act_bits: dict = field(default_factory=dict)  # tensor name -> bits

    def weights(self, layer: str) -> int:
        return self.layer_weight_bits.get(layer, self.weight_bits)

    def activations(self, tensor: str) -> int:
        return self.tensor_act_bits.get(tensor, self.act_bits)


@dataclass
class LayerQuant:
    """What quant.json and the bit-width report say about one integer layer."""

    name: str
    op: str
    weight_bits: int | None = None
    weight_scales: tuple[float, ...] | None = None
    multiplier: tuple[int, ...] = ()
    shift: tuple[int, ...] = ()
    acc_bits: int | None = None
    weight_count: int = 0


@dataclass
class Lowered:
    graph: Graph  # the integer graph; graph.quant holds a TensorQuant for every tensor
    layers: list[LayerQuant]
    ranges: dict[str, RangeChoice]  # calibrated tensors: how their range was chosen
    host_softmax: dict[str, tuple[int, ...]]  # graph output -> softmax axes applied on the host
    host_depth_to_space: dict[str, tuple[int, str]] = field(default_factory=dict)  # output -> (blocksize, mode)


def lower(float_graph: Graph, stats: dict[str, TensorStats], bits: BitConfig) -> Lowered:
    return _Lowering(float_graph, stats, bits).run()


class _Lowering:
    def __init__(self, src: Graph, stats: dict[str, TensorStats], bits: BitConfig):
        self.src, self.stats, self.bits = src, stats, bits
        self.dst = Graph(name=src.name, inputs=list(src.inputs), outputs=list(src.outputs), notices=list(src.notices),
                         origins=dict(src.origins))
        self.layers: list[LayerQuant] = []
        self.ranges: dict[str, RangeChoice] = {}
        self.host_softmax: dict[str, tuple[int, ...]] = {}
        self.host_depth_to_space: dict[str, tuple[int, str]] = {}
        self.absorbed: set[str] = set()  # nodes already lowered as part of their producer

    # ---- driver ----------------------------------------------------------------------------
    def run(self) -> Lowered:
        problems: list[tuple[str, NotLowerable]] = []
        for name in self.src.inputs:
            try:
                self._declare(name, self.act_quant(name))
            except NotLowerable as exc:
                problems.append((name, exc))
        for node in [] if problems else self.src.topological():  # every layer reads an input's quantization
            if node.name in self.absorbed or any(t and t not in self.dst.quant and t not in self.src.constants
                                                 for t in node.inputs):
                continue  # absorbed by its producer, or reads what an unlowerable node computes
            handler = getattr(self, f"_lower_{node.op}", None)
            try:
                if handler is None:
                    raise NotLowerable("hlsgen has no integer implementation of it")
                handler(node)
            except NotLowerable as exc:
                problems.append((node.name, exc))
        if problems:
            raise user_error(self.src, problems)
        self._copy_inputs_of_depthwise_layers()
        self.dst.prune_tensors()
        return Lowered(self.dst, self.layers, self.ranges, self.host_softmax, self.host_depth_to_space)

    def _copy_inputs_of_depthwise_layers(self) -> None:
        """A depthwise QConv reads a graph input through an identity QRequant: the accelerator's depthwise window
        copies are filled by the writer, which the input stream does not pass (docs/hardware.md, "Depthwise
        Conv"); the copy is one vector pass, in the model, the C++ and the RTL alike."""
        for name in self.dst.inputs:
            readers = [n for n in self.dst.consumers(name) if n.op == "QConv" and _depthwise(n, self.dst)]
            if not readers:
                continue
            q = self._q(name)
            copy = self.dst.fresh_name(f"{name}_window")
            attrs = QRequantAttrs(q.zero_point, 1, 0, q.zero_point, q.qmin, q.qmax)
            self.dst.add_node(Node(self.dst.fresh_name(f"{name}/window_copy"), "QRequant", (name,), (copy,), attrs))
            self.dst.tensors[copy] = TensorInfo(copy, self.dst.shape(name), "int64")
            self.dst.quant[copy] = q
            for reader in readers:
                inputs = tuple(copy if t == name else t for t in reader.inputs)
                self.dst.replace_node(reader.name, reader.with_(inputs=inputs))

    # ---- helpers ---------------------------------------------------------------------------
    def act_quant(self, tensor: str) -> TensorQuant:
        """The quantization of an activation: kept from a pre-quantized model, else calibrated."""
        if isinstance(self.src.quant.get(tensor), TensorQuant):
            return self.src.quant[tensor]
        producer, readers = self.src.producer(tensor), self.src.consumers(tensor)
        if producer is not None and len(readers) == 1 and readers[0].op in ("Interleave", "Concat") \
                and tensor not in self.src.outputs:
            return self.act_quant(readers[0].outputs[0])  # computed on the grid it is joined on, not aligned
        if producer is not None and producer.op == "Gather":  # picked channels keep their grid
            return self._q(producer.inputs[0])
        if tensor not in self.stats:
            raise NoRange(f"tensor {tensor!r} has no range: the model does not quantize it and no calibration "
                         "data covers it (pass --calib with real samples)")
        stats, bits = self.stats[tensor], self.bits.activations(tensor)
        if max(abs(stats.lo), abs(stats.hi)) < DEGENERATE:
            return self._zero_tensor(tensor, bits)
        choice = choose_range(stats, bits)
        self.ranges[tensor] = choice
        return choice.quant

    def _zero_tensor(self, tensor: str, bits: int) -> TensorQuant:
        """A tensor that is 0 on every calibration sample has no range of its own: an input is an error (the
        calibration data says nothing), a computed one takes the scale of what it is computed from."""
        producer = self.src.producer(tensor)
        if producer is None or producer.inputs[0] not in self.dst.quant:
            raise NoRange(f"every calibration value of {tensor!r} is 0: calibrate on real samples (--calib)")
        source = self._q(producer.inputs[0])
        self.dst.notices.append(f"tensor {tensor!r} is 0 on every calibration sample; it takes the scale of "
                                f"{producer.inputs[0]!r}")
        return TensorQuant.symmetric(source.scale * (source.qmax - source.zero_point), bits, source.signed)

    def _declare(self, tensor: str, quant: TensorQuant) -> None:
        self.dst.tensors[tensor] = TensorInfo(tensor, self.src.shape(tensor), "int64")
        self.dst.quant[tensor] = quant

    def _q(self, tensor: str) -> TensorQuant:
        return self.dst.quant[tensor]

    def _emit(self, node: Node, out_quant: TensorQuant) -> None:
        for t in node.inputs:
            if t in self.src.constants and t not in self.dst.constants:
                self.dst.add_constant(t, self.src.constants[t])
        self.dst.add_node(node)
        self._declare(node.outputs[0], out_quant)

    def _constant(self, base: str, value: np.ndarray) -> str:
        return self.dst.add_constant(self.dst.fresh_name(base), narrowest_int(value))

    def _weights(self, node: Node, axis: int) -> tuple[np.ndarray, WeightQuant]:
        w_name = node.inputs[1]
        if w_name not in self.src.constants:
            raise NotLowerable("weights must be constants")
        kept = self.src.quant.get(w_name)
        if isinstance(kept, tuple):  # (integer values, WeightQuant) of a pre-quantized model
            ints, wq = kept
            channels = ints.shape[axis]
            if len(set(wq.scales)) == 1 and len(wq.scales) != channels:  # per tensor
                wq = WeightQuant(wq.scales[:1] * channels, wq.bits)
            if len(wq.scales) == channels:
                return ints, wq
            self.dst.notices.append(f"{node.name}: the model's weight scales are not per output channel; "
                                    "hlsgen re-quantized these weights")
        return quantize_weights(self.src.constants[w_name], self.bits.weights(node.name), axis)

    def _bias(self, node: Node) -> np.ndarray | None:
        if len(node.inputs) < 3 or not node.inputs[2]:
            return None
        if node.inputs[2] not in self.src.constants:
            raise NotLowerable("the bias must be a constant")
        return self.src.constants[node.inputs[2]]

    def _requant(self, acc_scales: np.ndarray, out: TensorQuant, activation: Activation | None) -> Requant:
        pairs = [requant_multiplier(float(s) / out.scale) for s in acc_scales]
        multiplier = tuple(m for m, _ in pairs)
        shift = tuple(s for _, s in pairs)
        lo, hi = out.qmin, out.qmax
        neg = None
        if activation is not None:
            if activation.kind == "relu":
                lo = max(lo, out.zero_point)
            elif activation.kind == "clip":
                lo = max(lo, _grid(activation.lo, out))
                hi = min(hi, _grid(activation.hi, out))
            else:  # leaky_relu: the negative branch scales by alpha, on the same shift
                neg = tuple(round(activation.alpha * float(s) / out.scale * (1 << sh))
                            for s, sh in zip(acc_scales, shift))
        return Requant(multiplier, shift, out.zero_point, lo, hi, neg)

    def _matmul_layer(self, node: Node, op: str, w_axis: int, weights, bias, attrs_for) -> None:
        x, out = node.inputs[0], node.outputs[0]
        qx = self._q(x)
        qy = self._accumulator_output(out, qx, *weights, w_axis, bias) or self.act_quant(out)
        w_int, wq = bound_channel_scales(*weights, w_axis, qx, qy)
        acc_scales = qx.scale * np.asarray(wq.scales)
        inputs = [x, self._constant(f"{node.name}_w", w_int)]
        requant = self._requant(acc_scales, qy, node.attrs.activation)
        # Bound |acc| per output channel over every input in range: sum |w| * max |x - zx| + |b|.
        reach = channel_reach(w_int, w_axis, qx)
        bias_bound = np.zeros(len(acc_scales), np.int64)
        if bias is not None:
            b_int = clamp_bias(np.rint(np.asarray(bias, np.float64) / acc_scales), reach, requant, qy)
            if isinstance(self.src.quant.get(out), TensorQuant):  # the model's own rounding, exactly
                b_int, requant = fit_thresholds(np.asarray(bias, np.float64) / acc_scales, b_int,
                                                acc_scales / qy.scale, reach, requant)
            inputs.append(self._constant(f"{node.name}_b", b_int))
            bias_bound = np.abs(b_int)
        acc_bits = signed_bits_for(int((reach + bias_bound).max()))
        attrs = replace(attrs_for(qx, acc_bits, requant), weight_bits=wq.bits)
        self._emit(Node(node.name, op, tuple(inputs), (out,), attrs), qy)
        self.layers.append(LayerQuant(node.name, op, wq.bits, wq.scales, requant.multiplier, requant.shift,
                                      acc_bits, int(w_int.size)))

    def _accumulator_output(self, out: str, qx: TensorQuant, w_int: np.ndarray, wq: WeightQuant, w_axis: int,
                            bias) -> TensorQuant | None:
        """A graph output that neither the model quantizes nor calibration data covers (a pre-quantized
        model's logits) keeps its accumulator's precision rather than a guessed range: the finest channel's
        accumulator step (channels with coarser weight scales are rescaled onto it), signed and wide enough
        that no input in range saturates it (at most 32 bits; a wider one gets a coarser step)."""
        if out not in self.src.outputs or out in self.stats or isinstance(self.src.quant.get(out), TensorQuant):
            return None
        acc_scales = qx.scale * np.asarray(wq.scales, np.float64)
        reach = channel_reach(w_int, w_axis, qx).astype(np.float64)
        if bias is not None:
            reach += np.abs(np.rint(np.asarray(bias, np.float64) / acc_scales))
        scale = float(acc_scales.min())
        # the 16-bit multiplier may overshoot its ratio by 2^-16 and the rounding by half a step
        top = math.ceil(float((reach * acc_scales).max()) / scale * (1 + 2.0**-15)) + 1
        if top >= 1 << 31:
            scale, top = scale * top / ((1 << 31) - 1), (1 << 31) - 1
        quant = TensorQuant(scale, 0, signed_bits_for(top), True)
        self.dst.notices.append(f"output {out!r} is not quantized by the model: it stays at accumulator precision "
                                f"({quant.bits}-bit signed, scale {scale:.6g})")
        return quant

    # ---- per op ----------------------------------------------------------------------------
    def _lower_Conv(self, node: Node) -> None:
        geometry = replace(node.attrs, activation=None)
        self._matmul_layer(node, "QConv", 0, self._weights(node, 0), self._bias(node),
                           lambda qx, bits, rq: QConvAttrs(geometry, qx.zero_point, bits, rq))

    def _lower_Dense(self, node: Node) -> None:
        self._matmul_layer(node, "QDense", 1, self._weights(node, 1), self._bias(node),
                           lambda qx, bits, rq: QDenseAttrs(qx.zero_point, bits, rq))

    def _lower_ChannelAffine(self, node: Node) -> None:
        """x * scale[c] + shift[c] is a depthwise 1x1 convolution."""
        x, scale, shift = node.inputs
        if scale not in self.src.constants or shift not in self.src.constants:
            raise NotLowerable("scale and shift must be constants")
        channels = self.src.shape(x)[1]
        spatial = len(self.src.shape(x)) - 2
        w = self.src.constants[scale].reshape((channels, 1) + (1,) * spatial)
        geometry = ConvAttrs((1,) * spatial, (1,) * spatial, (0,) * (2 * spatial), (1,) * spatial, channels)
        conv = Node(node.name, "Conv", (x, scale, shift), node.outputs, geometry)
        weights = quantize_weights(w, self.bits.weights(node.name), 0)
        self._matmul_layer(conv, "QConv", 0, weights, self.src.constants[shift],
                           lambda qx, bits, rq: QConvAttrs(geometry, qx.zero_point, bits, rq))

    def _lower_Add(self, node: Node) -> None:
        """A residual sum; a Relu/Clip that alone reads it saturates inside the QAdd (a bit more range)."""
        a, b = node.inputs
        if a in self.src.constants or b in self.src.constants:
            raise NotLowerable("adding a constant that no Conv/Dense bias absorbed")
        out, lo_real, hi_real = self._absorb_clamp(node)
        qa, qb, qy = self._q(a), self._q(b), self.act_quant(out)
        ra, rb = qa.scale / qy.scale, qb.scale / qy.scale
        shift = MULTIPLIER_BITS - math.frexp(max(ra, rb))[1]
        if not 0 <= shift <= MAX_SHIFT:
            raise TooWide(f"its inputs' scales are {max(ra, rb):.3g} times its output's, beyond what a "
                          f"{MULTIPLIER_BITS}-bit multiplier and a shift of at most {MAX_SHIFT} hold")
        attrs = QAddAttrs(qa.zero_point, qb.zero_point, round(ra * (1 << shift)), round(rb * (1 << shift)),
                          shift, qy.zero_point, _grid(lo_real, qy), _grid(hi_real, qy))
        self._emit(Node(node.name, "QAdd", (a, b), (out,), attrs), qy)

    def _lower_Mul(self, node: Node) -> None:
        """A product of two maps, or of a map and one value per channel (squeeze-and-excitation's gate); a
        Relu/Clip that alone reads it saturates inside the QMul."""
        if any(t in self.src.constants for t in node.inputs):
            raise NotLowerable("multiplying by a constant that no Conv/Dense absorbed")
        a, b = self._map_then_gate(node)
        out, lo_real, hi_real = self._absorb_clamp(node)
        qa, qb, qy = self._q(a), self._q(b), self.act_quant(out)
        multiplier, shift = requant_multiplier(qa.scale * qb.scale / qy.scale)
        attrs = QMulAttrs(qa.zero_point, qb.zero_point, multiplier, shift, qy.zero_point, _grid(lo_real, qy),
                          _grid(hi_real, qy))
        self._emit(Node(node.name, "QMul", (a, b), (out,), attrs), qy)

    def _map_then_gate(self, node: Node) -> tuple[str, str]:
        """The inputs ordered (map, per-channel gate): b has a's shape or [N, C, 1, ...]."""
        a, b = node.inputs
        if self.src.shape(a) != self.src.shape(node.outputs[0]):
            a, b = b, a
        shape_a, shape_b = self.src.shape(a), self.src.shape(b)
        per_channel = (len(shape_b) == len(shape_a) > 2 and tuple(shape_b[:2]) == tuple(shape_a[:2])
                       and all(d == 1 for d in shape_b[2:]))
        if tuple(shape_a) != tuple(shape_b) and not per_channel:
            raise NotLowerable(f"a product of shapes {tuple(shape_a)} and {tuple(shape_b)}: hlsgen multiplies maps "
                               "of one shape, or a map by one value per channel")
        return a, b

    def _absorb_clamp(self, node: Node) -> tuple[str, float, float]:
        """(output, lo, hi): a Relu/Clip that alone reads the node's output is absorbed into its saturation."""
        out = node.outputs[0]
        readers = self.src.consumers(out)
        if out in self.src.outputs or len(readers) != 1 or readers[0].op not in ("Relu", "Clip"):
            return out, -math.inf, math.inf
        activation = readers[0]
        self.absorbed.add(activation.name)
        if activation.op == "Relu":
            return activation.outputs[0], 0.0, math.inf
        return activation.outputs[0], activation.attrs.lo, activation.attrs.hi

    def _lower_Relu(self, node: Node) -> None:
        self._clamp(node, 0.0, math.inf)

    def _lower_Clip(self, node: Node) -> None:
        self._clamp(node, node.attrs.lo, node.attrs.hi)

    def _clamp(self, node: Node, lo: float, hi: float) -> None:
        """Relu/Clip keep the input's scale: a saturation only."""
        qx = self._q(node.inputs[0])
        attrs = QRequantAttrs(qx.zero_point, 1, 0, qx.zero_point, _grid(lo, qx), _grid(hi, qx))
        self._emit(Node(node.name, "QRequant", node.inputs, node.outputs, attrs), qx)

    def _lower_Sigmoid(self, node: Node) -> None:
        self._tabulate(node)

    _lower_HardSigmoid = _lower_HardSwish = _lower_LeakyRelu = _lower_Elu = _lower_Selu = _lower_Sigmoid
    _lower_Tanh = _lower_Softplus = _lower_Softsign = _lower_Erf = _lower_SiLU = _lower_Mish = _lower_Gelu = _lower_Sigmoid

    def _tabulate(self, node: Node) -> None:
        """Any elementwise function of a narrow integer becomes a lookup table, exact by construction."""
        qx = self._q(node.inputs[0])
        if qx.bits > MAX_LUT_BITS:
            raise TooWide(f"a {qx.bits}-bit input is too wide to tabulate (at most {MAX_LUT_BITS})")
        qy = self.act_quant(node.outputs[0])
        levels = np.arange(qx.qmin, qx.qmax + 1)
        real = ((levels - qx.zero_point) * qx.scale).astype(np.float32)
        (y,) = evaluate(node, [real])
        table = quantize_to_grid(y, qy.scale, qy.zero_point, qy.bits, qy.signed)
        attrs = QLutAttrs(qx.qmin, tuple(int(v) for v in table))
        self._emit(Node(node.name, "QLut", node.inputs, node.outputs, attrs), qy)

    def _lower_MaxPool(self, node: Node) -> None:
        self._emit(node, self._q(node.inputs[0]))

    _lower_GlobalMaxPool = _lower_Reshape = _lower_Transpose = _lower_MaxPool

    def _lower_Resize(self, node: Node) -> None:
        if node.attrs.mode == "linear":  # what hlsgen.passes.linear_resize could not rewrite (align_corners)
            self._interpolate(node)
            return
        if any(int(s) != s for s in node.attrs.scales):
            self._pick(node)
            return
        self._lower_MaxPool(node)

    def _pick(self, node: Node) -> None:
        """A nearest Resize by a fraction: each output pixel's source pixel from exact counters (QResampleAttrs
        with `pick`), the input's quantization kept (the identity requantization)."""
        a, qx = node.attrs, self._q(node.inputs[0])
        sizes = self.src.shape(node.inputs[0])[2:]
        steps = tuple(nearest_steps(a.transform, a.nearest, int(n), s) for n, s in zip(sizes, a.scales))
        identity = QRequantAttrs(qx.zero_point, 1, 0, qx.zero_point, qx.qmin, qx.qmax)
        self._resample(node, QResampleAttrs(tuple(a.scales), a.transform, steps, identity, pick=True), qx)

    def _interpolate(self, node: Node) -> None:
        """A linear Resize as integer interpolation (QResampleAttrs): weights den - r and r per axis, the
        sum brought to its own output range by one multiplier that also divides by the dens' product."""
        a, qx = node.attrs, self._q(node.inputs[0])
        qy = self.act_quant(node.outputs[0])
        sizes = self.src.shape(node.inputs[0])[2:]
        steps = tuple(linear_steps(a.transform, int(n), s) for n, s in zip(sizes, a.scales))
        total = math.prod(den for _, _, den in steps)
        if (qx.qmax - qx.qmin) * total >= 1 << ACC_LIMIT_BITS:
            size = "x".join(str(int(n * s)) for n, s in zip(sizes, a.scales))
            raise NotLowerable(f"a linear Resize to {size} pixels sums weights up to {total:,} per output pixel, "
                               f"beyond a {ACC_LIMIT_BITS}-bit sum")
        multiplier, shift = requant_multiplier(qx.scale / (total * qy.scale))
        requant = QRequantAttrs(qx.zero_point, multiplier, shift, qy.zero_point, qy.qmin, qy.qmax)
        self._resample(node, QResampleAttrs(tuple(a.scales), a.transform, steps, requant), qy)

    def _resample(self, node: Node, attrs: QResampleAttrs, out_quant: TensorQuant) -> None:
        try:
            interpolation_fields(attrs)  # the vector unit's counters step forward, from before the first pixel
        except UnsupportedAttribute as exc:
            raise NotLowerable(str(exc)) from None
        self._emit(Node(node.name, "QResample", node.inputs, node.outputs, attrs), out_quant)

    def _lower_Cast(self, node: Node) -> None:
        raise NotLowerable(f"a Cast to {node.attrs.to} changes values inside the network; hlsgen quantizes the "
                           "float32 graph itself (a Cast to a tensor's own type is removed)")

    def _lower_Pad(self, node: Node) -> None:
        qx = self._q(node.inputs[0])
        if node.attrs.mode != "constant":
            self._emit(node, qx)
            return
        value = int(quantize_to_grid(np.array(node.attrs.value), qx.scale, qx.zero_point, qx.bits, qx.signed))
        self._emit(node.with_(attrs=replace(node.attrs, value=value)), qx)

    def _lower_AveragePool(self, node: Node) -> None:
        qx = self._q(node.inputs[0])
        n = len(node.attrs.kernel_shape)
        inside = np.ones(self.src.shape(node.inputs[0])[-n:], np.int64)
        counts = pool_windows(node.attrs, inside, 1 if node.attrs.count_include_pad else 0, 0)
        counts = counts.sum(axis=tuple(range(-n, 0)))
        self._average(node, node.attrs, sorted(set(int(c) for c in counts.ravel() if c > 0)), qx)

    def _lower_GlobalAveragePool(self, node: Node) -> None:
        qx = self._q(node.inputs[0])
        self._average(node, None, [int(np.prod(self.src.shape(node.inputs[0])[2:]))], qx)

    def _average(self, node: Node, pool, counts: list[int], qx: TensorQuant) -> None:
        """An average gets its own output range (it is narrower than its input's): per divisor count,
        one multiplier and shift for scale_x / (count * scale_y)."""
        qy = self.act_quant(node.outputs[0])
        divisors = tuple((c, *requant_multiplier(qx.scale / (c * qy.scale))) for c in counts)
        attrs = QAveragePoolAttrs(pool, qx.zero_point, divisors, qy.zero_point, qy.qmin, qy.qmax)
        self._emit(Node(node.name, "QAveragePool", node.inputs, node.outputs, attrs), qy)

    def _lower_Trunc(self, node: Node) -> None:
        """QONNX's Trunc on the integers of its own input grid: a right shift by in_bits - out_bits (version
        1) or log2(out_scale / scale) (version 2), as a QRequant whose input zero point turns rshift_round's
        half-up rounding into FLOOR (+2^(k-1)) or CEIL (1 - 2^(k-1)), exactly; ROUND rounds ties up, not to
        even (as every hlsgen requantization does)."""
        a, x = node.attrs, node.inputs[0]
        qx = self._q(x)
        scale, zero, in_bits = (float(np.ravel(self.src.constants[t])[0]) for t in node.inputs[1:4])
        if not math.isclose(qx.scale, scale, rel_tol=1e-6) or qx.zero_point != 0 or zero != 0:
            raise NotLowerable(f"it reads {x!r} on another grid than its own (scale {scale:g}, zero point "
                                f"{zero:g}); hlsgen lowers a Trunc whose input is on its grid with zero point 0")
        if qx.bits > in_bits:
            raise NotLowerable(f"its input {x!r} holds {qx.bits}-bit values, more than its in_bitwidth {in_bits:g}")
        if a.rescaled:
            out_scale = float(np.ravel(self.src.constants[node.inputs[4]])[0])
            shift, signed, narrow = round(math.log2(out_scale / scale)), a.signed, a.narrow
        else:
            out_scale, shift, signed, narrow = scale, int(in_bits) - a.out_bits, qx.signed, False
        if shift < 0 or a.out_bits < 2:
            raise NotLowerable(f"a Trunc to {a.out_bits} bits by a shift of {shift} is not a right shift hlsgen lowers")
        if a.rounding_mode == "ROUND_TO_ZERO" and qx.signed:
            raise NotLowerable("ROUND_TO_ZERO of signed values has no integer form here (FLOOR, CEIL and ROUND do)")
        half = (1 << shift) >> 1
        # rshift_round(v - o, k) = floor((v - o + half) / 2^k): o = half floors, o = 1 - half ceils (k > 0)
        offset = {"ROUND": 0, "FLOOR": half, "ROUND_TO_ZERO": half, "CEIL": 1 - half if shift else 0}[a.rounding_mode]
        qy = TensorQuant(out_scale, 0, a.out_bits, signed, narrow)
        attrs = QRequantAttrs(offset, 1, shift, 0, qy.qmin, qy.qmax)
        self._emit(Node(node.name, "QRequant", (x,), node.outputs, attrs), qy)

    def _lower_Concat(self, node: Node) -> None:
        """The inputs joined on the output's grid: an input on another grid is requantized onto it first."""
        qy = self.act_quant(node.outputs[0])
        inputs = []
        for t in node.inputs:
            qt = self._q(t)
            if qt == qy:
                inputs.append(t)
                continue
            m, s = requant_multiplier(qt.scale / qy.scale)
            aligned = self.dst.fresh_name(f"{t}_aligned")
            attrs = QRequantAttrs(qt.zero_point, m, s, qy.zero_point, qy.qmin, qy.qmax)
            self.dst.add_node(Node(self.dst.fresh_name(f"{node.name}_align"), "QRequant", (t,), (aligned,), attrs))
            self.dst.tensors[aligned] = TensorInfo(aligned, self.src.shape(t), "int64")
            self.dst.quant[aligned] = qy
            inputs.append(aligned)
        self._emit(node.with_(inputs=tuple(inputs)), qy)

    def _lower_Interleave(self, node: Node) -> None:
        """A transposed convolution's phases woven together: they are computed on its output's grid
        (act_quant), so this moves integers only."""
        self._lower_Concat(node)

    def _lower_Gather(self, node: Node) -> None:
        """Channels picked and reordered that no reader took into its weights (hlsgen.passes.channel_gather):
        a 1x1 Conv (a Dense on vectors) of 0/1 weights, which copies each picked channel exactly onto the
        input's grid (the requantization multiplies by 1), or onto the grid of the Concat that reads it."""
        (x,), (y,) = node.inputs, node.outputs
        shape, indices = self.src.shape(x), list(node.attrs.indices)
        if node.attrs.axis != 1 or len(shape) > 4:
            raise NotLowerable("only a Gather of the channels of a map or a vector runs on the accelerator")
        qx, qy, spatial = self._q(x), self.act_quant(y), len(shape) - 2
        picks = np.zeros((len(indices), shape[1]), np.int64)
        picks[np.arange(len(indices)), indices] = 1
        m, s = requant_multiplier(qx.scale / qy.scale)
        requant = Requant((m,), (s,), qy.zero_point, qy.qmin, qy.qmax)
        acc_bits = signed_bits_for(max(qx.qmax - qx.zero_point, qx.zero_point - qx.qmin))
        if spatial:
            geometry = ConvAttrs((1,) * spatial, (1,) * spatial, (0,) * (2 * spatial), (1,) * spatial, 1)
            w, op, attrs = picks.reshape(picks.shape + (1,) * spatial), "QConv", \
                QConvAttrs(geometry, qx.zero_point, acc_bits, requant, MOVE_WEIGHT_BITS)
        else:
            w, op, attrs = picks.T, "QDense", QDenseAttrs(qx.zero_point, acc_bits, requant, MOVE_WEIGHT_BITS)
        self._emit(Node(node.name, op, (x, self._constant(f"{node.name}_picks", w)), (y,), attrs), qy)
        self.layers.append(LayerQuant(node.name, op, MOVE_WEIGHT_BITS, (1.0,) * len(indices), (m,), (s,), acc_bits,
                                      int(w.size)))

    def _lower_ConvTranspose(self, node: Node) -> None:
        raise NotLowerable(f"it does not decompose into convolutions: {decomposition(self.src, node)}")

    def _lower_DepthToSpace(self, node: Node) -> None:
        """A DepthToSpace that produces a graph output is a permutation the host applies as it reads the
        output (one before a Conv's other readers: hlsgen.passes.space_to_depth makes it the Conv's phases)."""
        (x,), (y,) = node.inputs, node.outputs
        if y not in self.src.outputs or self.src.consumers(y) or x in self.src.outputs:
            raise NotLowerable("only a DepthToSpace of a Conv's output, or at an output of the network (the host "
                               "permutes it), runs on the accelerator")
        self.dst.outputs = [x if t == y else t for t in self.dst.outputs]
        self.host_depth_to_space[x] = (node.attrs.blocksize, node.attrs.mode)

    def _lower_Softmax(self, node: Node) -> None:
        """A Softmax that produces a graph output runs on the host, on the dequantized logits."""
        (x,), (y,) = node.inputs, node.outputs
        if y not in self.src.outputs or self.src.consumers(y):
            raise NotLowerable("only a Softmax at the output of the network is supported (it runs on the host)")
        self.dst.outputs = [x if t == y else t for t in self.dst.outputs]
        self.host_softmax[x] = node.attrs.axes


def narrowest_int(values: np.ndarray) -> np.ndarray:
    """Integers stored in the narrowest of int8/16/32/64 that holds them (kernels widen to int64)."""
    values = np.asarray(values, np.int64)
    for dtype in (np.int8, np.int16, np.int32):
        info = np.iinfo(dtype)
        if values.size == 0 or (values.min() >= info.min and values.max() <= info.max):
            return values.astype(dtype)
    return values


def _grid(value: float, quant: TensorQuant) -> int:
    """The integer level nearest a real clamp bound, inside the range (±inf saturate)."""
    if math.isinf(value):
        return quant.qmax if value > 0 else quant.qmin
    return int(np.clip(round(value / quant.scale) + quant.zero_point, quant.qmin, quant.qmax))


def _depthwise(node: Node, graph: Graph) -> bool:
    """A QConv of one input channel per group and one output per group (hlsgen.hw.mapping's depthwise mode)."""
    groups, cin, cout = node.attrs.conv.group, graph.shape(node.inputs[0])[1], graph.shape(node.outputs[0])[1]
    return groups > 1 and cin // groups == 1 and cout == groups
