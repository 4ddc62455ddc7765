"""PRelu of a feature map: one slope is a LeakyRelu, per-channel slopes become Relus, ChannelAffines and an Add
(found by hlsgen fuzz: every PRelu was refused with exit 8, "no integer implementation", ci seeds 3, 4, 16,
48, 58)."""
import numpy as np
import onnx
import pytest
from onnx import helper

from hlsgen.build import BuildOptions, build
from hlsgen.passes import prelu_as_relus
from tests.builders import make_model, tensor_value
from tests.passes.helpers import apply_pass, onnx_graph, ops

SLOPES = np.array([0.1, 0.3, 0.0], np.float32).reshape(3, 1, 1)


def test_per_channel_slopes_become_relus_and_an_add():
    graph = onnx_graph([helper.make_node("PRelu", ["x", "s"], ["y"], name="prelu")], {"x": (1, 3, 4, 5)}, ["y"],
                       {"s": SLOPES})
    assert apply_pass(graph, prelu_as_relus)
    assert sorted(ops(graph)) == ["Add", "ChannelAffine", "ChannelAffine", "Relu", "Relu"]
    assert graph.nodes["prelu"].op == "Add" and graph.nodes["prelu"].outputs == ("y",)


def test_one_slope_is_a_leaky_relu():
    graph = onnx_graph([helper.make_node("PRelu", ["x", "s"], ["y"], name="prelu")], {"x": (1, 3, 4, 5)}, ["y"],
                       {"s": np.full((3, 1, 1), 0.2, np.float32)})
    assert apply_pass(graph, prelu_as_relus)
    assert ops(graph) == ["LeakyRelu"] and graph.nodes["prelu"].attrs.alpha == pytest.approx(0.2)


def test_a_vector_prelu_stays():
    graph = onnx_graph([helper.make_node("PRelu", ["x", "s"], ["y"])], {"x": (1, 6)}, ["y"],
                       {"s": np.linspace(0, 0.5, 6).astype(np.float32)})
    assert not prelu_as_relus(graph)


def test_conv_prelu_is_bit_exact_in_csim(tmp_path, monkeypatch):
    monkeypatch.setenv("HLSGEN_CSIM_PORTABLE", "1")
    rng = np.random.default_rng(4)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("PRelu", ["c", "s"], ["y"], name="prelu")]
    model = make_model(nodes, [tensor_value("x", [1, 2, 6, 6])], [tensor_value("y", None)],
                       {"w": (rng.standard_normal((3, 2, 3, 3)) * 0.5).astype(np.float32), "s": SLOPES})
    onnx.save(model, tmp_path / "model.onnx")
    np.savez(tmp_path / "calib.npz", x=rng.standard_normal((10, 2, 6, 6)).astype(np.float32))
    result = build(BuildOptions(tmp_path / "model.onnx", "systolic8x8", tmp_path / "out", tmp_path / "calib.npz",
                                verify=("csim",)))
    assert result.verified["csim"].startswith("1,080 output integers")
    assert min(result.quality["sqnr_db"].values()) > 25  # two branches, each quantized: still close to float
