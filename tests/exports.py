"""Models with the shape of real exports, built in code: a Keras CNN as tf2onnx writes it, and a conv with
pruned and near-dead channels, float and as onnxruntime's static quantizer exports it."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

from tests.builders import make_model, tensor_value

# ---- a Keras CNN, channels last ----
SIDE, CLASSES = 28, 10


def keras_cnn(channels: int = 1, seed: int = 0) -> onnx.ModelProto:
    rng = np.random.default_rng(seed)

    def he(*shape):
        fan_in = int(np.prod(shape[1:]))
        return (rng.standard_normal(shape) * np.sqrt(1.0 / fan_in)).astype(np.float32)  # LeCun, as Keras' Selu nets

    inits = {"conv1/kernel": he(16, channels, 3, 3), "conv1/bias": (rng.standard_normal(16) * 0.05).astype(np.float32),
             "conv2/kernel": he(32, 16, 3, 3), "conv2/bias": (rng.standard_normal(32) * 0.05).astype(np.float32),
             "dense/kernel": (rng.standard_normal((5 * 5 * 32, CLASSES)) * np.sqrt(1 / 800)).astype(np.float32),
             "dense/bias": (rng.standard_normal(CLASSES) * 0.05).astype(np.float32),
             "flatten_shape": np.array([-1, 5 * 5 * 32], np.int64)}
    nodes = [
        helper.make_node("Transpose", ["input_1"], ["conv1_in"], name="conv1/Conv2D__6", perm=[0, 3, 1, 2]),
        helper.make_node("Conv", ["conv1_in", "conv1/kernel", "conv1/bias"], ["conv1_out"], name="conv1/Conv2D",
                         kernel_shape=[3, 3]),
        helper.make_node("Selu", ["conv1_out"], ["selu1"], name="conv1/Selu"),
        helper.make_node("MaxPool", ["selu1"], ["pool1"], name="pool1/MaxPool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["pool1", "conv2/kernel", "conv2/bias"], ["conv2_out"], name="conv2/Conv2D",
                         kernel_shape=[3, 3]),
        helper.make_node("Selu", ["conv2_out"], ["selu2"], name="conv2/Selu"),
        helper.make_node("MaxPool", ["selu2"], ["pool2"], name="pool2/MaxPool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Transpose", ["pool2"], ["pool2_nhwc"], name="pool2/MaxPool__20", perm=[0, 2, 3, 1]),
        helper.make_node("Reshape", ["pool2_nhwc", "flatten_shape"], ["flat"], name="flatten/Reshape"),
        helper.make_node("MatMul", ["flat", "dense/kernel"], ["dense_mm"], name="dense/MatMul"),
        helper.make_node("Add", ["dense_mm", "dense/bias"], ["dense"], name="dense/BiasAdd"),
    ]
    return make_model(nodes, [tensor_value("input_1", ["unk__0", SIDE, SIDE, channels])], [tensor_value("dense", None)],
                      inits, opset=13, name="keras_cnn")


def keras_images(count: int, channels: int = 1, seed: int = 1) -> np.ndarray:
    """Digit-like NHWC images in [0, 1]: dark background, a few bright strokes."""
    rng = np.random.default_rng(seed)
    images = np.zeros((count, SIDE, SIDE, channels), np.float32)
    for image in images:
        for _ in range(3):
            r, c = rng.integers(4, SIDE - 4, 2)
            image[r - 3 : r + 3, c - 1 : c + 1, :] = rng.uniform(0.6, 1.0, channels)
    return images


# ---- pruned and near-dead channels ----
CHANNELS, DEAD, NEAR_DEAD = 32, (3, 7, 11, 20, 31), (5, 14, 26)
CALIB = np.random.default_rng(7).uniform(-1, 1, (64, 3, 8, 8)).astype(np.float32)


def conv_model(keep: list[int] | None = None, near_dead: bool = False) -> onnx.ModelProto:
    """Conv 3->32 (5 pruned channels: zero weights, denormal biases) -> Relu -> Flatten -> Gemm 10.

    keep: the output channels to keep (the same network without its dead channels);
    near_dead: three more channels whose weights are 1e-8 of the others (per-channel scales near 1e-9).
    """
    gen = np.random.default_rng(1)
    w1 = (gen.standard_normal((CHANNELS, 3, 3, 3)) * 0.3).astype(np.float32)
    b1 = (gen.standard_normal(CHANNELS) * 0.1).astype(np.float32)
    w2 = (gen.standard_normal((10, CHANNELS, 8, 8)) * 0.05).astype(np.float32)
    w1[list(DEAD)] = 0
    b1[list(DEAD)] = np.float32(1e-40)
    if near_dead:
        w1[list(NEAR_DEAD)] *= np.float32(1e-8)
    keep = list(range(CHANNELS)) if keep is None else keep
    w1, b1, w2 = w1[keep], b1[keep], w2[:, keep].reshape(10, -1)
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Flatten", ["r1"], ["f"]),
             helper.make_node("Gemm", ["f", "w2"], ["y"], transB=1)]
    return make_model(nodes, [tensor_value("x", [1, 3, 8, 8])], [tensor_value("y", None)],
                      {"w1": w1, "b1": b1, "w2": w2})


def ort_qdq(model: onnx.ModelProto, tmp_path) -> onnx.ModelProto:
    """The model as onnxruntime's static quantizer exports it: QDQ, per-channel int8 weights, int32 biases."""

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.samples = iter([{"x": CALIB[i : i + 1]} for i in range(16)])

        def get_next(self):
            return next(self.samples, None)

    src, dst = tmp_path / "float.onnx", tmp_path / "qdq.onnx"
    onnx.save(model, src)
    quantize_static(str(src), str(dst), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    return onnx.load(dst)
