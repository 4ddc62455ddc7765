"""Random valid model specs: `random_spec(seed, profile)` draws an input shape, a chain of layers that fit it,
a quantization annotation, bit widths, a target and where the RTL's program lives, all from one seed; then,
from a stream of its own (so a seed's other draws stay as they were), what exporters add (`_features`):
shape code, dynamic input axes, host ops between layers, several outputs and host post-processing heads."""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .onnx_model import QONNX_DOMAIN
from .spec import (ACTIVATIONS, HOST_OPS, MAP_KINDS, LayerSpec, ModelSpec, TargetSpec, head_shapes,
                   layer_macs, layer_shape)

BUILTIN_TARGETS = ("systolic8x8", "systolic16x16", "systolic32x32")
ODD_CHANNELS = (1, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 61, 97, 127, 131, 251, 257, 293)


@dataclass(frozen=True)
class Profile:
    name: str
    channels: int  # most channels a tensor has
    side: int  # longest side of a map
    layers: int
    kernel: int
    macs: int  # per inference, over the whole model
    elements: int  # per tensor
    row: int  # elements in one row of a map (C x W): a band of rows must fit the activation memory
    features: int  # most outputs of a dense layer
    sides: tuple[int, ...]  # the random targets' array sides
    input_kib: tuple[int, ...]  # the random targets' activation memories
    extra: float = 0.0  # how often the exporter-like features come (_features): about one model in 1/extra each


PROFILES = {
    # a build and its C-sim in ~2-4 s: the CI run
    "ci": Profile("ci", channels=12, side=12, layers=4, kernel=5, macs=150_000, elements=2_048, row=2_048,
                  features=16, sides=(4, 8, 16), input_kib=(16, 32, 64, 128, 256), extra=0.06),
    # the full ranges of issue 14, bounded so a build and its C-sim stay under ~20 s
    # (maps whose rows or whole outputs overflow the activation memory are refused with exit 3: kept rare)
    "long": Profile("long", channels=300, side=300, layers=8, kernel=11, macs=8_000_000, elements=24_000,
                    row=2_400, features=300, sides=(4, 8, 16, 32), input_kib=(128, 256, 512), extra=0.25),
}


def random_spec(seed: int, profile: str = "ci") -> ModelSpec:
    prof = PROFILES[profile]
    rng = np.random.default_rng([seed, 0])
    for _ in range(100):  # draws that exceed the profile's sizes start over
        shape = (_channels(rng, min(prof.channels, 16)), _side(rng, prof.side), _side(rng, prof.side))
        if shape[0] * shape[1] * shape[2] <= prof.elements and shape[0] * shape[2] <= prof.row:
            break
    layers, shapes = [], [shape]
    count = int(rng.integers(1, prof.layers + 1))
    while len(layers) < count:
        layer = _layer(rng, prof, shapes[-1])
        if layer is None:
            break
        out = layer_shape(layer, shapes[-1])
        if out is None or min(out) < 1 or int(np.prod(out)) > prof.elements or \
                (len(out) == 3 and out[0] * out[2] > prof.row):
            continue
        if sum(layer_macs(a, b, c) for a, b, c in zip(layers, shapes, shapes[1:])) + layer_macs(layer, shapes[-1], out) > prof.macs:
            break
        layers.append(layer)
        shapes.append(out)
    if not any(layer.kind in ("conv", "residual", "concat", "dense") for layer in layers):
        layers.append(_pointwise(rng, prof, shapes[-1]))
    annotation = str(rng.choice(["float", "float", "qdq", "qonnx"]))
    bits = {"float": int(rng.choice([8, 8, 8, 7, 6, 5, 4, 3, 2])), "qdq": 8, "qonnx": int(rng.integers(2, 9))}[annotation]
    program = "external" if rng.random() < 0.4 else "rom"
    if program == "external" and profile == "ci":  # one Verilator build of the shipped top serves them all
        target = TargetSpec(builtin="systolic8x8")
    else:
        target = _target(rng, prof)
    spec = ModelSpec(seed=seed, shape=shape, layers=tuple(layers), annotation=annotation, bits=bits,
                     qonnx_domain=str(rng.choice(["", QONNX_DOMAIN])), target=target, program=program,
                     samples=int(rng.integers(8, 17)), input_scale=float(rng.choice([0.5, 1.0, 2.0, 10.0])))
    return _features(np.random.default_rng([seed, 3]), prof, spec)


def _features(rng, prof: Profile, spec: ModelSpec) -> ModelSpec:
    """What exported detectors and segmenters carry, each with probability about prof.extra: exporter shape
    code (a Flatten as Shape -> Gather -> Unsqueeze -> Concat -> Reshape; a nearest Resize whose sizes are
    computed from the input's shape), dynamic input axes (a symbolic batch; or H and W too, the build then
    given --input-shape), a host op between two layers, and 2-3 graph outputs with post-processing heads.
    A draw that would exceed the profile's sizes is dropped."""
    p = prof.extra
    layers = list(spec.layers)
    for i, layer in enumerate(layers):
        if layer.kind == "flatten" and rng.random() < 3 * p:
            layers[i] = layer.with_params(reshape=True, shape_code=True)
    if rng.random() < p:
        maps = [i for i, shape in enumerate(spec.shapes()) if len(shape) == 3]
        at = int(rng.choice(maps))
        scale, shape_code = int(rng.choice([2, 2, 2, 3])), bool(rng.random() < 0.6)
        # torch's bilinear F.interpolate where the sizes are constants (align_corners=False: half_pixel, or True),
        # else nearest
        resize = LayerSpec("resize", {"scale": scale, "shape_code": shape_code,
                                      "mode": "nearest" if shape_code else "linear"})
        if not shape_code:
            resize = resize.with_params(transform="align_corners" if rng.random() < 0.4 else "half_pixel")
            if rng.random() < 0.3:  # resized to a size that is no multiple of its input's (a head to the input size),
                resize = resize.with_params(fraction=[int(v) for v in rng.choice([(3, 2), (5, 3), (5, 2)])],
                                            mode="nearest" if rng.random() < 0.3 else "linear")  # nearest or not
        layers = _fits(prof, spec, layers[:at] + [resize] + layers[at:]) or layers
    if rng.random() < p and len(layers) >= 2:
        at = int(rng.integers(1, len(layers)))
        op = str(rng.choice(HOST_OPS))
        shapes = replace(spec, layers=tuple(layers)).shapes()
        if len(shapes[at]) != 3 and op == "InstanceNormalization":
            op = "Atan"
        layers = layers[:at] + [LayerSpec("host", {"op": op})] + layers[at:]
    layers = _upsampling(np.random.default_rng([spec.seed, 4]), prof, replace(spec, layers=tuple(layers))) or layers
    layers = _block_moves(np.random.default_rng([spec.seed, 5]), prof, replace(spec, layers=tuple(layers))) or layers
    layers = _shuffle_unit(np.random.default_rng([spec.seed, 6]), prof, replace(spec, layers=tuple(layers))) or layers
    form = rng.random()
    dynamic = "batch" if form < p else "hw" if form < 1.6 * p else ""
    spec = replace(spec, layers=tuple(layers), dynamic=dynamic)
    if rng.random() < 1.5 * p:
        outputs = _heads(rng, prof, spec.shapes())
        if _fits(prof, replace(spec, outputs=outputs), layers) is not None:
            spec = replace(spec, outputs=outputs)
    if spec.annotation == "qonnx" and (spec.outputs or any(layer.kind == "host" for layer in layers)):
        spec = replace(spec, annotation="qdq", bits=8)  # the host (onnxruntime) runs no QONNX Quant
    return spec


def _upsampling(rng, prof: Profile, spec: ModelSpec) -> list[LayerSpec] | None:
    """The layers with a learned upsampling (a ConvTranspose as decoders and FPNs use it: kernel 1-4, stride
    1-3, padding below the kernel, output padding below the stride, dense or depthwise, with BatchNorm and an
    activation) after a random map, with probability prof.extra (its own random stream: the draws of the
    other features stay as they were); None when not drawn or too big."""
    if rng.random() >= prof.extra:
        return None
    shapes = spec.shapes()
    maps = [i for i, shape in enumerate(shapes) if len(shape) == 3]
    at = int(rng.choice(maps))
    k = [int(rng.integers(1, 5)) for _ in range(2)]
    stride = [int(rng.choice([1, 2, 2, 2, 3]))] * 2 if rng.random() < 0.8 else [int(rng.integers(1, 4)) for _ in range(2)]
    params = {"k": k, "stride": stride, "dil": [1, 1], "pads": [int(rng.integers(0, k[i % 2])) for i in range(4)],
              "output_padding": [int(rng.integers(0, s)) for s in stride], "bias": bool(rng.random() < 0.7),
              "bn": bool(rng.random() < 0.5), "act": _activation(rng)}
    if rng.random() < 0.3:
        params.update(groups="depthwise", multiplier=1)
    else:
        params.update(groups=1, out=_channels(rng, prof.channels))
    layers = list(spec.layers)
    return _fits(prof, spec, layers[:at] + [LayerSpec("upconv", params)] + layers[at:])


def _block_moves(rng, prof: Profile, spec: ModelSpec) -> list[LayerSpec] | None:
    """The layers with a Focus stem first or a PixelShuffle (a Conv to C * b^2 channels, then DepthToSpace of
    block b, DCR or CRD) after a random map, with probability prof.extra (their own random stream); None
    when not drawn or too big."""
    if rng.random() >= prof.extra:
        return None
    layers = list(spec.layers)
    if rng.random() < 0.4:
        order = [[int(dy), int(dx)] for dy, dx in rng.permutation([(0, 0), (1, 0), (0, 1), (1, 1)])]
        return _fits(prof, spec, [LayerSpec("focus", {"order": order})] + layers)
    maps = [i for i, shape in enumerate(spec.shapes()) if len(shape) == 3]
    at, block = int(rng.choice(maps)), int(rng.choice([2, 2, 3]))
    k = int(rng.choice([1, 3]))
    conv = _conv_params(rng, prof, spec.shapes()[at], k=[k, k], stride=[1, 1], dil=[1, 1], pads=[k // 2] * 4,
                        out=block * block * int(rng.integers(1, 4)), groups=1)
    shuffle = LayerSpec("shuffle", {"block": block, "mode": str(rng.choice(["DCR", "CRD"])), "conv": conv})
    return _fits(prof, spec, layers[:at] + [shuffle] + layers[at:])


def _shuffle_unit(rng, prof: Profile, spec: ModelSpec) -> list[LayerSpec] | None:
    """The layers with a ShuffleNetV2 unit (chunk by a Split or two Slices, a 1x1 Conv with BatchNorm and an
    activation on the second half, Concat, channel shuffle of 2 or 4 groups) after a random map of an even
    channel count, with probability 2 * prof.extra (its own random stream); None when not drawn or too big."""
    if rng.random() >= 2 * prof.extra:
        return None
    maps = [i for i, shape in enumerate(spec.shapes()) if len(shape) == 3 and shape[0] % 2 == 0]
    if not maps:
        return None
    at = int(rng.choice(maps))
    c, h, w = spec.shapes()[at]
    conv = _conv_params(rng, prof, (c // 2, h, w), k=[1, 1], stride=[1, 1], dil=[1, 1], pads=[0] * 4, out=c // 2,
                        groups=1)
    params = {"groups": 4 if c % 4 == 0 and rng.random() < 0.3 else 2, "chunk": str(rng.choice(["Split", "Slice"])),
              "conv": conv}
    layers = list(spec.layers)
    return _fits(prof, spec, layers[:at] + [LayerSpec("shuffle_unit", params)] + layers[at:])


def _fits(prof: Profile, spec: ModelSpec, layers: list[LayerSpec]) -> list[LayerSpec] | None:
    """`layers` if the spec with them fits the profile's sizes (elements, rows, MACs), else None."""
    spec = replace(spec, layers=tuple(layers))
    shapes = spec.shapes()
    if shapes is None or spec.macs() > prof.macs:
        return None
    for shape in shapes + [o for head in spec.outputs for o in head_shapes(head, shapes)]:
        if int(np.prod(shape)) > prof.elements or (len(shape) == 3 and shape[0] * shape[2] > prof.row):
            return None
    return layers


def _heads(rng, prof: Profile, shapes: list[tuple[int, ...]]) -> tuple[LayerSpec, ...]:
    """The last layer's output through a post-processing chain, and one or two more outputs: an intermediate
    map as it is, a second head (a conv off an intermediate map), or a detector's pair of 1x1 convs whose NHWC
    outputs are concatenated."""
    heads = [LayerSpec("head", {"at": None, "ops": _head_ops(rng, shapes[-1])})]
    maps = [i for i in range(1, len(shapes)) if len(shapes[i]) == 3]
    for _ in range(int(rng.integers(1, 3))):
        form = rng.random()
        if not maps:
            break
        at = int(rng.choice(maps))
        shape = shapes[at]
        if form < 0.3 and at < len(shapes) - 1:
            heads.append(LayerSpec("head", {"at": at}))
        elif form < 0.75:
            k = int(rng.choice([1, 1, 3]))
            conv = _conv_params(rng, prof, shape, k=[k, k], stride=[1, 1], dil=[1, 1], pads=[k // 2] * 4, groups=1,
                                out=int(rng.integers(1, 9)))
            ops = [] if rng.random() < 0.3 else [_head_op(rng, str(rng.choice(["sigmoid", "exp", "reduce"])))]
            heads.append(LayerSpec("head", {"at": at, "convs": [conv], "ops": ops}))
        else:
            convs = [_conv_params(rng, prof, shape, k=[1, 1], stride=[1, 1], dil=[1, 1], pads=[0, 0, 0, 0], groups=1,
                                  out=c) for c in (4, int(rng.integers(1, 9)))]
            for conv in convs:
                conv["act"] = "none"
            ops = [_head_op(rng, str(rng.choice(["sigmoid", "softmax", "argmax"])))] if rng.random() < 0.5 else []
            heads.append(LayerSpec("head", {"at": at, "convs": convs, "ops": ops}))
    return tuple(heads)


def _head_ops(rng, shape: tuple[int, ...]) -> list[dict]:
    """A post-processing chain on the last layer's output: a decode, a normalization, a reduction or a pick."""
    form = rng.random()
    if len(shape) == 3 and form < 0.15:
        ops = ["nhwc"] + (["sigmoid"] if rng.random() < 0.5 else [])
    elif form < 0.3:
        ops = ["exp"]
    elif form < 0.6:
        ops = [str(rng.choice(["sigmoid", "softmax"]))]
        if rng.random() < 0.5:
            ops.append(str(rng.choice(["argmax", "reduce", "topk"])))
    elif form < 0.75:
        ops = ["reduce"]
    elif form < 0.9:
        ops = [str(rng.choice(["argmax", "topk"]))]
    else:
        ops = []
    size = int(np.prod(shape))
    return [_head_op(rng, op, size) for op in ops]


def _head_op(rng, op: str, size: int = 1) -> dict:
    if op == "exp":
        return {"op": op, "k": float(np.float32(rng.uniform(0.05, 0.3))), "anchor": float(rng.choice([1.0, 4.0, 16.0]))}
    if op == "reduce":
        return {"op": op, "fn": str(rng.choice(["ReduceMax", "ReduceSum", "ReduceMean"])),
                "keepdims": int(rng.random() < 0.5)}
    if op == "argmax":
        return {"op": op, "keepdims": int(rng.random() < 0.5)}
    if op == "topk":
        return {"op": op, "k": int(rng.integers(1, min(size, 10) + 1))}
    return {"op": op}


def _channels(rng, top: int) -> int:
    if rng.random() < 0.4:
        odd = [c for c in ODD_CHANNELS if c <= top]
        return int(rng.choice(odd))
    return int(rng.integers(1, top + 1))


def _side(rng, top: int) -> int:
    return int(rng.integers(1, top + 1)) if rng.random() < 0.2 else int(rng.integers(min(4, top), top + 1))


def _activation(rng) -> str:
    """ReLU most often, as in real CNNs."""
    return "relu" if rng.random() < 0.35 else str(rng.choice(ACTIVATIONS))


def _layer(rng, prof: Profile, shape: tuple[int, ...]) -> LayerSpec | None:
    if len(shape) == 1:
        kind = str(rng.choice(["dense", "dense", "dense", "act"]))
    else:
        kinds = list(MAP_KINDS)
        weights = np.array([5, 1.5, 0.4, 0.6, 1, 0.5, 0.8, 0.4, 1.0])
        kind = str(rng.choice(kinds, p=weights / weights.sum()))
    return getattr(_Draw, kind)(rng, prof, shape)


def _pointwise(rng, prof: Profile, shape) -> LayerSpec:
    if len(shape) == 1:
        return LayerSpec("dense", {"out": _channels(rng, prof.features), "bias": True, "bn": False, "act": "none",
                                   "matmul": False})
    return LayerSpec("conv", _conv_params(rng, prof, shape, k=[1, 1], stride=[1, 1], dil=[1, 1], pads=[0, 0, 0, 0]))


def _conv_params(rng, prof: Profile, shape, k=None, stride=None, dil=None, pads=None, out=None, groups=None) -> dict:
    cin, h, w = shape
    if k is None:
        kh = int(rng.integers(1, prof.kernel + 1))
        k = [kh, kh] if rng.random() < 0.7 else [kh, int(rng.integers(1, prof.kernel + 1))]
    if dil is None:
        dil = [1, 1] if rng.random() < 0.8 else [int(rng.integers(1, 4)), int(rng.integers(1, 4))]
    if stride is None:
        stride = [1, 1] if rng.random() < 0.5 else [int(rng.integers(1, 4)), int(rng.integers(1, 4))]
    if pads is None:
        form = rng.random()
        if form < 0.35:
            pads = [0, 0, 0, 0]
        elif form < 0.7:
            pads = [dil[0] * (k[0] - 1) // 2, dil[1] * (k[1] - 1) // 2, dil[0] * (k[0] - 1) // 2, dil[1] * (k[1] - 1) // 2]
        else:
            pads = [int(rng.integers(0, k[i % 2])) for i in range(4)]
    if groups is None:
        form = rng.random()
        divisors = [g for g in range(2, cin + 1) if cin % g == 0]
        if form < 0.2:
            groups = "depthwise"
        elif form < 0.35 and divisors:
            groups = int(rng.choice(divisors))
        else:
            groups = 1
    params = {"k": k, "stride": stride, "dil": dil, "pads": pads, "groups": groups, "bias": bool(rng.random() < 0.8),
              "bn": bool(rng.random() < 0.4), "act": _activation(rng)}
    if groups == "depthwise":
        params["multiplier"] = 1 if rng.random() < 0.8 else 2
    else:
        cout = out or _channels(rng, prof.channels)
        params["out"] = cout if groups == 1 else groups * max(1, cout // groups)
    return params


class _Draw:
    """One drawer per layer kind: parameters that fit the input shape, or a layer layer_shape refuses (then
    the generator draws again)."""

    @staticmethod
    def conv(rng, prof, shape):
        return LayerSpec("conv", _conv_params(rng, prof, shape))

    @staticmethod
    def pool(rng, prof, shape):
        _, h, w = shape
        op = str(rng.choice(["max", "avg"]))
        kh = int(rng.integers(1, min(h, 7) + 1))
        k = [kh, kh] if rng.random() < 0.7 else [kh, int(rng.integers(1, min(w, 7) + 1))]
        stride = [int(rng.integers(1, k[0] + 1)), int(rng.integers(1, k[1] + 1))] if rng.random() < 0.5 else list(k)
        pads = [0, 0, 0, 0] if rng.random() < 0.5 else [int(rng.integers(0, k[i % 2])) for i in range(4)]
        return LayerSpec("pool", {"op": op, "k": k, "stride": stride, "pads": pads, "ceil": bool(rng.random() < 0.25),
                                  "include_pad": bool(rng.random() < 0.5),
                                  "dil": 1 if op == "avg" or rng.random() < 0.8 else 2})

    @staticmethod
    def gpool(rng, prof, shape):
        return LayerSpec("gpool", {"op": str(rng.choice(["max", "avg"]))})

    @staticmethod
    def act(rng, prof, shape):
        return LayerSpec("act", {"act": str(rng.choice(ACTIVATIONS[1:]))})

    @staticmethod
    def residual(rng, prof, shape):
        k = int(rng.choice([1, 3, 5]))
        d = 1 if rng.random() < 0.8 else 2
        half = d * (k - 1) // 2
        groups = "depthwise" if rng.random() < 0.3 else 1
        conv = _conv_params(rng, prof, shape, k=[k, k], stride=[1, 1], dil=[d, d], pads=[half] * 4, out=shape[0],
                            groups=groups)
        if groups == "depthwise":
            conv["multiplier"] = 1
        return LayerSpec("residual", {"conv": conv, "skip_first": bool(rng.random() < 0.5), "post": _activation(rng)})

    @staticmethod
    def const(rng, prof, shape):
        return LayerSpec("const", {"op": str(rng.choice(["Add", "Mul", "Sub", "Div"])),
                                   "per_channel": bool(rng.random() < 0.7)})

    @staticmethod
    def concat(rng, prof, shape):
        axis = 1 if rng.random() < 0.7 else int(rng.choice([2, 3]))
        a = _conv_params(rng, prof, shape, k=[1, 1], stride=[1, 1], dil=[1, 1], pads=[0, 0, 0, 0], groups=1)
        k = int(rng.choice([1, 3, 5]))
        b = _conv_params(rng, prof, shape, k=[k, k], stride=[1, 1], dil=[1, 1], pads=[k // 2] * 4, groups=1,
                         out=a["out"] if axis != 1 else None)
        return LayerSpec("concat", {"a": a, "b": b, "axis": axis})

    @staticmethod
    def pad(rng, prof, shape):
        pads = [int(rng.integers(0, 4)) for _ in range(4)]
        if not any(pads):
            pads[int(rng.integers(0, 4))] = 1
        return LayerSpec("pad", {"pads": pads})

    @staticmethod
    def flatten(rng, prof, shape):
        return LayerSpec("flatten", {"reshape": bool(rng.random() < 0.5)})

    @staticmethod
    def dense(rng, prof, shape):
        return LayerSpec("dense", {"out": _channels(rng, prof.features), "bias": bool(rng.random() < 0.85),
                                   "bn": bool(rng.random() < 0.2), "act": _activation(rng),
                                   "matmul": bool(rng.random() < 0.3)})


def _target(rng, prof: Profile) -> TargetSpec:
    if rng.random() < 0.5:
        return TargetSpec(builtin=str(rng.choice(BUILTIN_TARGETS)))
    side = int(rng.choice(prof.sides))
    # feature maps move in whole AXI4 beats of activation-memory words (side bytes): no beat wider than a word
    data_bits = int(rng.choice([b for b in (32, 64, 128) if b <= 8 * side]))
    return TargetSpec(builtin=None, side=side, input_kib=int(rng.choice(prof.input_kib)), input_banks=side,
                      weight_kib=int(rng.choice([16, 32, 64, 128])), weight_banks=side,
                      accumulator_kib=int(rng.choice([8, 16, 32, 64])), accumulator_banks=side, data_bits=data_bits,
                      bytes_per_cycle=float(rng.choice([0.5, 0.75, 1.0])) * data_bits / 8,
                      read_latency=int(rng.integers(5, 101)))
