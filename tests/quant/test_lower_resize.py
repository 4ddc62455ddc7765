"""A linear Resize whose weights change from pixel to pixel (align_corners, fractional factors) lowers to QResample: integer
weights den - r and r from exact counters (hlsgen.ops.resize.interpolation_source), one multiplier for the
dens' product and the scales; its integer result follows the float interpolation within a step."""
from fractions import Fraction

import numpy as np
import pytest
from onnx import helper

from hlsgen.ops.resize import (LINEAR_TRANSFORMS, ResizeAttrs, interpolation_matrix, interpolation_source, linear_steps,
                               linear_weights, resize)
from hlsgen.quant.int_ops import QRequantAttrs, QResampleAttrs, qresample
from hlsgen.reference import run_graph
from tests.builders import make_model, tensor_value
from tests.hw.models import _quantize


@pytest.mark.parametrize("transform", LINEAR_TRANSFORMS)
@pytest.mark.parametrize("size, scale", [(1, 3), (2, 2), (5, 3), (16, 2), (7, 1), (5, Fraction(8, 5)),
                                         (12, Fraction(8, 3)), (65, Fraction(513, 65))])
def test_the_counters_weights_are_onnx_s_linear_weights_exactly(transform, size, scale):
    steps = linear_steps(transform, size, scale)
    exact = interpolation_matrix(steps, size, int(size * scale)) / steps[2]
    assert np.allclose(exact, linear_weights(transform, size, scale), rtol=0, atol=1e-12)  # the float's rounding


def test_the_integer_interpolation_is_the_weighted_sum_of_the_four_source_pixels():
    rng = np.random.default_rng(3)
    x = rng.integers(-128, 128, (1, 3, 4, 5))
    steps = (linear_steps("align_corners", 4, 2), linear_steps("align_corners", 5, 3))
    a = QResampleAttrs((2, 3), "align_corners", steps, QRequantAttrs(3, 23000, 22, -2, -128, 127))
    got = qresample(a, x)
    for oy in range(8):
        for ox in range(15):
            (iy, ry), (ix, rx) = interpolation_source(steps[0], 4, oy), interpolation_source(steps[1], 5, ox)
            acc = 0
            for dy, wy in ((0, steps[0][2] - ry), (1, ry)):
                for dx, wx in ((0, steps[1][2] - rx), (1, rx)):
                    if wy and wx:
                        acc = acc + wy * wx * (x[0, :, iy + dy, ix + dx] - 3)
            want = np.clip(((acc * 23000) + (1 << 21) >> 22) - 2, -128, 127)
            assert np.array_equal(got[0, :, oy, ox], want), (oy, ox)


def _align_corners_model(shape, scales):
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Resize", ["r", "", "s"], ["y"], name="up", mode="linear",
                              coordinate_transformation_mode="align_corners")]
    out = [shape[0], shape[1], *(n * s for n, s in zip(shape[2:], scales))]
    return make_model(nodes, [tensor_value("x", shape)], [tensor_value("y", out)],
                      {"s": np.array([1, 1, *scales], np.float32)}, opset=13)


@pytest.mark.parametrize("shape, scales", [([1, 4, 6, 5], (2, 2)), ([1, 3, 9], (3,))], ids=["2d", "1d"])
def test_align_corners_lowers_to_an_interpolation_that_follows_the_float_one(shape, scales):
    graph = _quantize(_align_corners_model(shape, scales))
    (node,) = [n for n in graph.nodes.values() if n.op == "QResample"]
    qx, qy = graph.quant[node.inputs[0]], graph.quant[node.outputs[0]]
    total = np.prod([den for _, _, den in node.attrs.steps])
    r = node.attrs.requant
    assert r.multiplier / 2**r.shift == pytest.approx(qx.scale / (total * qy.scale), rel=2**-14)
    x = np.random.default_rng(2).integers(qx.qmin, qx.qmax + 1, (2, *shape[1:]))
    values = run_graph(graph, {graph.inputs[0]: x}, keep_all=True)
    real = lambda t: (values[t] - graph.quant[t].zero_point) * graph.quant[t].scale  # noqa: E731
    source = real(node.inputs[0])
    for axis, scale in enumerate(scales):
        weights = linear_weights("align_corners", source.shape[2 + axis], scale)
        source = np.moveaxis(np.tensordot(source, weights, axes=([2 + axis], [1])), -1, 2 + axis)
    assert np.abs(real(node.outputs[0]) - source).max() <= 0.5 * qy.scale + 1e-9


def test_a_nearest_resize_by_a_fraction_picks_the_float_kernel_s_pixels_exactly():
    """Nearest 6x6 -> 9x15 (half_pixel, round_prefer_floor): QResample with `pick`, the input's quantization
    kept, every output integer the source integer the float Resize picks."""
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Resize", ["r", "", "", "sizes"], ["y"], name="up", mode="nearest",
                              coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_floor")]
    model = make_model(nodes, [tensor_value("x", [1, 3, 6, 6])], [tensor_value("y", [1, 3, 9, 15])],
                       {"sizes": np.array([1, 3, 9, 15], np.int64)}, opset=13)
    graph = _quantize(model)
    (node,) = [n for n in graph.nodes.values() if n.op == "QResample"]
    assert node.attrs.pick and graph.quant[node.inputs[0]] == graph.quant[node.outputs[0]]
    qx = graph.quant[node.inputs[0]]
    x = np.random.default_rng(4).integers(qx.qmin, qx.qmax + 1, (2, 3, 6, 6))
    values = run_graph(graph, {"x": x}, keep_all=True)
    float_up = resize(ResizeAttrs((Fraction(3, 2), Fraction(5, 2)), transform="half_pixel",
                                  nearest="round_prefer_floor"), values[node.inputs[0]].astype(np.float32))
    assert np.array_equal(values[node.outputs[0]], float_up.astype(np.int64))
