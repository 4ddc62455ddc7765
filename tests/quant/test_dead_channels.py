"""Pruned and near-dead output channels, as real exports carry them: the accumulator stays bounded by the
live channels, the integer model stays exact, and quality does not drop (issue: dead channels)."""
from __future__ import annotations

import numpy as np
import onnx
import pytest

from hlsgen.frontend import import_model
from hlsgen.passes import optimize
from hlsgen.quant import BitConfig, quantize
from hlsgen.quant.prequant import absorb_quantization
from hlsgen.quant.report import run_float, sqnr_db
from tests.builders import run_ort
from tests.exports import CALIB, CHANNELS, DEAD, NEAR_DEAD, conv_model, ort_qdq


def quantized(model: onnx.ModelProto):
    graph = import_model(model)
    absorb_quantization(graph)
    optimize(graph)
    return graph, quantize(graph, {"x": CALIB}, BitConfig(8, 8))


def conv_layer(q):
    return next(layer for layer in q.lowered.layers if layer.op == "QConv")


@pytest.mark.parametrize("near_dead", [False, True])
def test_the_accumulator_is_sized_by_the_live_channels(near_dead):
    _, q = quantized(conv_model(near_dead=near_dead))
    _, live_only = quantized(conv_model(keep=[c for c in range(CHANNELS) if c not in DEAD + NEAR_DEAD]))
    # near-dead weights used to push the bias to 2^39 and the accumulator to 41 bits
    assert conv_layer(q).acc_bits <= conv_layer(live_only).acc_bits + 2 <= 32
    assert max(conv_layer(q).shift) <= 32


def test_near_dead_scales_from_an_onnxruntime_export(tmp_path):
    model = ort_qdq(conv_model(near_dead=True), tmp_path)
    scales = {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer}
    assert scales["w1_scale"][list(NEAR_DEAD)].max() < 1e-8  # the real case: per-channel scales near 1e-9
    graph, q = quantized(model)
    assert conv_layer(q).acc_bits <= 32
    # the integer model keeps the export's scales: the QDQ graph's own arithmetic up to the last bit of a
    # rounding (it requantizes in float32, hlsgen with a 16-bit multiplier; onnxruntime's fused integer kernels,
    # which 1.31+ run for it, round their own way)
    ours = q.run({"x": CALIB})["y"]
    theirs = np.concatenate([run_ort(model, {"x": CALIB[i : i + 1]}, fused=False)["y"] for i in range(len(CALIB))])
    step = q.graph.quant[q.graph.outputs[0]].scale
    assert np.abs(ours - theirs).max() <= step * 1.001
    assert np.mean(ours == theirs) > 0.95


def test_dead_channels_cost_no_quality():
    """SQNR of the quantized model against its float self, with and without the dead channels."""
    live = [c for c in range(CHANNELS) if c not in DEAD]
    results = []
    for model in (conv_model(), conv_model(keep=live)):
        graph, q = quantized(model)
        results.append(sqnr_db(run_float(graph, {"x": CALIB})["y"], q.run({"x": CALIB})["y"]))
    with_dead, without = results
    assert with_dead >= without - 1e-9, results


def test_a_zero_channel_is_exact_with_any_scale():
    """A pruned channel outputs its requantized bias whatever its scale: exactly the float value's grid."""
    graph, q = quantized(conv_model())
    int_out = q.graph.nodes[conv_layer(q).name].outputs[0]
    from hlsgen.reference import run_graph

    values = run_graph(q.graph, q.quantize_inputs({"x": CALIB[:1]}), keep_all=True)[int_out]
    assert not values[0, list(DEAD)].any()  # relu(1e-40) quantizes to 0 in every pixel
