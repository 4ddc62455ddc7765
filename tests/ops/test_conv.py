import numpy as np
import pytest
from onnx import helper

from tests.builders import assert_close_to_ort, make_model, tensor_value


@pytest.mark.parametrize(
    "attrs",
    [
        {},
        {"strides": [2, 2]},
        {"pads": [1, 0, 2, 1]},
        {"dilations": [2, 2], "pads": [2, 2, 2, 2]},
        {"auto_pad": "SAME_UPPER", "strides": [2, 2]},
        {"auto_pad": "SAME_LOWER"},
        {"auto_pad": "VALID"},
        {"group": 4},
    ],
)
def test_conv_matches_onnxruntime(attrs):
    rng = np.random.default_rng(1)
    group = attrs.get("group", 1)
    w = rng.standard_normal((8, 8 // group, 3, 3)).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], **attrs)
    model = make_model([node], [tensor_value("x", [1, 8, 9, 9])], [tensor_value("y", None)], {"w": w, "b": b})
    assert_close_to_ort(model)


def test_depthwise_conv_without_bias():
    w = np.random.default_rng(2).standard_normal((6, 1, 5, 5)).astype(np.float32)
    node = helper.make_node("Conv", ["x", "w"], ["y"], group=6, pads=[2, 2, 2, 2])
    model = make_model([node], [tensor_value("x", [1, 6, 7, 7])], [tensor_value("y", None)], {"w": w})
    graph = assert_close_to_ort(model)
    assert [n.op for n in graph.nodes.values()] == ["Conv"]
