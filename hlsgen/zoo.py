"""A zoo of small, realistic CNNs built in code, for tests and benchmarks.

Every CNN constructor (`ZOO`) returns an `onnx.ModelProto` (opset 17, IR version 10) with one input
`image` [N, C, H, W] (symbolic batch "N") and one output `logits` [N, classes]. `anomaly_autoencoder` is
the dense-only exception: input `features` [N, 640] (log-mel frames), output `reconstruction` [N, 640].

Weights are He-initialized from a fixed seed while a float probe batch runs through the net in numpy:
half image-like samples (as `calibration_data` makes them), half standard normal. Each Conv is
rescaled so its output has std ~1 on the probe, and each BatchNormalization gets running statistics
close to the ones it sees there (plus noise) and random gamma/beta, as in a trained network; so
activations stay O(1) on either kind of input. The classifier is centred and scaled on the image
half (logits std ~1 there, with varied top-1 classes, as a trained net would give); standard normal
inputs give logits a few times larger. Rescale factors and statistics are rounded to 4 significant
digits so that last-bit BLAS differences between machines do not change the weights; building a
model twice gives a byte-identical protobuf.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 10  # onnx >= 1.23 writes IR 14 by default, which onnxruntime 1.31 refuses
BN_EPSILON = 1e-5
PROBE_BATCH = 32
FEATURE_PROBE_BATCH = 512
FRAMES, MEL_BINS = 5, 128  # the autoencoder's input: 5 log-mel frames
FEATURES = FRAMES * MEL_BINS


def _round_sig(x, digits: int = 4) -> np.ndarray:
    """`x` rounded to `digits` significant digits (elementwise), as float64."""
    x = np.asarray(x, np.float64)
    safe = np.where(x == 0, 1.0, np.abs(x))
    scale = 10.0 ** (digits - 1 - np.floor(np.log10(safe)))
    return np.round(x * scale) / scale


def _pair(v: int | tuple[int, int]) -> tuple[int, int]:
    return (v, v) if isinstance(v, int) else tuple(v)


def _windows(x: np.ndarray, kernel: tuple[int, int], stride: tuple[int, int], pads: tuple[int, int, int, int],
             fill: float = 0.0) -> list[np.ndarray]:
    """The kh * kw strided taps of NCHW `x` padded by `pads` (ONNX order: top, left, bottom, right) with `fill`."""
    (kh, kw), (sh, sw), (top, left, bottom, right) = kernel, stride, pads
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=fill)
    oh, ow = (xp.shape[2] - kh) // sh + 1, (xp.shape[3] - kw) // sw + 1
    return [xp[:, :, i : i + sh * oh : sh, j : j + sw * ow : sw] for i in range(kh) for j in range(kw)]


def _conv2d(x: np.ndarray, w: np.ndarray, stride: tuple[int, int], pads: tuple[int, int, int, int],
            group: int) -> np.ndarray:
    """Float NCHW convolution for the probe forward (no dilation)."""
    n = x.shape[0]
    m, cg, kh, kw = w.shape
    taps = _windows(x, (kh, kw), stride, pads)
    oh, ow = taps[0].shape[2:]
    cols = np.stack(taps, axis=2).reshape(n, group, cg, kh * kw, oh, ow)
    out = np.einsum("ngckhw,gmck->ngmhw", cols, w.reshape(group, m // group, cg, kh * kw), optimize=True)
    return out.reshape(n, m, oh, ow)


class NetBuilder:
    """Appends ONNX nodes and initializers while running a float probe batch through the net.

    Each method takes the input tensor name and returns the output tensor name; node names double as
    output tensor names (identifier-safe), except the classifier's output `logits`.
    """

    def __init__(self, name: str, input_shape: tuple[int, ...], seed: int, input_name: str = "image",
                 probe_batch: int = PROBE_BATCH, realistic: Callable | None = None):
        """`probe_batch` smaller for big inputs (the probe keeps every activation); `realistic(rng, n, shape)` makes
        the realistic half of the probe where the input is neither an image nor log-mel frames."""
        self.name, self.input_name = name, input_name
        self.rng = np.random.default_rng(seed)
        self.input_shape = input_shape
        self.nodes: list[onnx.NodeProto] = []
        self.inits: dict[str, np.ndarray] = {}
        probe = _probe(np.random.default_rng([seed, 1]), input_shape, probe_batch, realistic)
        self.values = {input_name: probe}  # probe activations (float64) by tensor name

    def channels(self, x: str) -> int:
        return self.values[x].shape[1]

    def _init(self, name: str, value) -> str:
        self.inits[name] = np.asarray(value, np.float32)
        return name

    def _emit(self, op: str, inputs: list[str], name: str, value: np.ndarray, output: str | None = None, **attrs) -> str:
        output = output or name
        self.nodes.append(helper.make_node(op, inputs, [output], name=name, **attrs))
        self.values[output] = value
        return output

    @staticmethod
    def _unit_std(w: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Weights `w` of a linear layer (as float32) and its probe output `y`, both scaled so y has std ~1."""
        scale = _round_sig(1.0 / float(np.std(y)))
        return (w * scale).astype(np.float32), y * scale

    # ---- layers ----------------------------------------------------------------------------
    def conv(self, x: str, name: str, out_ch: int, k: int | tuple[int, int] = 3, stride: int | tuple[int, int] = 1,
             group: int = 1, pads: tuple[int, int, int, int] | None = None, bias: bool = False,
             mean: float = 0.0) -> str:
        """Conv (k and stride square or (h, w)), padded by k // 2 on every side unless `pads` (top, left, bottom,
        right) says otherwise; a bias only with `bias` (Keras's default even where a BatchNormalization follows).
        Weights are N(`mean`, 1) times He's std: a positive mean makes low-pass kernels, as trained depthwise
        filters mostly are (a deep stack of zero-mean random 3x3 depthwise filters is high-pass and turns
        a 60 dB input SNR into 20 dB at the logits, which no trained network does)."""
        in_ch, (kh, kw), strides = self.channels(x), _pair(k), _pair(stride)
        pads = pads or (kh // 2, kw // 2, kh // 2, kw // 2)
        fan_in = in_ch // group * kh * kw
        w = (self.rng.standard_normal((out_ch, in_ch // group, kh, kw)) + mean) * np.sqrt(2.0 / fan_in)
        w, y = self._unit_std(w, _conv2d(self.values[x], w, strides, pads, group))
        inputs = [x, self._init(f"{name}_w", w)]
        if bias:
            inputs.append(self._init(f"{name}_b", self.rng.normal(0.0, 0.1, out_ch)))
            y = y + self.inits[inputs[2]].astype(np.float64).reshape(-1, 1, 1)
        attrs = dict(kernel_shape=[kh, kw], strides=list(strides), pads=list(pads), group=group)
        return self._emit("Conv", inputs, name, y, **attrs)

    def maxpool(self, x: str, name: str, k: int, stride: int, pad: int = 0) -> str:
        """MaxPool k x k (overlapping where stride < k), padded by `pad` on every side (pads never win a max)."""
        taps = _windows(self.values[x], (k, k), (stride, stride), (pad,) * 4, fill=-np.inf)
        attrs = dict(kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4)
        return self._emit("MaxPool", [x], name, np.max(taps, axis=0), **attrs)

    def dense(self, x: str, name: str, out_features: int) -> str:
        """Gemm with a bias and weights [out, in], transB=1: PyTorch's nn.Linear (a BatchNormalization follows)."""
        feats = self.values[x]
        w = self.rng.standard_normal((out_features, feats.shape[1])) * np.sqrt(2.0 / feats.shape[1])
        w, y = self._unit_std(w, feats @ w.T)
        inputs = [x, self._init(f"{name}_w", w), self._init(f"{name}_b", self.rng.normal(0.0, 0.1, out_features))]
        return self._emit("Gemm", inputs, name, y + self.inits[inputs[2]], transB=1)

    def batchnorm(self, x: str, name: str) -> str:
        v, c = self.values[x], self.channels(x)
        axes = (0, *range(2, v.ndim))  # every axis but the channels
        mean, var = v.mean(axis=axes), v.var(axis=axes)
        params = {
            "gamma": self.rng.uniform(0.6, 1.4, c),
            "beta": self.rng.normal(0.0, 0.2, c),
            "mean": _round_sig(mean + 0.1 * np.sqrt(var) * self.rng.standard_normal(c)),
            "var": _round_sig(var * self.rng.uniform(0.8, 1.25, c)),
        }
        inputs = [x] + [self._init(f"{name}_{k}", p) for k, p in params.items()]
        g, b, m, s = (self.inits[t].astype(np.float64).reshape(c, *[1] * (v.ndim - 2)) for t in inputs[1:])
        value = g * (v - m) / np.sqrt(s + np.float32(BN_EPSILON)) + b
        return self._emit("BatchNormalization", inputs, name, value, epsilon=BN_EPSILON)

    def relu(self, x: str, name: str) -> str:
        return self._emit("Relu", [x], name, np.maximum(self.values[x], 0.0))

    def relu6(self, x: str, name: str) -> str:
        """Clip(x, 0, 6) with constant min/max inputs (the opset >= 11 form)."""
        bounds = [self._init("relu6_min", 0.0), self._init("relu6_max", 6.0)]
        return self._emit("Clip", [x, *bounds], name, np.clip(self.values[x], 0.0, 6.0))

    def add(self, a: str, b: str, name: str) -> str:
        return self._emit("Add", [a, b], name, self.values[a] + self.values[b])

    def conv_bn(self, x: str, name: str, out_ch: int, k=3, stride=1, group=1, act: str | None = "relu",
                **conv) -> str:
        y = self.batchnorm(self.conv(x, f"{name}_conv", out_ch, k, stride, group, **conv), f"{name}_bn")
        return getattr(self, act)(y, f"{name}_{act}") if act else y

    # ---- blocks ----------------------------------------------------------------------------
    def basic_block(self, x: str, name: str, out_ch: int, stride: int = 1) -> str:
        """ResNet basic block; a 1x1 projection shortcut when the shape changes."""
        y = self.conv_bn(x, f"{name}_a", out_ch, 3, stride)
        y = self.conv_bn(y, f"{name}_b", out_ch, 3, 1, act=None)
        skip = x
        if stride != 1 or out_ch != self.channels(x):
            skip = self.conv_bn(x, f"{name}_proj", out_ch, 1, stride, act=None)
        return self.relu(self.add(y, skip, f"{name}_add"), f"{name}_relu")

    def separable(self, x: str, name: str, out_ch: int, stride: int = 1) -> str:
        """MobileNet-v1 block: depthwise 3x3 + BN + Relu6, pointwise 1x1 + BN + Relu6."""
        c = self.channels(x)
        y = self.conv_bn(x, f"{name}_dw", c, 3, stride, group=c, act="relu6")
        return self.conv_bn(y, f"{name}_pw", out_ch, 1, act="relu6")

    def inverted_residual(self, x: str, name: str, expand: int) -> str:
        """MobileNet-v2 block: expand 1x1, depthwise 3x3 (Relu6 each), linear 1x1 projection, identity Add."""
        c = self.channels(x)
        y = self.conv_bn(x, f"{name}_expand", c * expand, 1, act="relu6")
        y = self.conv_bn(y, f"{name}_dw", c * expand, 3, group=c * expand, act="relu6")
        y = self.conv_bn(y, f"{name}_project", c, 1, act=None)
        return self.add(x, y, f"{name}_add")

    def classifier(self, x: str, classes: int, pool_window: tuple[int, int] | None = None) -> str:
        """GlobalAveragePool (or, given `pool_window`, an AveragePool of that window and stride, as Keras's
        AveragePooling2D(pool_size) exports), Flatten, Gemm (weights [classes, C], transB=1 as PyTorch exports it)."""
        value = self.values[x]
        if pool_window is None:
            pooled = self._emit("GlobalAveragePool", [x], "pool", value.mean(axis=(2, 3), keepdims=True))
        else:
            window = list(pool_window)
            mean = np.mean(_windows(value, pool_window, pool_window, (0,) * 4), axis=0)
            pooled = self._emit("AveragePool", [x], "pool", mean, kernel_shape=window, strides=window)
        flat = self._emit("Flatten", [pooled], "flatten", self.values[pooled].reshape(len(value), -1), axis=1)
        feats = self.values[flat]
        images = feats[: len(feats) // 2]  # centre and scale on the realistic half of the probe
        w = self.rng.standard_normal((classes, feats.shape[1])) * np.sqrt(1.0 / feats.shape[1])
        w, _ = self._unit_std(w, (images - images.mean(axis=0)) @ w.T)
        bias = -_round_sig(images.mean(axis=0) @ w.astype(np.float64).T) + self.rng.normal(0.0, 0.1, classes)
        inputs = [flat, self._init("fc_w", w), self._init("fc_b", bias)]
        value = feats @ self.inits["fc_w"].astype(np.float64).T + self.inits["fc_b"]
        return self._emit("Gemm", inputs, "fc", value, output="logits", transB=1)

    def reconstruction(self, x: str) -> str:
        """The autoencoder's linear output Gemm, fitted by least squares to give back the probe's input from
        the last hidden layer (what training makes of a final linear layer): the output is input-like."""
        feats, target = self.values[x], self.values[self.input_name]
        coef = np.linalg.lstsq(np.hstack([feats, np.ones((len(feats), 1))]), target, rcond=None)[0]
        w, bias = _round_sig(coef[:-1].T), _round_sig(coef[-1])
        inputs = [x, self._init("decoder_out_w", w), self._init("decoder_out_b", bias)]
        value = feats @ self.inits["decoder_out_w"].astype(np.float64).T + self.inits["decoder_out_b"]
        return self._emit("Gemm", inputs, "decoder_out", value, output="reconstruction", transB=1)

    def build(self, output: str) -> onnx.ModelProto:
        graph = helper.make_graph(
            self.nodes,
            self.name,
            [helper.make_tensor_value_info(self.input_name, TensorProto.FLOAT, ["N", *self.input_shape])],
            [helper.make_tensor_value_info(output, TensorProto.FLOAT, ["N", self.values[output].shape[1]])],
            initializer=[numpy_helper.from_array(v, k) for k, v in self.inits.items()],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="hlsgen.zoo")
        model.ir_version = IR_VERSION
        onnx.checker.check_model(model, full_check=True)
        return model


# ---- the models ------------------------------------------------------------------------------
def residual_net(input_hw: int = 16, channels: int = 16, classes: int = 10, seed: int = 0, in_channels: int = 3) -> onnx.ModelProto:
    """ResNet-style: stem Conv-BN-Relu, two basic blocks, a stride-2 block with a 1x1 projection
    shortcut (doubling the channels), GlobalAveragePool, Flatten, Gemm."""
    net = NetBuilder("residual_net", (in_channels, input_hw, input_hw), seed)
    x = net.conv_bn("image", "stem", channels)
    x = net.basic_block(x, "block1", channels)
    x = net.basic_block(x, "block2", channels)
    x = net.basic_block(x, "down", 2 * channels, stride=2)
    return net.build(net.classifier(x, classes))


def mobilenet_net(input_hw: int = 16, channels: int = 16, classes: int = 10, seed: int = 0, in_channels: int = 3) -> onnx.ModelProto:
    """MobileNet-style with Relu6: stem Conv-BN-Relu6, three depthwise-separable blocks (the second
    strided, doubling the channels), one inverted-residual block, GlobalAveragePool, Flatten, Gemm."""
    net = NetBuilder("mobilenet_net", (in_channels, input_hw, input_hw), seed)
    x = net.conv_bn("image", "stem", channels, act="relu6")
    x = net.separable(x, "sep1", channels)
    x = net.separable(x, "sep2", 2 * channels, stride=2)
    x = net.separable(x, "sep3", 2 * channels)
    x = net.inverted_residual(x, "inv1", expand=3)
    return net.build(net.classifier(x, classes))


def resnet_cifar(seed: int = 0) -> onnx.ModelProto:
    """`residual_net` at CIFAR size: 3x32x32 input, 32 then 64 channels (for the analytic model)."""
    return residual_net(input_hw=32, channels=32, classes=10, seed=seed)


def mobilenet_cifar(seed: int = 0) -> onnx.ModelProto:
    """`mobilenet_net` at CIFAR size: 3x32x32 input, 32 then 64 channels (for the analytic model)."""
    return mobilenet_net(input_hw=32, channels=32, classes=10, seed=seed)


def anomaly_autoencoder(hidden: int = 128, seed: int = 0, depth: int = 4) -> onnx.ModelProto:
    """MLPerf Tiny's anomaly-detection autoencoder: 640 inputs (5 frames of 128 log-mel bins), four
    Gemm-BN-Relu layers of `hidden` (128 in MLPerf Tiny), a Gemm-BN-Relu bottleneck of 8, four Gemm-BN-Relu
    of `hidden`, and a Gemm back to 640 without BatchNormalization or Relu (the signed reconstruction).
    At 8 bits its weights and biases take 270,880 bytes, more than any shipped target's weight memory:
    `hidden=32` fits every one (51,232 bytes), `hidden=64` the 16x16 and 32x32 targets, 96 the 32x32.
    `depth` is the number of `hidden` layers on each side of the bottleneck: 2 gives the shorter
    640-128-128-8-128-128-640 form (203,296 bytes at 8 bits: the 32x32 target holds it)."""
    net = NetBuilder("anomaly_autoencoder", (FEATURES,), seed, input_name="features")
    x = "features"
    for i, width in enumerate((hidden,) * depth + (8,) + (hidden,) * depth):
        x = net.relu(net.batchnorm(net.dense(x, f"fc{i}", width), f"fc{i}_bn"), f"fc{i}_relu")
    return net.build(net.reconstruction(x))


ZOO: dict[str, Callable[..., onnx.ModelProto]] = {
    "residual": residual_net,
    "mobilenet": mobilenet_net,
    "resnet_cifar": resnet_cifar,
    "mobilenet_cifar": mobilenet_cifar,
}


def calibration_data(model: onnx.ModelProto, n: int = 64, seed: int = 0) -> np.ndarray:
    """`n` realistic inputs for `model`: image-like [n, C, H, W] float32 in [0, 1] (see `_image_like`), or
    log-mel-like [n, 640] for the autoencoder (see `_log_mel_like`)."""
    shape = tuple(d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim[1:])
    return _realistic(np.random.default_rng([seed, 2]), n, shape).astype(np.float32)


def _realistic(rng: np.random.Generator, n: int, shape: tuple[int, ...]) -> np.ndarray:
    return _log_mel_like(rng, n) if shape == (FEATURES,) else _image_like(rng, n, shape)


def _probe(rng: np.random.Generator, shape: tuple[int, ...], batch: int = PROBE_BATCH,
           realistic: Callable | None = None) -> np.ndarray:
    """The float probe batch. Images: half image-like, half standard normal (activations stay O(1) on
    either). Log-mel features only ever come in dB, far from zero: all of their probe is log-mel-like, and
    larger (an MLP's probe is cheap; statistics of 32 samples would fit them alone, and activations after
    the 8-wide bottleneck would grow on other inputs)."""
    if shape == (FEATURES,):
        return _log_mel_like(rng, FEATURE_PROBE_BATCH)
    half = batch // 2
    return np.concatenate([(realistic or _image_like)(rng, half, shape), rng.standard_normal((half, *shape))])


def _log_mel_like(rng: np.random.Generator, n: int) -> np.ndarray:
    """Five consecutive frames of a 128-bin log-mel spectrogram in dB, flattened (the autoencoder's input):
    a smooth spectral envelope falling with frequency, a per-sample level, small frame-to-frame changes."""
    bins = np.arange(MEL_BINS)
    envelope = np.cumsum(rng.normal(0.0, 1.5, (n, 1, MEL_BINS)), axis=2) - 0.15 * bins
    level = rng.uniform(-45.0, -20.0, (n, 1, 1))
    frames = envelope + level + rng.normal(0.0, 2.0, (n, FRAMES, MEL_BINS))
    return frames.reshape(n, FEATURES)


def _image_like(rng: np.random.Generator, n: int, shape: tuple[int, int, int]) -> np.ndarray:
    """Blurred coarse blobs plus fine texture with a random colour cast, each sample stretched to [0, 1]."""
    c, h, w = shape
    coarse = rng.random((n, c, -(-h // 4), -(-w // 4))).repeat(4, axis=2).repeat(4, axis=3)[:, :, :h, :w]
    gain, offset = rng.uniform(0.2, 1.0, (2, n, c, 1, 1))  # a colour cast / brightness per sample
    x = gain * (0.8 * coarse + 0.2 * rng.random((n, c, h, w))) + offset
    for axis in (2, 3):
        for _ in range(2):  # [1, 2, 1] / 4 blur with edge padding
            pad = [(0, 0)] * 4
            pad[axis] = (1, 1)
            xp = np.pad(x, pad, mode="edge")
            x = (np.take(xp, range(0, x.shape[axis]), axis) + 2 * x + np.take(xp, range(2, x.shape[axis] + 2), axis)) / 4
    lo, hi = x.min(axis=(1, 2, 3), keepdims=True), x.max(axis=(1, 2, 3), keepdims=True)
    return (x - lo) / np.maximum(hi - lo, 1e-12)
