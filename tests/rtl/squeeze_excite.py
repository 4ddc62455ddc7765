"""A tiny squeeze-and-excitation block (MobileNetV3's): a map multiplied by a per-channel gate computed from it."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from tests.builders import make_model, tensor_value


def squeeze_excite_model(gate_first: bool = False) -> onnx.ModelProto:
    """Conv 3x3 (8 -> 16) -> Relu, then GlobalAveragePool -> Conv 1x1 (16 -> 4) -> Relu -> Conv 1x1 (4 -> 16)
    -> HardSigmoid, the Relu output times that gate (the gate first in the Mul when `gate_first`), and a
    1x1 Conv head (16 -> 4)."""
    rng = np.random.default_rng(27)
    inits = {"w1": rng.standard_normal((16, 8, 3, 3)).astype(np.float32) * 0.2,
             "b1": rng.standard_normal(16).astype(np.float32) * 0.1,
             "ws": rng.standard_normal((4, 16, 1, 1)).astype(np.float32) * 0.4,
             "bs": rng.standard_normal(4).astype(np.float32) * 0.1,
             "we": rng.standard_normal((16, 4, 1, 1)).astype(np.float32) * 0.5,
             "be": rng.standard_normal(16).astype(np.float32) * 0.2,
             "wh": rng.standard_normal((4, 16, 1, 1)).astype(np.float32) * 0.3}
    product = ["gate", "r1"] if gate_first else ["r1", "gate"]
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("GlobalAveragePool", ["r1"], ["squeezed"], name="squeeze"),
             helper.make_node("Conv", ["squeezed", "ws", "bs"], ["s1"], name="reduce"),
             helper.make_node("Relu", ["s1"], ["s2"], name="relu_se"),
             helper.make_node("Conv", ["s2", "we", "be"], ["e1"], name="expand"),
             helper.make_node("HardSigmoid", ["e1"], ["gate"], name="gate", alpha=1 / 6, beta=0.5),
             helper.make_node("Mul", product, ["excited"], name="excite"),
             helper.make_node("Conv", ["excited", "wh"], ["y"], name="head")]
    return make_model(nodes, [tensor_value("x", [1, 8, 8, 8])], [tensor_value("y", None)], inits,
                      name="squeeze_excite")
