"""Tiny models with several inputs or outputs (issue 25): the RTL takes the inputs one after another on its one
input stream and sends the outputs one after another on its one output stream (docs/rtl.md, "Several inputs
and outputs")."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from tests.builders import make_model, tensor_value


def two_heads_model() -> onnx.ModelProto:
    """Conv 3x3 -> Relu, then two 1x1 Conv heads (4 and 6 channels), each a model output."""
    rng = np.random.default_rng(25)
    inits = {"w1": rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3,
             "wa": rng.standard_normal((4, 8, 1, 1)).astype(np.float32) * 0.3,
             "wb": rng.standard_normal((6, 8, 1, 1)).astype(np.float32) * 0.3,
             "bb": rng.standard_normal(6).astype(np.float32) * 0.1}
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", "wa"], ["a"], name="head_a"),
             helper.make_node("Conv", ["r1", "wb", "bb"], ["b"], name="head_b")]
    return make_model(nodes, [tensor_value("x", [1, 3, 8, 8])],
                      [tensor_value("a", None), tensor_value("b", None)], inits, name="two_heads")


def three_outputs_model() -> onnx.ModelProto:
    """Conv 3x3 -> Relu (r1, an output that later layers also read), a 1x1 Conv head on it (a), and a
    MaxPool -> Conv -> Relu -> Flatten -> Dense head (y); the outputs listed in neither computation order
    (y, r1, a), of three shapes and both signs."""
    rng = np.random.default_rng(26)
    inits = {"w1": rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3,
             "wa": rng.standard_normal((4, 8, 1, 1)).astype(np.float32) * 0.3,
             "w2": rng.standard_normal((16, 8, 3, 3)).astype(np.float32) * 0.15,
             "fc": rng.standard_normal((16 * 16, 10)).astype(np.float32) * 0.1}
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", "wa"], ["a"], name="head_a"),
             helper.make_node("MaxPool", ["r1"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Conv", ["p", "w2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
             helper.make_node("Flatten", ["r2"], ["f"], name="flat"),
             helper.make_node("MatMul", ["f", "fc"], ["y"], name="fc")]
    return make_model(nodes, [tensor_value("x", [1, 3, 8, 8])],
                      [tensor_value("y", None), tensor_value("r1", None), tensor_value("a", None)], inits,
                      name="three_outputs")


def add_input_model() -> onnx.ModelProto:
    """Two inputs of different shapes: Conv 3x3 -> Relu of x (3 channels), plus z (8 channels), then a 1x1
    Conv head; the inputs listed in neither computation order (z, x)."""
    rng = np.random.default_rng(27)
    inits = {"w1": rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3,
             "wh": rng.standard_normal((6, 8, 1, 1)).astype(np.float32) * 0.3}
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Add", ["r1", "z"], ["s"], name="add"),
             helper.make_node("Conv", ["s", "wh"], ["y"], name="head")]
    return make_model(nodes, [tensor_value("z", [1, 8, 8, 8]), tensor_value("x", [1, 3, 8, 8])],
                      [tensor_value("y", None)], inits, name="add_input")


def concat_inputs_model() -> onnx.ModelProto:
    """A ShuffleNetV2 unit's segment: two inputs (a branch's and a pass-through's 8 channels) concatenated
    along the channels, a 3x3 Conv -> Relu and a depthwise 3x3 Conv on it, with two outputs."""
    rng = np.random.default_rng(28)
    inits = {"w1": rng.standard_normal((16, 16, 3, 3)).astype(np.float32) * 0.15,
             "wd": rng.standard_normal((16, 1, 3, 3)).astype(np.float32) * 0.3}
    nodes = [helper.make_node("Concat", ["a", "b"], ["cat"], name="concat", axis=1),
             helper.make_node("Conv", ["cat", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", "wd"], ["d"], name="dw", pads=[1, 1, 1, 1], group=16)]
    return make_model(nodes, [tensor_value("a", [1, 8, 6, 6]), tensor_value("b", [1, 8, 6, 6])],
                      [tensor_value("d", None), tensor_value("r1", None)], inits, name="concat_inputs")
