"""Published CNN architectures built in code: MLPerf Tiny's reference models, MobileNetV2, ResNet-18.

Each constructor returns an `onnx.ModelProto` as `hlsgen.zoo` makes them (opset 17, IR 10, symbolic batch
"N", output `logits`, byte-identical for a seed): the layer list of the published network with He-initialized
weights and BatchNormalization statistics measured on a probe batch (see `zoo.NetBuilder`), so activations and
logits have a trained network's scale, though the weights recognise nothing. The input is `image`
[N, 3, H, W], or `features` [N, 1, 49, 10] (MFCC frames) for the keyword spotter.

- `resnet8`: MLPerf Tiny image classification (CIFAR-10), `resnet_v1_eembc` of mlcommons/tiny
  (benchmark/training/image_classification/keras_model.py) with 16 filters, as in MLPerf Tiny v0.5 to v1.x's
  reference model: Keras layers, so every Conv has a bias, the 1x1 projection shortcuts have no
  BatchNormalization, and the classifier is AveragePooling2D over the 8x8 map.
- `ds_cnn`: MLPerf Tiny keyword spotting, the DS-CNN of mlcommons/tiny's keyword_spotting keras_model.py
  (after ARM's ML-KWS-for-MCU): Keras layers (biases everywhere), plain ReLU, AveragePooling2D((24, 5)).
- `mobilenet_v1`: MLPerf Tiny visual wake words (person / no person), the MobileNetV1 layer list
  (Howard et al., 2017, table 1) at width `alpha` as Keras's `MobileNet` and TF-slim write it: bias-free
  Convs, BatchNormalization and ReLU6, global average pool, Dense. (MLPerf Tiny's reference,
  mlcommons/tiny v0.1/benchmarks/visual_wake_words/vww_model.py, has Keras biases and plain ReLU; with
  random weights an unbounded ReLU through 27 layers lets some inputs' activations grow layer after
  layer, to held-out logits 27 times the probe's, which trained weights avoid and ReLU6 prevents.)
- `mobilenet_v2`: MobileNetV2 (Sandler et al., 2018, table 2) as torchvision and Keras define it: channels
  rounded to multiples of 8, the last 1x1 Conv 1280 wide for alpha <= 1, ReLU6, linear bottlenecks, identity
  shortcuts where stride 1 keeps the channels; 1000 classes (ImageNet) by default, which the published
  parameter counts include.
- `resnet18`: torchvision's ResNet-18 (7x7/2 stem, 3x3/2 MaxPool padded by 1, 4 stages of 2 basic blocks,
  64 to 512 channels, 1x1 projection + BatchNormalization shortcuts, global average pool, Dense 1000).
- MLPerf Tiny's anomaly-detection autoencoder is `zoo.anomaly_autoencoder` (hidden 128), also in
  `ARCHITECTURES`.

`calibration_data(model)` gives each its realistic synthetic inputs: images, MFCC frames or log-mel frames.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import onnx

from . import zoo
from .zoo import NetBuilder

MFCC_FRAMES, MFCC_COEFFS = 49, 10  # 1 s of audio in 30 ms windows with a 20 ms hop, 10 cepstral coefficients
DEPTHWISE_MEAN = 1.0  # depthwise kernels low-pass, as trained ones are (see `NetBuilder.conv`)
BIG_PROBE_BATCH = 8  # the probe keeps every activation in float64: 32 ResNet-18 samples would take gigabytes


def _make_divisible(channels: float, divisor: int = 8) -> int:
    """MobileNetV2's channel rounding (torchvision and Keras): nearest multiple of 8, never 10% below."""
    rounded = max(divisor, int(channels + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * channels else rounded


# ---- MLPerf Tiny -----------------------------------------------------------------------------
def resnet8(seed: int = 0) -> onnx.ModelProto:
    """MLPerf Tiny's CIFAR-10 ResNet-8: Conv 16 then three stacks of one basic block (16, 32, 64 channels;
    the second and third at stride 2 with a 1x1 projection shortcut), AveragePool 8x8, Dense 10."""
    net = NetBuilder("resnet8", (3, 32, 32), seed)
    x = net.conv_bn("image", "stem", 16, bias=True)
    for stack, channels in enumerate((16, 32, 64), start=1):
        stride = 1 if stack == 1 else 2
        y = net.conv_bn(x, f"stack{stack}_a", channels, 3, stride, bias=True)
        y = net.conv_bn(y, f"stack{stack}_b", channels, 3, act=None, bias=True)
        if stride != 1:  # a plain Conv in the reference: no BatchNormalization on the shortcut
            x = net.conv(x, f"stack{stack}_proj", channels, 1, stride, bias=True)
        x = net.relu(net.add(x, y, f"stack{stack}_add"), f"stack{stack}_relu")
    return net.build(net.classifier(x, 10, pool_window=(8, 8)))


def ds_cnn(seed: int = 0) -> onnx.ModelProto:
    """MLPerf Tiny's keyword-spotting DS-CNN on 49x10 MFCC frames: Conv 64 10x4 stride 2 with TensorFlow's
    "same" padding (4 rows above, 5 below, 1 column each side: 25x5 out), four depthwise-separable blocks
    (3x3 depthwise, 1x1 pointwise, BatchNormalization + ReLU after each), AveragePool 24x5 with stride 24x5
    (the reference's window: the top 24 of the 25 rows, one output), Dense 12."""
    net = NetBuilder("ds_cnn", (1, MFCC_FRAMES, MFCC_COEFFS), seed, input_name="features", realistic=_mfcc_like)
    x = net.conv_bn("features", "conv1", 64, (10, 4), 2, pads=(4, 1, 5, 1), bias=True)
    for block in range(1, 5):
        x = net.conv_bn(x, f"ds{block}_dw", 64, 3, group=64, bias=True, mean=DEPTHWISE_MEAN)
        x = net.conv_bn(x, f"ds{block}_pw", 64, 1, bias=True)
    # the reference's final_pool_size = (int(49 / 2), int(10 / 2)): the window misses the map's last row
    return net.build(net.classifier(x, 12, pool_window=(MFCC_FRAMES // 2, MFCC_COEFFS // 2)))


# (output channels at alpha 1, stride) of MobileNetV1's 13 depthwise-separable layers
MOBILENET_V1_LAYERS = ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), *[(512, 1)] * 5, (1024, 2), (1024, 1))


def mobilenet_v1(alpha: float = 0.25, size: int = 96, classes: int = 2, seed: int = 0) -> onnx.ModelProto:
    """MobileNetV1 at width `alpha` on size x size images: Conv 32 3x3/2, 13 depthwise-separable layers
    (ReLU6 after every BatchNormalization), global average pool, Dense. The defaults are MLPerf Tiny's
    visual wake words model (alpha 0.25, 96x96, 2 classes)."""
    net = NetBuilder("mobilenet_v1", (3, size, size), seed, probe_batch=_probe_batch(size))
    x = net.conv_bn("image", "conv1", int(32 * alpha), 3, 2, act="relu6")
    for i, (channels, stride) in enumerate(MOBILENET_V1_LAYERS, start=1):
        c = net.channels(x)
        x = net.conv_bn(x, f"sep{i}_dw", c, 3, stride, group=c, act="relu6", mean=DEPTHWISE_MEAN)
        x = net.conv_bn(x, f"sep{i}_pw", int(channels * alpha), 1, act="relu6")
    return net.build(net.classifier(x, classes))


# ---- ImageNet networks ----------------------------------------------------------------------------
# (expansion, output channels at alpha 1, repeats, first stride) of MobileNetV2's bottleneck stages
MOBILENET_V2_STAGES = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
                       (6, 320, 1, 1))


def mobilenet_v2(alpha: float = 0.5, size: int = 128, classes: int = 1000, seed: int = 0) -> onnx.ModelProto:
    """MobileNetV2 at width `alpha` on size x size images: Conv 3x3/2, 17 inverted-residual blocks, a 1x1 Conv
    to 1280 (alpha times that above 1), global average pool, Dense `classes`."""
    net = NetBuilder("mobilenet_v2", (3, size, size), seed, probe_batch=_probe_batch(size))
    x = net.conv_bn("image", "conv1", _make_divisible(32 * alpha), 3, 2, act="relu6")
    block = 0
    for expansion, channels, repeats, first_stride in MOBILENET_V2_STAGES:
        for r in range(repeats):
            block += 1
            x = _inverted_residual(net, x, f"block{block}", _make_divisible(channels * alpha), expansion,
                                   first_stride if r == 0 else 1)
    x = net.conv_bn(x, "conv_last", _make_divisible(1280 * max(1.0, alpha)), 1, act="relu6")
    return net.build(net.classifier(x, classes))


def _inverted_residual(net: NetBuilder, x: str, name: str, out_ch: int, expansion: int, stride: int) -> str:
    """Expand 1x1 (none at expansion 1), depthwise 3x3 (ReLU6 each), linear 1x1 projection; the identity
    shortcut Add only where the block keeps the shape."""
    in_ch = net.channels(x)
    y = x if expansion == 1 else net.conv_bn(x, f"{name}_expand", in_ch * expansion, 1, act="relu6")
    hidden = net.channels(y)
    y = net.conv_bn(y, f"{name}_dw", hidden, 3, stride, group=hidden, act="relu6", mean=DEPTHWISE_MEAN)
    y = net.conv_bn(y, f"{name}_project", out_ch, 1, act=None)
    return net.add(x, y, f"{name}_add") if stride == 1 and in_ch == out_ch else y


def resnet18(size: int = 224, classes: int = 1000, seed: int = 0) -> onnx.ModelProto:
    """torchvision's ResNet-18 on size x size images: Conv 64 7x7/2 pad 3, MaxPool 3x3/2 pad 1 (overlapping,
    padded), stages of two basic blocks at 64, 128, 256, 512 channels (each later stage starting at stride 2
    with a 1x1 projection + BatchNormalization shortcut), global average pool, Dense `classes`."""
    net = NetBuilder("resnet18", (3, size, size), seed, probe_batch=_probe_batch(size))
    x = net.maxpool(net.conv_bn("image", "stem", 64, 7, 2), "stem_pool", 3, 2, pad=1)
    for stage, channels in enumerate((64, 128, 256, 512), start=1):
        x = net.basic_block(x, f"layer{stage}_0", channels, 1 if stage == 1 else 2)
        x = net.basic_block(x, f"layer{stage}_1", channels)
    return net.build(net.classifier(x, classes))


def _probe_batch(size: int) -> int:
    return zoo.PROBE_BATCH if size <= 96 else BIG_PROBE_BATCH


ARCHITECTURES: dict[str, Callable[..., onnx.ModelProto]] = {
    "resnet8": resnet8,
    "ds_cnn": ds_cnn,
    "mobilenet_v1": mobilenet_v1,
    "anomaly_autoencoder": zoo.anomaly_autoencoder,
    "mobilenet_v2": mobilenet_v2,
    "resnet18": resnet18,
}


# ---- realistic inputs -----------------------------------------------------------------------------
def calibration_data(model: onnx.ModelProto, n: int = 64, seed: int = 0) -> np.ndarray:
    """`n` realistic inputs for `model` as float32: MFCC frames [n, 1, 49, 10] for a `features` input of that
    shape (see `_mfcc_like`), else what `zoo.calibration_data` makes (images in [0, 1], log-mel frames)."""
    (inp,) = model.graph.input
    shape = tuple(d.dim_value for d in inp.type.tensor_type.shape.dim[1:])
    if shape == (1, MFCC_FRAMES, MFCC_COEFFS):
        return _mfcc_like(np.random.default_rng([seed, 2]), n, shape).astype(np.float32)
    return zoo.calibration_data(model, n, seed)


def _mfcc_like(rng: np.random.Generator, n: int, shape: tuple[int, int, int]) -> np.ndarray:
    """MFCC frames of a one-second clip holding a word: quiet frames, then a burst of speech a few hundred ms
    long somewhere in the clip. Coefficient 0 (log energy) follows the burst; higher coefficients have
    a spread falling as 1/k, a per-clip spectral shape that holds through the word, and frame-to-frame jitter."""
    _, frames, coeffs = shape
    t = np.arange(frames)
    centre, width = rng.uniform(12, frames - 12, (n, 1)), rng.uniform(4, 10, (n, 1))
    burst = np.exp(-0.5 * ((t - centre) / width) ** 2)[:, :, None]  # [n, frames, 1]
    spread = 12.0 / (1 + np.arange(coeffs))
    shape_in_word = rng.normal(0.0, 1.0, (n, 1, coeffs)) * spread
    floor = rng.normal(0.0, 0.3, (n, 1, coeffs)) * spread
    mfcc = floor + burst * shape_in_word + rng.normal(0.0, 0.15, (n, frames, coeffs)) * spread
    mfcc[:, :, 0] += rng.uniform(-40.0, -25.0, (n, 1)) + 30.0 * burst[:, :, 0]
    return mfcc[:, None]
