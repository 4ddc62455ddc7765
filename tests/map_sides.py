"""Models whose feature maps have sides above 255 (issue 13 item 3), built in code, with calibration feeds:
a 320-px-wide, 1000-px-tall image network that the shipped systolic16x16 runs in bands through external
memory, a 1-D network over a 4096-long sequence that fits on chip, and a tall, narrow network of padded
average pools whose bands count their windows in their buffers' coordinates."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from tests.builders import make_model, tensor_value


def _weights(rng, *shape, scale: float) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _head(channels: int, rng) -> tuple[list[onnx.NodeProto], dict[str, np.ndarray]]:
    """GlobalAveragePool, Flatten and a Dense to 10 classes, from map "m"."""
    nodes = [helper.make_node("GlobalAveragePool", ["m"], ["g"], name="gap"),
             helper.make_node("Flatten", ["g"], ["f"], name="flat"),
             helper.make_node("MatMul", ["f", "fc"], ["y"], name="fc")]
    return nodes, {"fc": _weights(rng, channels, 10, scale=0.2)}


def wide_tall(height: int = 1000, width: int = 320, channels: int = 16) -> onnx.ModelProto:
    """A 3x3 stride-2 Conv to `channels`, a 3x3 Conv, a residual Add, an overlapping padded 5x5/4 MaxPool (a
    vector-unit window over a banded map), then the head."""
    rng = np.random.default_rng(11)
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", "w2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
             helper.make_node("Add", ["r2", "r1"], ["s"], name="add"),
             helper.make_node("MaxPool", ["s"], ["m"], name="pool", kernel_shape=[5, 5], strides=[4, 4],
                              pads=[1, 1, 1, 1])]
    head, fc = _head(channels, rng)
    inits = {"w1": _weights(rng, channels, 3, 3, 3, scale=0.3), "w2": _weights(rng, channels, channels, 3, 3, scale=0.1),
             **fc}
    return make_model(nodes + head, [tensor_value("x", [1, 3, height, width])],
                      [tensor_value("y", [1, 10], TensorProto.FLOAT)], inits, name="wide_tall")


def long_1d(length: int = 4096, channels: int = 16) -> onnx.ModelProto:
    """Conv1d (k 3) from 4 to `channels`, a stride-2 Conv1d (k 5), a padded 3/2 MaxPool, then the head: its
    largest live maps (16 x 4096 and 16 x 2048 bytes) fit systolic16x16's activation memory."""
    rng = np.random.default_rng(12)
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", "w2"], ["c2"], name="conv2", strides=[2], pads=[2, 2]),
             helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
             helper.make_node("MaxPool", ["r2"], ["m"], name="pool", kernel_shape=[3], strides=[2], pads=[1, 1])]
    head, fc = _head(channels, rng)
    inits = {"w1": _weights(rng, channels, 4, 3, scale=0.3), "w2": _weights(rng, channels, channels, 5, scale=0.1),
             **fc}
    return make_model(nodes + head, [tensor_value("x", [1, 4, length])],
                      [tensor_value("y", [1, 10], TensorProto.FLOAT)], inits, name="long_1d")


def tall_pools(height: int = 300, width: int = 16) -> onnx.ModelProto:
    """A 3x3 Conv to 16 channels, a 3x3/2 AveragePool counting its padding and a 3x3/1 one that does not, over
    a map taller than 255 rows: with a small activation memory both run in bands."""
    rng = np.random.default_rng(13)
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("AveragePool", ["r1"], ["p1"], name="avg1", kernel_shape=[3, 3], strides=[2, 2],
                              pads=[1, 1, 1, 1], count_include_pad=1),
             helper.make_node("AveragePool", ["p1"], ["m"], name="avg2", kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
    head, fc = _head(16, rng)
    inits = {"w1": _weights(rng, 16, 3, 3, 3, scale=0.3), **fc}
    return make_model(nodes + head, [tensor_value("x", [1, 3, height, width])],
                      [tensor_value("y", [1, 10], TensorProto.FLOAT)], inits, name="tall_pools")


def feeds(model: onnx.ModelProto, samples: int, seed: int) -> dict[str, np.ndarray]:
    """Uniform values in [-1, 1) for the model's one input."""
    value = model.graph.input[0]
    shape = [d.dim_value for d in value.type.tensor_type.shape.dim][1:]
    return {value.name: np.random.default_rng(seed).uniform(-1, 1, (samples, *shape)).astype(np.float32)}
