"""ShuffleNetV2 units as torch exports them: the channel shuffle a Reshape -> Transpose -> Reshape on channel
groups, a stride-1 unit's chunk in two a Split, and a tiny model of them."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from tests.builders import make_model, tensor_value


def channel_shuffle(x: str, y: str, shape, groups: int, stem: str) -> tuple[list, dict]:
    """torch's channel_shuffle: view(n, g, c/g, h, w), transpose(1, 2), view(n, c, h, w)."""
    n, c, h, w = shape
    inits = {f"{stem}_s5": np.array([n, groups, c // groups, h, w], np.int64),
             f"{stem}_s4": np.array([n, c, h, w], np.int64)}
    nodes = [helper.make_node("Reshape", [x, f"{stem}_s5"], [f"{stem}_5d"], name=f"{stem}_reshape"),
             helper.make_node("Transpose", [f"{stem}_5d"], [f"{stem}_t"], perm=[0, 2, 1, 3, 4],
                              name=f"{stem}_transpose"),
             helper.make_node("Reshape", [f"{stem}_t", f"{stem}_s4"], [y], name=f"{stem}_reshape_1")]
    return nodes, inits


def shuffle_unit(stem: str, x: str, y: str, c: int, size: int, rng: np.random.Generator) -> tuple[list, dict]:
    """A ShuffleNetV2 stride-1 unit: chunk in two (a Split), a 1x1 -> depthwise 3x3 -> 1x1 branch on the
    second half, the halves concatenated and shuffled."""
    half = c // 2
    nodes = [helper.make_node("Split", [x, f"{stem}_split"], [f"{stem}_a", f"{stem}_b"], axis=1, name=f"{stem}_chunk"),
             helper.make_node("Conv", [f"{stem}_b", f"{stem}_w1", f"{stem}_b1"], [f"{stem}_c1"], name=f"{stem}_pw1"),
             helper.make_node("Relu", [f"{stem}_c1"], [f"{stem}_r1"], name=f"{stem}_relu1"),
             helper.make_node("Conv", [f"{stem}_r1", f"{stem}_wd"], [f"{stem}_c2"], group=half, pads=[1, 1, 1, 1],
                              name=f"{stem}_dw"),
             helper.make_node("Conv", [f"{stem}_c2", f"{stem}_w2", f"{stem}_b2"], [f"{stem}_c3"], name=f"{stem}_pw2"),
             helper.make_node("Relu", [f"{stem}_c3"], [f"{stem}_r3"], name=f"{stem}_relu3"),
             helper.make_node("Concat", [f"{stem}_a", f"{stem}_r3"], [f"{stem}_cat"], axis=1, name=f"{stem}_cat")]
    f = np.float32
    inits = {f"{stem}_split": np.array([half, half], np.int64),
             f"{stem}_w1": (rng.standard_normal((half, half, 1, 1)) * 0.4).astype(f),
             f"{stem}_b1": (rng.standard_normal(half) * 0.1).astype(f),
             f"{stem}_wd": (rng.standard_normal((half, 1, 3, 3)) * 0.4).astype(f),
             f"{stem}_w2": (rng.standard_normal((half, half, 1, 1)) * 0.4).astype(f),
             f"{stem}_b2": (rng.standard_normal(half) * 0.1).astype(f)}
    shuffle, more = channel_shuffle(f"{stem}_cat", y, (1, c, size, size), 2, f"{stem}_shuffle")
    return nodes + shuffle, inits | more


def shufflenet_model(channels: int = 16, size: int = 8) -> onnx.ModelProto:
    """Conv 3x3 (3 -> channels) -> Relu -> two stride-1 units -> Conv 1x1 (channels -> 4)."""
    rng = np.random.default_rng(33)
    f = np.float32
    nodes = [helper.make_node("Conv", ["x", "w0", "b0"], ["s0"], pads=[1, 1, 1, 1], name="stem"),
             helper.make_node("Relu", ["s0"], ["r0"], name="stem_relu")]
    inits = {"w0": (rng.standard_normal((channels, 3, 3, 3)) * 0.4).astype(f),
             "b0": (rng.standard_normal(channels) * 0.1).astype(f),
             "head": (rng.standard_normal((4, channels, 1, 1)) * 0.4).astype(f)}
    source = "r0"
    for unit in (1, 2):
        more_nodes, more = shuffle_unit(f"u{unit}", source, f"s{unit}", channels, size, rng)
        nodes, inits, source = nodes + more_nodes, inits | more, f"s{unit}"
    nodes.append(helper.make_node("Conv", [source, "head"], ["y"], name="head"))
    return make_model(nodes, [tensor_value("x", [1, 3, size, size])], [tensor_value("y", None)], inits,
                      name="shufflenet")
