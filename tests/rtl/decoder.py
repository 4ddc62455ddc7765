"""A tiny decoder: a strided Conv down, then learned upsampling back up (ConvTranspose, as U-Nets and FPNs
use it) followed by BatchNorm and Relu, a depthwise ConvTranspose with output padding, and a 3x3 head."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from tests.builders import make_model, tensor_value


def decoder_model() -> onnx.ModelProto:
    """Conv 3x3 /2 (3 -> 8) -> Relu -> ConvTranspose 2x2 /2 (8 -> 8) -> BatchNormalization -> Relu ->
    depthwise ConvTranspose 3x3 /2, pads 1, output_padding 1 -> Conv 3x3 (8 -> 4): 16x16 in, 32x32 out."""
    rng = np.random.default_rng(31)
    f = np.float32
    inits = {"w0": (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(f), "b0": (rng.standard_normal(8) * 0.1).astype(f),
             "w1": (rng.standard_normal((8, 8, 2, 2)) * 0.3).astype(f), "b1": (rng.standard_normal(8) * 0.1).astype(f),
             "scale": rng.uniform(0.5, 2, 8).astype(f), "shift": (rng.standard_normal(8) * 0.1).astype(f),
             "mean": (rng.standard_normal(8) * 0.1).astype(f), "var": rng.uniform(0.5, 2, 8).astype(f),
             "w2": (rng.standard_normal((8, 1, 3, 3)) * 0.3).astype(f),
             "w3": (rng.standard_normal((4, 8, 3, 3)) * 0.3).astype(f), "b3": (rng.standard_normal(4) * 0.1).astype(f)}
    nodes = [helper.make_node("Conv", ["x", "w0", "b0"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2],
                              name="down"),
             helper.make_node("Relu", ["a"], ["a1"], name="relu0"),
             helper.make_node("ConvTranspose", ["a1", "w1", "b1"], ["u"], kernel_shape=[2, 2], strides=[2, 2], name="up"),
             helper.make_node("BatchNormalization", ["u", "scale", "shift", "mean", "var"], ["v"], name="bn"),
             helper.make_node("Relu", ["v"], ["v1"], name="relu1"),
             helper.make_node("ConvTranspose", ["v1", "w2"], ["z"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                              output_padding=[1, 1], group=8, name="up_depthwise"),
             helper.make_node("Conv", ["z", "w3", "b3"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], name="head")]
    return make_model(nodes, [tensor_value("x", [1, 3, 16, 16])], [tensor_value("y", None)], inits, name="decoder")
