"""Tiny whole models with host ops, built in code: heads, post-processing and a host op between layers."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from tests.builders import make_model, tensor_value


def _weights(seed: int, **shapes) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {k: (rng.standard_normal(s) * 0.3).astype(np.float32) for k, s in shapes.items()}


def detector(middle_host: bool = True) -> onnx.ModelProto:
    """conv -> relu -> [InstanceNormalization on the host] -> conv -> relu -> box and class heads; the boxes
    decoded with Exp * 4, the scores through Sigmoid and a ReduceMax: three outputs, a symbolic batch."""
    w = _weights(0, W=(8, 3, 3, 3), W1=(8, 8, 3, 3), W2=(4, 8, 1, 1), W3=(2, 8, 1, 1))
    w |= {"s": np.ones(8, np.float32), "b": np.zeros(8, np.float32), "k": np.float32(4.0)}
    middle = (helper.make_node("InstanceNormalization", ["r", "s", "b"], ["n"], name="inorm") if middle_host
              else helper.make_node("Identity", ["r"], ["n"], name="same"))
    nodes = [
        helper.make_node("Conv", ["x", "W"], ["c"], pads=[1, 1, 1, 1], name="conv1"),
        helper.make_node("Relu", ["c"], ["r"], name="relu1"),
        middle,
        helper.make_node("Conv", ["n", "W1"], ["c2"], pads=[1, 1, 1, 1], name="conv2"),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("Conv", ["r2", "W2"], ["h1"], name="head_box"),
        helper.make_node("Conv", ["r2", "W3"], ["h2"], name="head_cls"),
        helper.make_node("Exp", ["h1"], ["e"], name="exp"),
        helper.make_node("Mul", ["e", "k"], ["boxes"], name="decode"),
        helper.make_node("Sigmoid", ["h2"], ["scores"], name="sig"),
        helper.make_node("ReduceMax", ["scores"], ["best"], keepdims=0, axes=[1], name="rmax"),
    ]
    outputs = [tensor_value(n, None) for n in ("boxes", "scores", "best")]
    return make_model(nodes, [tensor_value("x", ["N", 3, 16, 16])], outputs, w, opset=17, name="detector")


def heavy_host_op() -> onnx.ModelProto:
    """A dilated ConvTranspose (no accelerator implementation: hlsgen decomposes dilation 1) carrying most of
    the MACs."""
    w = _weights(1, W=(4, 3, 3, 3), T=(4, 16, 4, 4))
    nodes = [helper.make_node("Conv", ["x", "W"], ["c"], pads=[1, 1, 1, 1], name="conv1"),
             helper.make_node("Relu", ["c"], ["r"], name="relu1"),
             helper.make_node("ConvTranspose", ["r", "T"], ["y"], strides=[2, 2], pads=[1, 1, 1, 1], dilations=[2, 2],
                               name="up")]
    return make_model(nodes, [tensor_value("x", [1, 3, 8, 8])], [tensor_value("y", None)], w, opset=17, name="heavy")


def images(count: int, shape=(3, 16, 16), seed: int = 3) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0, 1, (count, *shape)).astype(np.float32)


def two_segment_chain() -> onnx.ModelProto:
    """conv -> relu -> [InstanceNormalization on the host] -> conv -> relu -> [Exp on the host]: two
    accelerator segments of one input and one output each (both have RTL)."""
    w = _weights(2, W=(4, 3, 3, 3), W1=(4, 4, 3, 3)) | {"s": np.ones(4, np.float32), "b": np.zeros(4, np.float32)}
    nodes = [helper.make_node("Conv", ["x", "W"], ["c"], pads=[1, 1, 1, 1], name="conv1"),
             helper.make_node("Relu", ["c"], ["r"], name="relu1"),
             helper.make_node("InstanceNormalization", ["r", "s", "b"], ["n"], name="inorm"),
             helper.make_node("Conv", ["n", "W1"], ["c2"], pads=[1, 1, 1, 1], name="conv2"),
             helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
             helper.make_node("Exp", ["r2"], ["y"], name="exp")]
    return make_model(nodes, [tensor_value("x", [1, 3, 8, 8])], [tensor_value("y", None)], w, opset=17,
                      name="chain")
