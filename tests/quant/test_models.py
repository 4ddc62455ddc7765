"""Quantized builds of real and generated models: quality against float, and safe accumulators."""
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import hlsgen
from hlsgen import zoo
from hlsgen.frontend import import_model
from hlsgen.passes import optimize
from hlsgen.quant import BitConfig, quantize
from hlsgen.quant.report import quality, sqnr_db

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "digits"
MNIST = ROOT / "tests" / "data" / "mnist-8"


@pytest.fixture(scope="module")
def digits():
    model = hlsgen.load_onnx(EXAMPLE / "digits.onnx").optimize()
    return model.graph, dict(np.load(EXAMPLE / "calib.npz")), dict(np.load(EXAMPLE / "test.npz"))


def test_example_at_8_bits_loses_at_most_half_a_point(digits):
    graph, calib, test = digits
    measured = quality(graph, quantize(graph, calib, BitConfig(8, 8)), {"image": test["image"]}, test["labels"])
    assert measured["float_accuracy"] - measured["int_accuracy"] <= 0.005
    assert measured["sqnr_db"]["logits"] > 30


@pytest.mark.parametrize("bits, min_sqnr", [(6, 20), (4, 8)])
def test_example_at_narrower_uniform_widths(digits, bits, min_sqnr):
    graph, calib, test = digits
    quantized = quantize(graph, calib, BitConfig(bits, bits))
    assert all(q.bits == bits for name, q in quantized.graph.quant.items() if name != "image")
    assert quality(graph, quantized, {"image": test["image"]}, test["labels"])["sqnr_db"]["logits"] > min_sqnr


def mnist_sets():
    load = lambda p: numpy_helper.to_array(onnx.load_tensor(str(p)))  # noqa: E731
    xs = [load(MNIST / f"test_data_set_{i}" / "input_0.pb") for i in range(3)]
    ys = [load(MNIST / f"test_data_set_{i}" / "output_0.pb") for i in range(3)]
    return np.concatenate(xs), np.concatenate(ys)


def test_mnist8_at_8_bits_keeps_every_argmax_at_30_db():
    graph = hlsgen.load_onnx(MNIST / "model.onnx").optimize().graph
    x, expected = mnist_sets()
    # The three test inputs are all the data mnist-8 ships with: they are also the calibration set.
    (got,) = quantize(graph, {"Input3": x}).run({"Input3": x}).values()
    assert got.argmax(axis=1).tolist() == expected.argmax(axis=1).tolist()
    assert all(sqnr_db(expected[i], got[i]) >= 30 for i in range(3))


@pytest.mark.parametrize("name", ["residual", "mobilenet"])
def test_generated_networks_quantize_with_their_ops(name):
    onnx_model = zoo.ZOO[name]()
    graph = import_model(onnx_model)
    optimize(graph)
    calib = {"image": zoo.calibration_data(onnx_model, n=48, seed=0)}
    held_out = {"image": zoo.calibration_data(onnx_model, n=32, seed=1)}
    quantized = quantize(graph, calib)
    ops = {n.op for n in quantized.graph.nodes.values()}
    assert {"QConv", "QAdd", "QAveragePool", "QDense"} <= ops
    assert quality(graph, quantized, held_out, None)["sqnr_db"]["logits"] > 20


def test_accumulator_widths_bound_every_input(digits):
    graph, calib, _ = digits
    quantized = quantize(graph, calib, BitConfig(8, 8))
    for node in quantized.graph.nodes.values():
        if node.op not in ("QConv", "QDense"):
            continue
        w = quantized.graph.constants[node.inputs[1]].astype(np.int64)
        b = quantized.graph.constants[node.inputs[2]].astype(np.int64)
        qx = quantized.graph.quant[node.inputs[0]]
        extent = max(abs(qx.qmin - qx.zero_point), abs(qx.qmax - qx.zero_point))
        per_channel = np.abs(w.reshape(w.shape[0], -1) if node.op == "QConv" else w.T).sum(axis=1) * extent
        bound = int((per_channel + np.abs(b)).max())
        bits = node.attrs.acc_bits
        assert bound < 1 << (bits - 1) <= 2 * bound, node.name  # safe, and not wider than needed
