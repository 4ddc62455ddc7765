"""A random model as plain data: layers, input shape, quantization annotation, bits and target. The fuzzer
generates, runs and shrinks these specs, never raw ONNX, so every candidate is a valid model by construction
(`ModelSpec.shapes()` is None for the few shrink steps that would not be)."""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import yaml

ANNOTATIONS = ("float", "qdq", "qonnx")
ACTIVATIONS = ("none", "relu", "relu6", "clip", "leakyrelu", "prelu", "sigmoid", "hardsigmoid", "hardswish", "elu",
               "selu", "tanh", "softplus", "silu", "hardswish_mul", "mish", "gelu")
# the layer kinds that take a feature map (C, H, W); "dense" and "act" take a vector (F,)
MAP_KINDS = ("conv", "pool", "gpool", "act", "residual", "const", "concat", "pad", "flatten")
# layers the generator inserts with the exporter-like features (generator._features): a host op between
# accelerator layers ("host", shape-preserving; InstanceNormalization on maps only), an upsampling ("resize":
# bilinear, half_pixel or align_corners, with constant sizes; nearest with sizes computed by exporter shape
# code), learned ones ("upconv": ConvTranspose;
# "shuffle": a Conv then DepthToSpace, ESPCN's PixelShuffle), a YOLOv5 Focus stem ("focus": four stride-2
# Slices concatenated on channels) and a ShuffleNetV2 unit ("shuffle_unit": chunk in two by a Split or two
# Slices, a 1x1 Conv on the second half, concatenated, channel shuffle of `groups` groups)
HOST_OPS = ("InstanceNormalization", "Cos", "Sin", "Atan")
EXTRA_KINDS = ("host", "resize", "upconv", "shuffle", "focus", "shuffle_unit")
# post-processing ops of an output head (ModelSpec.outputs), on the host unless the accelerator takes them;
# argmax and topk end a head (topk gives two outputs: values and indices)
HEAD_OPS = ("exp", "sigmoid", "softmax", "reduce", "nhwc", "argmax", "topk")
TERMINAL_HEAD_OPS = ("argmax", "topk")
DYNAMIC = ("", "batch", "hw")  # input dims: static, a symbolic batch, or symbolic batch, H and W (--input-shape)


@dataclass(frozen=True)
class LayerSpec:
    kind: str
    params: dict = field(default_factory=dict)

    def __getitem__(self, key: str):
        return self.params[key]

    def get(self, key: str, default=None):
        return self.params.get(key, default)

    def with_params(self, **changes) -> LayerSpec:
        return LayerSpec(self.kind, {**self.params, **changes})


@dataclass(frozen=True)
class TargetSpec:
    """A target file hlsgen.hw.load_target accepts, valid by construction (a square power-of-two array, as the
    RTL needs); `builtin` names a shipped target instead."""

    builtin: str | None = "systolic8x8"
    side: int = 8
    input_kib: int = 64
    input_banks: int = 8
    weight_kib: int = 64
    weight_banks: int = 8
    accumulator_kib: int = 16
    accumulator_banks: int = 8
    data_bits: int = 64
    bytes_per_cycle: float = 6.0
    read_latency: int = 40

    @property
    def name(self) -> str:
        return self.builtin or f"fuzz{self.side}x{self.side}"

    def to_yaml(self) -> str:
        assert self.builtin is None
        buffer = lambda kib, banks: {"kib": kib, "banks": banks}  # noqa: E731
        return yaml.safe_dump({
            "name": self.name, "description": f"a random {self.side}x{self.side} target (hlsgen fuzz)",
            "array": {"rows": self.side, "cols": self.side, "dataflow": "weight_stationary"},
            "widths": {"operand_bits": 8, "accumulator_bits": 32},
            "buffers": {"input": buffer(self.input_kib, self.input_banks),
                        "weight": buffer(self.weight_kib, self.weight_banks),
                        "accumulator": buffer(self.accumulator_kib, self.accumulator_banks)},
            "clock_mhz": 200,
            # a device large enough that the budget never decides: the fuzzer looks for wrong results
            "device": {"part": "xczu9eg-ffvb1156-2-e", "dsp": 2520, "bram_18k": 1824, "lut": 274080, "ff": 548160},
            "external_memory": {"data_bits": self.data_bits, "bytes_per_cycle": self.bytes_per_cycle,
                                "read_latency": self.read_latency},
        }, sort_keys=False)


@dataclass(frozen=True)
class ModelSpec:
    seed: int
    shape: tuple[int, int, int]  # C, H, W of the input
    layers: tuple[LayerSpec, ...]
    annotation: str = "float"  # float, qdq (QuantizeLinear/DequantizeLinear) or qonnx (Quant)
    bits: int = 8  # qonnx: every Quant's width; float: --bits; qdq: 8
    qonnx_domain: str = ""  # "" (as Brevitas/FINN export) or qonnx.custom_op.general
    target: TargetSpec = TargetSpec()
    program: str = "rom"  # --program
    samples: int = 8  # calibration samples
    input_scale: float = 1.0
    dynamic: str = ""  # one of DYNAMIC: the ONNX input's dims symbolic (the build pins them, input_shapes)
    # the graph outputs: () is one output, the last layer's; else one "head" each (see head_shapes), the first
    # usually on the last layer's output
    outputs: tuple[LayerSpec, ...] = ()

    def shapes(self) -> list[tuple[int, ...]] | None:
        """The shape after every layer (input first), or None when a layer (or an output head) does not fit
        its input."""
        shapes = [tuple(self.shape)]
        for layer in self.layers:
            out = layer_shape(layer, shapes[-1])
            if out is None or min(out) < 1:
                return None
            shapes.append(out)
        if any(head_shapes(head, shapes) is None for head in self.outputs):
            return None
        return shapes

    def macs(self) -> int:
        shapes = self.shapes() or []
        heads = sum(head_macs(head, shapes) for head in self.outputs) if shapes else 0
        return sum(layer_macs(layer, a, b) for layer, a, b in zip(self.layers, shapes, shapes[1:])) + heads

    def output_shapes(self) -> list[tuple[int, ...]]:
        """The graph outputs' shapes, batch left out, in the order of the graph's outputs."""
        shapes = self.shapes()
        if not self.outputs:
            return [shapes[-1]]
        return [shape for head in self.outputs for shape in head_shapes(head, shapes)]

    def input_shapes(self) -> tuple[tuple[str, tuple[int, ...]], ...]:
        """--input-shape of the build: the input's H and W are symbolic in the ONNX file."""
        return (("x", (1, *self.shape)),) if self.dynamic == "hw" else ()

    @property
    def extended(self) -> bool:
        """Uses a feature of issue 25 (exporter shape code, dynamic axes, several outputs, host ops): its whole
        model is also run against onnxruntime (runner.whole_error)."""
        return bool(self.dynamic or self.outputs or any(
            layer.kind in EXTRA_KINDS or layer.get("shape_code") for layer in self.layers))

    def float_twin(self) -> ModelSpec:
        return replace(self, annotation="float")

    def calibration(self) -> np.ndarray:
        """Float32 input samples: smooth random images plus noise, so pools and convolutions see structure."""
        rng = np.random.default_rng([self.seed, 1])
        c, h, w = self.shape
        base = rng.standard_normal((self.samples, c, 1, 1)) + rng.standard_normal((self.samples, c, h, w))
        return (base * self.input_scale).astype(np.float32)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1, sort_keys=True)

    @staticmethod
    def from_json(text: str) -> ModelSpec:
        data = json.loads(text)
        data["shape"] = tuple(data["shape"])
        data["layers"] = tuple(LayerSpec(layer["kind"], layer["params"]) for layer in data["layers"])
        data["target"] = TargetSpec(**data["target"])
        data["outputs"] = tuple(LayerSpec(head["kind"], head["params"]) for head in data.get("outputs", ()))
        return ModelSpec(**data)


def conv_out(size: int, k: int, s: int, d: int, before: int, after: int, ceil: bool = False) -> int:
    span = size + before + after - d * (k - 1) - 1
    if span < 0:
        return 0
    return (-(-span // s) if ceil else span // s) + 1


def layer_shape(layer: LayerSpec, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    kind = layer.kind
    if kind in ("act", "const"):
        return shape
    if kind == "host":
        return shape if layer["op"] != "InstanceNormalization" or len(shape) == 3 else None
    if kind == "dense":
        return (layer["out"],) if len(shape) == 1 else None
    if len(shape) != 3:
        return None
    c, h, w = shape
    if kind == "flatten":
        return (c * h * w,)
    if kind == "gpool":
        return (c, 1, 1)
    if kind == "resize":  # by `scale`, or by the fraction p / q (rounded down: a Resize with sizes)
        p, q = layer.get("fraction") or (layer["scale"], 1)
        return (c, h * p // q, w * p // q)
    if kind == "pad":
        t, l, b, r = layer["pads"]
        return (c, h + t + b, w + l + r)
    if kind == "residual":
        return shape if _conv_fits(layer["conv"], c) and _conv_shape(layer["conv"], shape) == shape else None
    if kind == "concat":
        a, b = _conv_shape(layer["a"], shape), _conv_shape(layer["b"], shape)
        if a is None or b is None or not (_conv_fits(layer["a"], c) and _conv_fits(layer["b"], c)):
            return None
        axis = layer["axis"]
        if any(x != y for i, (x, y) in enumerate(zip(a, b)) if i != axis - 1):
            return None
        return tuple(x + y if i == axis - 1 else x for i, (x, y) in enumerate(zip(a, b)))
    if kind == "conv":
        return _conv_shape(layer.params, shape) if _conv_fits(layer.params, c) else None
    if kind == "upconv":
        return _upconv_shape(layer.params, shape)
    if kind == "shuffle":
        b, conv = layer["block"], _conv_shape(layer["conv"], shape)
        return None if conv is None or conv[0] % (b * b) else (conv[0] // (b * b), conv[1] * b, conv[2] * b)
    if kind == "focus":
        return None if h % 2 or w % 2 else (4 * c, h // 2, w // 2)
    if kind == "shuffle_unit":
        return None if c % 2 or c % layer["groups"] else shape
    if kind == "pool":
        return _pool_shape(layer.params, shape)
    raise ValueError(f"unknown layer kind {kind!r}")


def conv_groups(params: dict, cin: int) -> int:
    return cin if params["groups"] == "depthwise" else params["groups"]


def conv_channels(params: dict, cin: int) -> int:
    return cin * params["multiplier"] if params["groups"] == "depthwise" else params["out"]


def _conv_fits(params: dict, cin: int) -> bool:
    g = conv_groups(params, cin)
    return g >= 1 and cin % g == 0 and conv_channels(params, cin) % g == 0


def _conv_shape(params: dict, shape) -> tuple[int, int, int] | None:
    c, h, w = shape
    (kh, kw), (sh, sw), (dh, dw), (t, l, b, r) = params["k"], params["stride"], params["dil"], params["pads"]
    return (conv_channels(params, c), conv_out(h, kh, sh, dh, t, b), conv_out(w, kw, sw, dw, l, r))


def _upconv_shape(params: dict, shape) -> tuple[int, int, int] | None:
    """A ConvTranspose's output: (size - 1) * stride - pads + kernel + output_padding per axis."""
    c, h, w = shape
    (kh, kw), (sh, sw), (t, l, b, r), (oh, ow) = params["k"], params["stride"], params["pads"], params["output_padding"]
    out = (conv_channels(params, c), (h - 1) * sh - t - b + kh + oh, (w - 1) * sw - l - r + kw + ow)
    return out if min(out) >= 1 else None


def _pool_shape(params: dict, shape) -> tuple[int, int, int] | None:
    c, h, w = shape
    (kh, kw), (sh, sw), (t, l, b, r) = params["k"], params["stride"], params["pads"]
    d = params.get("dil", 1)
    if max(t, b) >= kh or max(l, r) >= kw:  # ONNX: a pad must be smaller than the window
        return None
    ceil = params.get("ceil", False)
    oh, ow = conv_out(h, kh, sh, d, t, b, ceil), conv_out(w, kw, sw, d, l, r, ceil)
    if ceil and ((oh - 1) * sh >= h + t or (ow - 1) * sw >= w + l):  # a last window wholly in the padding
        return None
    return (c, oh, ow)


def layer_macs(layer: LayerSpec, before: tuple[int, ...], after: tuple[int, ...]) -> int:
    if layer.kind == "dense":
        return before[0] * after[0]
    if layer.kind == "shuffle_unit":  # the 1x1 conv of its branch, on half the channels
        return math.prod(before[1:]) * (before[0] // 2) ** 2
    if (layer.kind == "resize" and layer.get("mode") == "linear" and layer.get("transform") != "align_corners"
            and not layer.get("fraction")):
        # the depthwise filter of every output pixel (align_corners, a fractional factor: the vector unit's
        # interpolation, no MACs)
        taps = layer["scale"] + 1 - layer["scale"] % 2
        return math.prod(after) * taps * taps
    if layer.kind == "upconv":  # every input pixel times every tap
        return math.prod(before) * conv_channels(layer.params, before[0]) // conv_groups(layer.params, before[0]) \
            * layer["k"][0] * layer["k"][1]
    convs = {"conv": [layer.params], "residual": [layer.get("conv")], "concat": [layer.get("a"), layer.get("b")],
             "shuffle": [layer.get("conv")]}
    total = 0
    for params in convs.get(layer.kind, []):
        c = before[0]
        out = _conv_shape(params, before)
        total += math.prod(out) * (c // conv_groups(params, c)) * params["k"][0] * params["k"][1]
    return total


def head_input(head: LayerSpec, shapes: list[tuple[int, ...]]) -> tuple[int, ...] | None:
    """The tensor a head reads: the output of layer `at` (1-based: 1 is the first layer's; None the last)."""
    at = head.get("at")
    if at is None:
        return shapes[-1]
    return shapes[at] if 1 <= at < len(shapes) else None


def head_shapes(head: LayerSpec, shapes: list[tuple[int, ...]]) -> list[tuple[int, ...]] | None:
    """The shapes (batch left out) of a head's graph outputs, or None when it does not fit.

    A head reads a layer's output; then `convs`: none (the tensor itself), one (a conv: a second head off the
    map) or two 1x1 convs whose outputs go NHWC, are reshaped to (H*W, C) and concatenated on C (a detector's
    boxes and scores); then `ops` (HEAD_OPS), each a dict with "op" and its parameters."""
    shape = head_input(head, shapes)
    if shape is None:
        return None
    convs = head.get("convs", [])
    if convs:
        if len(shape) != 3:
            return None
        outs = []
        for conv in convs:
            if not _conv_fits(conv, shape[0]):
                return None
            outs.append(_conv_shape(conv, shape))
        if min(min(o) for o in outs) < 1:
            return None
        if len(outs) == 1:
            shape = outs[0]
        elif len(outs) == 2 and outs[0][1:] == outs[1][1:]:
            shape = (outs[0][1] * outs[0][2], outs[0][0] + outs[1][0])
        else:
            return None
    ops = head.get("ops", [])
    for i, op in enumerate(ops):
        name = op["op"]
        if name in TERMINAL_HEAD_OPS and i != len(ops) - 1:
            return None
        if name in ("exp", "sigmoid", "softmax"):
            continue
        if name in ("reduce", "argmax"):
            axis = channel_axis(shape)
            shape = tuple(1 if j == axis and op["keepdims"] else d for j, d in enumerate(shape)
                          if j != axis or op["keepdims"])
        elif name == "nhwc":
            if len(shape) != 3:
                return None
            shape = (shape[1] * shape[2], shape[0])
        elif name == "topk":
            if op["k"] > math.prod(shape):
                return None
            return [(op["k"],), (op["k"],)]
        else:
            raise ValueError(f"unknown head op {name!r}")
    return [shape]


def channel_axis(shape: tuple[int, ...]) -> int:
    """The axis (batch left out) a head's softmax, reduce or argmax works on: the channels of a map or a
    vector, the last of an (H*W, C) table."""
    return len(shape) - 1 if len(shape) == 2 else 0


def head_macs(head: LayerSpec, shapes: list[tuple[int, ...]]) -> int:
    shape = head_input(head, shapes)
    return sum(layer_macs(LayerSpec("conv", conv), shape, _conv_shape(conv, shape)) for conv in head.get("convs", []))
