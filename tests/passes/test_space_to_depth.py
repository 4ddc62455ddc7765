"""Pixel blocks and channels traded around a Conv (hlsgen/passes/space_to_depth.py): a DepthToSpace of a
Conv's output becomes the Conv's phases woven by an Interleave (one at a model output stays, an activation
after it moving before it); a SpaceToDepth or a Focus stem's four stride-2 Slices concatenated fold into the
Conv reading them as one strided Conv; each computes what the graph did (apply_pass, onnxruntime)."""
import numpy as np
import pytest
from onnx import helper

from hlsgen.passes import (activation_before_depth_to_space, depth_to_space_as_phases, merge_slices, optimize,
                           space_to_depth_into_conv)
from hlsgen.reference import run_graph
from tests.builders import make_model, run_ort, tensor_value
from tests.passes.helpers import apply_pass, onnx_graph, ops

RNG = np.random.default_rng(12)


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_a_depth_to_space_inside_the_network_becomes_the_conv_s_phases(mode):
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c0"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("Sigmoid", ["c0"], ["c"], name="sigmoid"),
             helper.make_node("DepthToSpace", ["c"], ["d"], blocksize=2, mode=mode, name="d2s"),
             helper.make_node("Conv", ["d", "w2"], ["y"], name="head")]
    graph = onnx_graph(nodes, {"x": (1, 3, 5, 6)}, ["y"], {"w": RNG.standard_normal((8, 3, 3, 3)),
                                                            "b": RNG.standard_normal(8),
                                                            "w2": RNG.standard_normal((4, 2, 1, 1))})
    assert apply_pass(graph, depth_to_space_as_phases)
    assert sorted(ops(graph)) == ["Conv"] * 5 + ["Interleave"] + ["Sigmoid"] * 4


def test_a_depth_to_space_at_the_output_stays_and_its_activation_moves_before_it():
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
             helper.make_node("DepthToSpace", ["c"], ["d"], blocksize=3, name="d2s"),
             helper.make_node("Sigmoid", ["d"], ["y"], name="sigmoid")]
    graph = onnx_graph(nodes, {"x": (1, 2, 4, 4)}, ["y"], {"w": RNG.standard_normal((9, 2, 1, 1))})
    assert apply_pass(graph, activation_before_depth_to_space)
    assert not depth_to_space_as_phases(graph)
    assert ops(graph) == ["Conv", "Sigmoid", "DepthToSpace"]


def _focus(order):
    """YOLOv5's Focus: x[..., ::2, :] then [..., ::2] as a Slice per axis (the first shared), concatenated."""
    inits, nodes, parts = {"w": RNG.standard_normal((8, 12, 3, 3))}, [], []
    for dy in (0, 1):
        inits |= {f"r{dy}": np.array([dy], np.int64), "end": np.array([2 ** 62], np.int64),
                  "h": np.array([2], np.int64), "v": np.array([3], np.int64), "two": np.array([2], np.int64)}
        nodes.append(helper.make_node("Slice", ["x", f"r{dy}", "end", "h", "two"], [f"rows{dy}"], name=f"rows{dy}"))
    for dy, dx in order:
        inits[f"c{dx}"] = np.array([dx], np.int64)
        nodes.append(helper.make_node("Slice", [f"rows{dy}", f"c{dx}", "end", "v", "two"], [f"p{dy}{dx}"],
                                      name=f"p{dy}{dx}"))
        parts.append(f"p{dy}{dx}")
    nodes += [helper.make_node("Concat", parts, ["cat"], axis=1, name="cat"),
              helper.make_node("Conv", ["cat", "w"], ["y"], pads=[1, 1, 1, 1], name="conv")]
    return nodes, inits


@pytest.mark.parametrize("order", [((0, 0), (1, 0), (0, 1), (1, 1)), ((0, 0), (0, 1), (1, 0), (1, 1))])
def test_a_focus_stem_folds_into_one_strided_conv(order):
    nodes, inits = _focus(order)
    model = make_model(nodes, [tensor_value("x", [1, 3, 8, 10])], [tensor_value("y", None)],
                       {k: v.astype(np.float32) if v.dtype == np.float64 else v for k, v in inits.items()})
    graph = onnx_graph(nodes, {"x": (1, 3, 8, 10)}, ["y"], inits)
    assert apply_pass(graph, merge_slices)
    assert apply_pass(graph, space_to_depth_into_conv)
    optimize(graph)
    (conv,) = graph.nodes.values()
    assert (conv.op, conv.attrs.kernel_shape, conv.attrs.strides, conv.attrs.pads) == ("Conv", (6, 6), (2, 2),
                                                                                       (2, 2, 2, 2))
    x = RNG.standard_normal((1, 3, 8, 10)).astype(np.float32)
    want = run_ort(model, {"x": x})["y"]
    assert np.abs(run_graph(graph, {"x": x})["y"] - want).max() < 1e-4 * np.abs(want).max()


def test_a_space_to_depth_folds_into_the_conv_reading_it():
    nodes = [helper.make_node("SpaceToDepth", ["x"], ["s"], blocksize=2, name="s2d"),
             helper.make_node("Conv", ["s", "w"], ["y"], strides=[2, 2], pads=[1, 0, 1, 0], name="conv")]
    graph = onnx_graph(nodes, {"x": (1, 3, 8, 12)}, ["y"], {"w": RNG.standard_normal((5, 12, 3, 2))})
    assert apply_pass(graph, space_to_depth_into_conv)
    optimize(graph)
    assert ops(graph) == ["Conv"]


def test_slices_of_part_of_the_phases_stay():
    nodes, inits = _focus(((0, 0), (1, 1)))
    inits["w"] = RNG.standard_normal((8, 6, 3, 3))
    graph = onnx_graph(nodes, {"x": (1, 3, 8, 10)}, ["y"], inits)
    optimize(graph)
    assert "Concat" in ops(graph)
