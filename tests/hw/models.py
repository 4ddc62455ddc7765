"""Quantized integer graphs for the mapping tests, built once per session (a few calibration samples)."""
from __future__ import annotations

import functools
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

from hlsgen import zoo
from hlsgen.frontend import read_onnx
from hlsgen.hw import load_target
from hlsgen.passes import optimize
from hlsgen.quant import BitConfig, quantize
from tests.builders import make_model, tensor_value

ROOT = Path(__file__).resolve().parents[2]
DIGITS = ROOT / "examples" / "digits" / "digits.onnx"
MNIST = ROOT / "tests" / "data" / "mnist-8" / "model.onnx"


def _quantize(model_or_path, samples: int = 8, bits: int = 8):
    if isinstance(model_or_path, onnx.ModelProto):
        path = Path(tempfile.mkdtemp()) / "m.onnx"
        onnx.save_model(model_or_path, str(path))
    else:
        path = model_or_path
    graph = read_onnx(path)
    optimize(graph)
    rng = np.random.default_rng(0)
    calib = {n: rng.uniform(0, 1, (samples, *graph.shape(n)[1:])).astype(np.float32) for n in graph.inputs}
    return quantize(graph, calib, BitConfig(bits, bits)).graph


@functools.lru_cache(maxsize=None)
def integer_graph(name: str):
    """digits, mnist-8, a zoo model by name, or one of the tiny models below."""
    if name == "digits":
        return _quantize(DIGITS)
    if name == "mnist-8":
        return _quantize(MNIST)
    if name in TINY:
        return _quantize(TINY[name]())
    return _quantize(zoo.ZOO[name]())


def vector_ops_model() -> onnx.ModelProto:
    """Conv, Sigmoid (QLut), a standalone Relu (QRequant), Concat, Transpose, AveragePool, Pad, GlobalMaxPool,
    Flatten + Gemm: every unit and kind except depthwise."""
    rng = np.random.default_rng(1)
    inits = {"w": rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3,
             "w2": rng.standard_normal((8, 16, 1, 1)).astype(np.float32) * 0.3,
             "fc": rng.standard_normal((8, 5)).astype(np.float32)}
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Sigmoid", ["c"], ["s"], name="sig"),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("Concat", ["s", "r"], ["cat"], name="cat", axis=1),
        helper.make_node("Transpose", ["cat"], ["tr"], name="tr", perm=[0, 1, 3, 2]),
        helper.make_node("AveragePool", ["tr"], ["ap"], name="avg", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Pad", ["ap", "pads"], ["pd"], name="pad"),
        helper.make_node("Conv", ["pd", "w2"], ["c2"], name="conv2"),
        helper.make_node("GlobalMaxPool", ["c2"], ["g"], name="gmax"),
        helper.make_node("Flatten", ["g"], ["f"], name="flat"),
        helper.make_node("MatMul", ["f", "fc"], ["y"], name="fc"),
    ]
    inits["pads"] = np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64)
    return make_model(nodes, [tensor_value("x", [1, 3, 8, 8])], [tensor_value("y", [1, 5], TensorProto.FLOAT)], inits)


def odd_channels_model(kernel: int) -> onnx.ModelProto:
    """A 3x3 Conv to 24 channels (neither dividing nor divided by 16), then a `kernel` x `kernel` Conv reading them."""
    rng = np.random.default_rng(2)
    inits = {"w1": rng.standard_normal((24, 3, 3, 3)).astype(np.float32) * 0.3,
             "w2": rng.standard_normal((8, 24, kernel, kernel)).astype(np.float32) * 0.2}
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", "w2"], ["y"], name="conv2", pads=[kernel // 2] * 4)]
    return make_model(nodes, [tensor_value("x", [1, 3, 8, 8])], [tensor_value("y", [1, 8, 8, 8], TensorProto.FLOAT)],
                      inits)


def rgb_stem_model() -> onnx.ModelProto:
    """An RGB image wider than tall (3 x 24 x 96), a 3x3/2 Conv to 8 channels (27 reduction lanes), a 3x3 Conv to
    16, a global pool and a Dense: with a few KiB of activation memory the image lives in external memory."""
    return stem_model(3, 24, 96)


def stem_model(channels: int, height: int, width: int) -> onnx.ModelProto:
    """rgb_stem_model's layers on an image of `channels` x `height` x `width` (fold_stem: 2 x 16 x 24, whose
    pixel blocks the host folds on an 8x8 array with 2 KiB of activation memory, hlsgen.passes.input_fold;
    window_stem: 3 x 12 x 16, whose stem's windows it folds there)."""
    rng = np.random.default_rng(4)
    inits = {"w1": rng.standard_normal((8, channels, 3, 3)).astype(np.float32) * 0.3,
             "w2": rng.standard_normal((16, 8, 3, 3)).astype(np.float32) * 0.2,
             "fc": rng.standard_normal((16, 10)).astype(np.float32) * 0.3}
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], name="stem", pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", "w2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
             helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
             helper.make_node("Flatten", ["g"], ["f"], name="flat"),
             helper.make_node("MatMul", ["f", "fc"], ["y"], name="fc")]
    return make_model(nodes, [tensor_value("x", [1, channels, height, width])],
                      [tensor_value("y", [1, 10], TensorProto.FLOAT)], inits)


def mel_frames_model() -> onnx.ModelProto:
    """40 mel bands of 128 frames (a 1-D map of a channel count neither dividing nor a multiple of 8 or 16): a
    1-D Conv of kernel 5 to 48 channels, a depthwise kernel-3 Conv, a global pool and a Dense."""
    rng = np.random.default_rng(5)
    inits = {"w1": rng.standard_normal((48, 40, 5)).astype(np.float32) * 0.1,
             "w2": rng.standard_normal((48, 1, 3)).astype(np.float32) * 0.3,
             "fc": rng.standard_normal((48, 10)).astype(np.float32) * 0.3}
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], name="front", pads=[2, 2]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", "w2"], ["c2"], name="dw", pads=[1, 1], group=48),
             helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
             helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
             helper.make_node("Flatten", ["g"], ["f"], name="flat"),
             helper.make_node("MatMul", ["f", "fc"], ["y"], name="fc")]
    return make_model(nodes, [tensor_value("x", [1, 40, 128])], [tensor_value("y", [1, 10], TensorProto.FLOAT)],
                      inits)


def odd_dense_model() -> onnx.ModelProto:
    """A 3x3 Conv to 12 channels (neither dividing nor divided by 8 or 16) on a 4x4 map, then a Dense over it."""
    rng = np.random.default_rng(3)
    inits = {"w1": rng.standard_normal((12, 3, 3, 3)).astype(np.float32) * 0.3,
             "fc": rng.standard_normal((192, 10)).astype(np.float32) * 0.1}
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Flatten", ["r1"], ["f"], name="flat"),
             helper.make_node("MatMul", ["f", "fc"], ["y"], name="fc")]
    return make_model(nodes, [tensor_value("x", [1, 3, 4, 4])], [tensor_value("y", [1, 10], TensorProto.FLOAT)], inits)


def odd_cnn_model() -> onnx.ModelProto:
    """3x3 Convs to 24, 40 and 12 channels (none dividing or divided by 16; 12 not by 8 either), pooled, then a
    Dense over the 4x4 map of 12: every array layer but the first reads a map whose taps are padded."""
    rng = np.random.default_rng(4)
    inits = {"w1": rng.standard_normal((24, 3, 3, 3)).astype(np.float32) * 0.3,
             "w2": rng.standard_normal((40, 24, 3, 3)).astype(np.float32) * 0.1,
             "w3": rng.standard_normal((12, 40, 3, 3)).astype(np.float32) * 0.08,
             "fc": rng.standard_normal((192, 10)).astype(np.float32) * 0.1}
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Conv", ["p1", "w2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
             helper.make_node("MaxPool", ["r2"], ["p2"], name="pool2", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Conv", ["p2", "w3"], ["c3"], name="conv3", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c3"], ["r3"], name="relu3"),
             helper.make_node("Flatten", ["r3"], ["f"], name="flat"),
             helper.make_node("MatMul", ["f", "fc"], ["y"], name="fc")]
    return make_model(nodes, [tensor_value("x", [1, 3, 16, 16])], [tensor_value("y", [1, 10], TensorProto.FLOAT)],
                      inits)


def window_pools_model() -> onnx.ModelProto:
    """Windowed pools no writer fuses: a 3x3/2 pad-1 MaxPool (overlapping, padded), then a dilated 2x2 MaxPool
    (stride 1, reading a map a QAdd also reads), a 2x2/2 ceil-mode AveragePool (its last windows run past the
    map), a 3x2 AveragePool with pads counted (count_include_pad), and a Dense."""
    rng = np.random.default_rng(5)
    inits = {"w1": rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3,
             "w2": rng.standard_normal((16, 8, 3, 3)).astype(np.float32) * 0.15,
             "fc": rng.standard_normal((144, 10)).astype(np.float32) * 0.1}
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[3, 3], strides=[2, 2],
                              pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["p1", "w2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
             helper.make_node("MaxPool", ["r2"], ["p2"], name="pool2", kernel_shape=[2, 2], dilations=[2, 2],
                              pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["p2", "r2"], ["a2"], name="add2"),
             helper.make_node("AveragePool", ["a2"], ["p3"], name="pool3", kernel_shape=[2, 2], strides=[2, 2],
                              ceil_mode=1),
             helper.make_node("AveragePool", ["p3"], ["p4"], name="pool4", kernel_shape=[3, 2],
                              pads=[1, 0, 1, 1], count_include_pad=1),
             helper.make_node("Flatten", ["p4"], ["f"], name="flat"),
             helper.make_node("MatMul", ["f", "fc"], ["y"], name="fc")]
    return make_model(nodes, [tensor_value("x", [1, 3, 12, 10])], [tensor_value("y", [1, 10], TensorProto.FLOAT)],
                      inits)


def target_with(name: str = "systolic16x16", **changes):
    """A built-in target with nested fields replaced: target_with(buffers__input__kib=4, array__cols=8)."""
    target = load_target(name)
    for path, value in changes.items():
        parts = path.split("__")
        target = _replace_path(target, parts, value)
    return target


def _replace_path(obj, parts, value):
    if len(parts) == 1:
        return replace(obj, **{parts[0]: value})
    return replace(obj, **{parts[0]: _replace_path(getattr(obj, parts[0]), parts[1:], value)})


def grouped_cnn_model() -> onnx.ModelProto:
    """Grouped 3x3 Convs (not depthwise): 16 -> 16 channels in 2 groups of 8 (tile-aligned on 8 rows: a pass
    per group, no MAC on a zero block), then 16 -> 32 in 8 groups of 2 in, 4 out (packed: 4 groups share the
    8x8 array, block-diagonal), then a Dense."""
    rng = np.random.default_rng(6)
    inits = {"w1": rng.standard_normal((16, 3, 3, 3)).astype(np.float32) * 0.3,
             "w2": rng.standard_normal((16, 8, 3, 3)).astype(np.float32) * 0.15,
             "w3": rng.standard_normal((32, 2, 3, 3)).astype(np.float32) * 0.3,
             "fc": rng.standard_normal((512, 10)).astype(np.float32) * 0.05}
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", "w2"], ["c2"], name="group2", pads=[1, 1, 1, 1], group=2),
             helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
             helper.make_node("Conv", ["r2", "w3"], ["c3"], name="group8", pads=[1, 1, 1, 1], strides=[2, 2],
                              group=8),
             helper.make_node("Relu", ["c3"], ["r3"], name="relu3"),
             helper.make_node("Flatten", ["r3"], ["f"], name="flat"),
             helper.make_node("MatMul", ["f", "fc"], ["y"], name="fc")]
    return make_model(nodes, [tensor_value("x", [1, 3, 8, 8])], [tensor_value("y", [1, 10], TensorProto.FLOAT)],
                      inits)


def strided_model() -> onnx.ModelProto:
    """Strides above 15: a 3x3 Conv with stride 16 (taps far apart: the kernel smaller than the stride) and a 3x3 MaxPool
    with stride 16 over a 35x35 map, added, then a Dense."""
    rng = np.random.default_rng(7)
    inits = {"w0": rng.standard_normal((8, 3, 1, 1)).astype(np.float32) * 0.5,
             "w1": rng.standard_normal((8, 8, 3, 3)).astype(np.float32) * 0.15,
             "fc": rng.standard_normal((72, 10)).astype(np.float32) * 0.1}
    nodes = [helper.make_node("Conv", ["x", "w0"], ["c0"], name="conv0"),
             helper.make_node("Relu", ["c0"], ["r0"], name="relu0"),
             helper.make_node("Conv", ["r0", "w1"], ["c1"], name="conv16", strides=[16, 16]),
             helper.make_node("MaxPool", ["r0"], ["p1"], name="pool16", kernel_shape=[3, 3], strides=[16, 16]),
             helper.make_node("Add", ["c1", "p1"], ["a1"], name="add"),
             helper.make_node("Flatten", ["a1"], ["f"], name="flat"),
             helper.make_node("MatMul", ["f", "fc"], ["y"], name="fc")]
    return make_model(nodes, [tensor_value("x", [1, 3, 35, 35])], [tensor_value("y", [1, 10], TensorProto.FLOAT)],
                      inits)


def copies_model() -> onnx.ModelProto:
    """A channel Concat of two Conv branches (8 + 8 channels: aligned to 8 banks, not to 16), a standalone
    constant Pad of a value that is not the zero point (1 row above, 2 columns left, 1 column right: no Conv
    can absorb it, it feeds a MaxPool), a Transpose of rows and columns, then a Conv and a Dense."""
    rng = np.random.default_rng(8)
    inits = {"w1": rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3,
             "wa": rng.standard_normal((8, 8, 1, 1)).astype(np.float32) * 0.3,
             "wb": rng.standard_normal((8, 8, 3, 3)).astype(np.float32) * 0.12,
             "w3": rng.standard_normal((8, 16, 3, 3)).astype(np.float32) * 0.1,
             "pads": np.array([0, 0, 1, 2, 0, 0, 0, 1], np.int64), "value": np.array(0.5, np.float32),
             "fc": rng.standard_normal((96, 10)).astype(np.float32) * 0.1}
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", "wa"], ["ca"], name="conva"),
             helper.make_node("Conv", ["r1", "wb"], ["cb"], name="convb", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["cb"], ["rb"], name="relub"),
             helper.make_node("Concat", ["ca", "rb"], ["cat"], name="cat", axis=1),
             helper.make_node("Pad", ["cat", "pads", "value"], ["padded"], name="pad"),
             helper.make_node("MaxPool", ["padded"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Transpose", ["p"], ["t"], name="swap", perm=[0, 1, 3, 2]),
             helper.make_node("Conv", ["t", "w3"], ["c3"], name="conv3"),
             helper.make_node("Flatten", ["c3"], ["f"], name="flat"),
             helper.make_node("MatMul", ["f", "fc"], ["y"], name="fc")]
    return make_model(nodes, [tensor_value("x", [1, 3, 9, 9])], [tensor_value("y", [1, 10], TensorProto.FLOAT)],
                      inits)


def spatial_concat_model() -> onnx.ModelProto:
    """Concats along rows (a 3-row map under a 5-row one) and along columns (a 4-column map beside a 6-column
    one), then a Conv and a Dense."""
    rng = np.random.default_rng(10)
    inits = {"w1": rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3,
             "w2": rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3,
             "w3": rng.standard_normal((8, 8, 3, 3)).astype(np.float32) * 0.1,
             "w4": rng.standard_normal((8, 8, 3, 3)).astype(np.float32) * 0.1,
             "fc": rng.standard_normal((640, 10)).astype(np.float32) * 0.05}
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], name="conva", pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["x", "w2"], ["b"], name="convb", pads=[0, 1, 0, 1]),
             helper.make_node("Concat", ["a", "b"], ["rows"], name="cat_rows", axis=2),
             helper.make_node("Relu", ["rows"], ["r"], name="relu"),
             helper.make_node("Conv", ["r", "w3"], ["c"], name="convc", pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["r", "w4"], ["d"], name="convd", pads=[1, 0, 1, 0]),
             helper.make_node("Concat", ["c", "d"], ["cols"], name="cat_cols", axis=3),
             helper.make_node("Flatten", ["cols"], ["f"], name="flat"),
             helper.make_node("MatMul", ["f", "fc"], ["y"], name="fc")]
    return make_model(nodes, [tensor_value("x", [1, 3, 5, 6])], [tensor_value("y", [1, 10], TensorProto.FLOAT)],
                      inits)


def depthwise_multiplier_model() -> onnx.ModelProto:
    """A depthwise Conv with a channel multiplier of 2 (8 groups of 1 input channel, 2 outputs each): not the
    array's depthwise mode (a column per channel reading its own channel) but a grouped conv, packed."""
    rng = np.random.default_rng(11)
    inits = {"w1": rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3,
             "w2": rng.standard_normal((16, 1, 3, 3)).astype(np.float32) * 0.3,
             "fc": rng.standard_normal((1024, 10)).astype(np.float32) * 0.05}
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", "w2"], ["c2"], name="dw2", pads=[1, 1, 1, 1], group=8),
             helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
             helper.make_node("Flatten", ["r2"], ["f"], name="flat"),
             helper.make_node("MatMul", ["f", "fc"], ["y"], name="fc")]
    return make_model(nodes, [tensor_value("x", [1, 3, 8, 8])], [tensor_value("y", [1, 10], TensorProto.FLOAT)],
                      inits)


def big_pool_model(pool: str = "GlobalAveragePool") -> onnx.ModelProto:
    """A 3x3 Conv to 16 channels over 64x64, then a global pool (a channel block of its input, 32 KiB, is more
    than a small activation memory holds) and a Dense."""
    rng = np.random.default_rng(5)
    inits = {"w": rng.standard_normal((16, 3, 3, 3)).astype(np.float32) * 0.3,
             "fc": rng.standard_normal((16, 10)).astype(np.float32) * 0.3}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node(pool, ["r"], ["g"], name="pool"),
             helper.make_node("Flatten", ["g"], ["f"], name="flat"),
             helper.make_node("MatMul", ["f", "fc"], ["y"], name="fc")]
    return make_model(nodes, [tensor_value("x", [1, 3, 64, 64])], [tensor_value("y", [1, 10], TensorProto.FLOAT)],
                      inits)


def big_copies_model(axis: int = 1) -> onnx.ModelProto:
    """Two 3x3 Convs to 16 channels over 64x64, their Concat along `axis` (channels or columns), a constant Pad
    that no layer absorbs (a Sigmoid reads it), a Conv, a global pool and a Dense: copies of maps of 64 KiB and
    more."""
    rng = np.random.default_rng(6)
    inits = {"w": rng.standard_normal((16, 3, 3, 3)).astype(np.float32) * 0.3,
             "wb": rng.standard_normal((16, 3, 3, 3)).astype(np.float32) * 0.3,
             "w2": rng.standard_normal((8, 32 if axis == 1 else 16, 3, 3)).astype(np.float32) * 0.1,
             "pads": np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64),
             "fc": rng.standard_normal((8, 10)).astype(np.float32) * 0.3}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Conv", ["x", "wb"], ["cb"], name="conv_b", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["cb"], ["rb"], name="relu_b"),
             helper.make_node("Concat", ["r", "rb"], ["cat"], name="cat", axis=axis),
             helper.make_node("Pad", ["cat", "pads"], ["p"], name="pad"),
             helper.make_node("Sigmoid", ["p"], ["s"], name="sig"),
             helper.make_node("Conv", ["s", "w2"], ["c2"], name="conv2", strides=[2, 2]),
             helper.make_node("GlobalAveragePool", ["c2"], ["g"], name="pool"),
             helper.make_node("Flatten", ["g"], ["f"], name="flat"),
             helper.make_node("MatMul", ["f", "fc"], ["y"], name="fc")]
    return make_model(nodes, [tensor_value("x", [1, 3, 64, 64])], [tensor_value("y", [1, 10], TensorProto.FLOAT)],
                      inits)


def big_output_model() -> onnx.ModelProto:
    """A 3x3 Conv to 16 channels over 64x64 and a 3x3 Conv to 4 channels, the model's output: a map of 32 KiB
    written from a map of 64 KiB."""
    rng = np.random.default_rng(8)
    inits = {"w": rng.standard_normal((16, 3, 3, 3)).astype(np.float32) * 0.3,
             "w2": rng.standard_normal((4, 16, 3, 3)).astype(np.float32) * 0.1}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Conv", ["r", "w2"], ["y"], name="conv2", pads=[1, 1, 1, 1])]
    return make_model(nodes, [tensor_value("x", [1, 3, 64, 64])], [tensor_value("y", [1, 4, 64, 64], TensorProto.FLOAT)],
                      inits)


def unbanded_model(kind: str) -> onnx.ModelProto:
    """A map of 64 KiB or more through a layer that does not run in bands of rows: a Transpose of a 16 x 64 x 64
    map (`transpose`), or a Conv1d over a 16 x 2048 sequence (`sequence`); then a global pool and a Dense."""
    rng = np.random.default_rng(7)
    if kind == "transpose":
        shape, w = [1, 3, 64, 64], rng.standard_normal((16, 3, 3, 3))
        head = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
                helper.make_node("Transpose", ["c"], ["t"], name="swap", perm=[0, 1, 3, 2])]
    else:
        shape, w = [1, 8, 2048], rng.standard_normal((16, 8, 3))
        head = [helper.make_node("Conv", ["x", "w"], ["t"], name="conv", pads=[1, 1])]
    inits = {"w": w.astype(np.float32) * 0.3, "fc": rng.standard_normal((16, 10)).astype(np.float32) * 0.3}
    nodes = head + [helper.make_node("GlobalAveragePool", ["t"], ["g"], name="pool"),
                    helper.make_node("Flatten", ["g"], ["f"], name="flat"),
                    helper.make_node("MatMul", ["f", "fc"], ["y"], name="fc")]
    return make_model(nodes, [tensor_value("x", shape)], [tensor_value("y", [1, 10], TensorProto.FLOAT)], inits)


TINY = {"vector_ops": vector_ops_model,
        # dense-only, every map 1x1: the anomaly-detection autoencoder, narrowed to fit the 8x8 weight memory
        "autoencoder": lambda: zoo.anomaly_autoencoder(hidden=32),
        "odd_channels_1x1": lambda: odd_channels_model(1), "odd_channels_3x3": lambda: odd_channels_model(3),
        "odd_dense": odd_dense_model, "odd_cnn": odd_cnn_model, "rgb_stem": rgb_stem_model,
        "fold_stem": lambda: stem_model(2, 16, 24), "window_stem": lambda: stem_model(3, 12, 16),
        "mel_frames": mel_frames_model,
        "window_pools": window_pools_model, "grouped_cnn": grouped_cnn_model,
        "strided": strided_model, "copies": copies_model,
        "spatial_concat": spatial_concat_model, "depthwise_multiplier": depthwise_multiplier_model,
        "big_average_pool": big_pool_model, "big_max_pool": lambda: big_pool_model("GlobalMaxPool"),
        "big_channel_copies": big_copies_model, "big_column_copies": lambda: big_copies_model(3),
        "big_transpose": lambda: unbanded_model("transpose"), "long_sequence": lambda: unbanded_model("sequence")}

