"""ConvTranspose's float kernel against onnxruntime, and the attributes the importer refuses by name."""
import numpy as np
import pytest
from onnx import helper

from hlsgen.errors import UnsupportedOpsError
from hlsgen.frontend import import_model
from tests.builders import assert_close_to_ort, make_model, tensor_value

CASES = [
    {"kernel": (2, 2), "strides": [2, 2]},
    {"kernel": (3, 3), "strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]},
    {"kernel": (4, 4), "strides": [2, 2], "pads": [1, 1, 1, 1]},
    {"kernel": (3, 3), "strides": [1, 1], "pads": [1, 1, 1, 1]},
    {"kernel": (3, 3), "strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1], "group": 8},
    {"kernel": (5, 3), "strides": [3, 2], "pads": [2, 0, 1, 1], "output_padding": [2, 0], "group": 2},
    {"kernel": (3, 3), "strides": [2, 2], "dilations": [2, 2]},
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(f"{k}{v}" for k, v in c.items()))
def test_conv_transpose_matches_onnxruntime(case):
    attrs = {k: v for k, v in case.items() if k != "kernel"}
    group = attrs.get("group", 1)
    rng = np.random.default_rng(4)
    inits = {"w": rng.standard_normal((8, 8 // group, *case["kernel"])).astype(np.float32),
             "b": rng.standard_normal(8).astype(np.float32)}
    node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], **attrs)
    assert_close_to_ort(make_model([node], [tensor_value("x", [1, 8, 5, 6])], [tensor_value("y", None)], inits))


def test_a_1d_conv_transpose_without_bias_matches_onnxruntime():
    w = np.random.default_rng(5).standard_normal((4, 6, 5)).astype(np.float32)
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[4], pads=[2, 1])
    assert_close_to_ort(make_model([node], [tensor_value("x", [1, 4, 9])], [tensor_value("y", None)], {"w": w}))


@pytest.mark.parametrize("attrs", [{"output_shape": [10, 10]}, {"auto_pad": "SAME_UPPER"}])
def test_an_output_shape_or_same_padding_is_refused_by_name(attrs):
    w = np.ones((4, 4, 2, 2), np.float32)
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="up", strides=[2, 2], **attrs)
    model = make_model([node], [tensor_value("x", [1, 4, 5, 5])], [tensor_value("y", None)], {"w": w})
    with pytest.raises(UnsupportedOpsError, match="'up'.*explicit pads and output_padding"):
        import_model(model)
