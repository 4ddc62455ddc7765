"""linear_resize_as_conv: a linear Resize by integer factors becomes a nearest Resize that repeats its edge
pixels and a depthwise Conv of exact integer weights, computing what it did (apply_pass, against the float
kernel, itself checked against onnxruntime in tests/ops) for every transform whose weights repeat with the
output pixel; align_corners does not, and stays."""
import numpy as np
import pytest
from onnx import helper

from hlsgen.passes import linear_resize_as_conv
from hlsgen.passes.linear_resize import axis_filter
from tests.passes.helpers import apply_pass, onnx_graph, ops


def _upsampling(scales, transform, shape=(1, 5, 4, 6)):
    node = helper.make_node("Resize", ["x", "", "scales"], ["y"], name="up", mode="linear",
                            coordinate_transformation_mode=transform)
    full = np.array([1, 1, *scales], np.float32)
    return onnx_graph([node], {"x": shape}, ["y"], {"scales": full})


@pytest.mark.parametrize("transform", ["half_pixel", "pytorch_half_pixel", "half_pixel_symmetric", "asymmetric"])
@pytest.mark.parametrize("scales", [(2, 2), (3, 3), (4, 2), (1, 2)], ids=str)
def test_a_linear_resize_becomes_an_edge_repeating_nearest_one_and_a_depthwise_conv(scales, transform):
    graph = _upsampling(scales, transform)
    assert apply_pass(graph, linear_resize_as_conv)
    assert sorted(ops(graph)) == ["Conv", "Resize"]
    conv, nearest = graph.nodes["up"], graph.producer(graph.nodes["up"].inputs[0])
    assert conv.op == "Conv" and conv.attrs.group == 5 and conv.attrs.pads == (0, 0, 0, 0)
    assert nearest.attrs.mode == "nearest" and nearest.attrs.scales == scales
    ints, quant = graph.quant[conv.inputs[1]]
    assert ints.min() >= 1 and np.allclose(ints * quant.scales[0], graph.constants[conv.inputs[1]])


def test_a_1d_linear_resize():
    graph = _upsampling((2,), "half_pixel", (1, 3, 7))
    assert apply_pass(graph, linear_resize_as_conv)
    assert graph.nodes["up"].attrs.kernel_shape == (3,)


def test_align_corners_stays_a_linear_resize():
    graph = _upsampling((2, 2), "align_corners")
    assert not apply_pass(graph, linear_resize_as_conv)
    assert ops(graph) == ["Resize"]


@pytest.mark.parametrize("transform, scale, taps, denominator, before", [
    ("half_pixel", 2, [1, 2, 1], 4, 1),
    ("half_pixel", 3, [1, 1, 1], 3, 1),
    ("half_pixel", 4, [1, 2, 2, 2, 1], 8, 2),
    ("asymmetric", 2, [1, 1], 2, 0),
])
def test_the_kernel_of_one_axis(transform, scale, taps, denominator, before):
    got = axis_filter(transform, 6, scale)
    assert (list(got[0]), got[1], got[2]) == (taps, denominator, before)
