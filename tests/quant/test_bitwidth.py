"""Bit-width search (`--bits auto`) on the bundled digits example, and the hardware cost model."""
from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from onnx import helper

import hlsgen
from hlsgen.errors import BudgetError, HlsgenError
from hlsgen.frontend import import_model
from hlsgen.model import Model
from hlsgen.npz_io import match_inputs, top1_accuracy
from hlsgen.quant import BitConfig, quantize
from hlsgen.quant.bitwidth import search_bit_widths
from hlsgen.quant.calibrate import collect_stats
from hlsgen.quant.cost import hardware_cost
from hlsgen.quant.knobs import MAX_BITS, AssignmentCost, Knob
from hlsgen.quant.lower import lower
from hlsgen.quant.search_report import format_table
from tests.builders import make_model, tensor_value

ROOT = Path(__file__).resolve().parents[2]
DIGITS = ROOT / "examples" / "digits"


@pytest.fixture(scope="module")
def digits():
    model = hlsgen.load_onnx(DIGITS / "digits.onnx").optimize()
    calib = dict(np.load(DIGITS / "calib.npz"))
    test = dict(np.load(DIGITS / "test.npz"))
    stats = collect_stats(model.graph, match_inputs(model.graph, calib))
    return model, calib, test, stats


@pytest.fixture(scope="module")
def accuracy_search(digits):
    model, calib, _, stats = digits
    return search_bit_widths(model.graph, calib, calib["labels"], max_accuracy_drop=0.01, min_sqnr_db=None,
                             stats=stats)


@pytest.fixture(scope="module")
def sqnr_search(digits):
    model, calib, _, stats = digits
    unlabeled = {"image": calib["image"]}
    return search_bit_widths(model.graph, unlabeled, None, max_accuracy_drop=None, min_sqnr_db=30.0, stats=stats)


def _accuracy(model: Model, quantized, data: dict) -> tuple[float, float]:
    """(float, integer) top-1 accuracy on a labelled set."""
    images = {"image": data["image"]}
    return (top1_accuracy(model.run(images)["logits"], data["labels"]),
            top1_accuracy(quantized.run(images)["logits"], data["labels"]))


def test_accuracy_budget_cuts_weight_storage(digits, accuracy_search):
    model, calib, test, stats = digits
    result = accuracy_search
    auto = quantize(model.graph, calib, result.config, stats=stats)
    uniform = quantize(model.graph, calib, BitConfig(8, 8), stats=stats)

    float_calib, auto_calib = _accuracy(model, auto, calib)
    float_test, auto_test = _accuracy(model, auto, test)
    _, uniform_calib = _accuracy(model, uniform, calib)
    _, uniform_test = _accuracy(model, uniform, test)
    saved = 1 - hardware_cost(auto.lowered, model.graph).weight_storage_bits / \
        hardware_cost(uniform.lowered, model.graph).weight_storage_bits
    print(f"\ncalib: float {float_calib:.4f}  8-bit {uniform_calib:.4f}  auto {auto_calib:.4f}")
    print(f"test:  float {float_test:.4f}  8-bit {uniform_test:.4f}  auto {auto_test:.4f}")
    print(f"weight storage saved {100 * saved:.1f}%, {result.evaluations} evaluations, {result.seconds:.1f} s")
    print(format_table(result))

    assert result.mode == "accuracy"
    assert float_calib - auto_calib <= 0.01  # inside the budget on the calibration set
    assert float_test - auto_test <= 0.01  # and on the held-back test set
    assert saved >= 0.35  # the bar against uniform 8-bit
    # The search's own bookkeeping agrees with an independent quantize() of its result.
    assert result.quality.accuracy == auto_calib
    assert result.float_accuracy == float_calib
    assert result.storage_saving == pytest.approx(saved)
    assert result.cost == hardware_cost(auto.lowered, model.graph)
    assert result.seconds < 60


def test_table_and_json(digits, accuracy_search):
    model, *_ = digits
    result = accuracy_search
    layers = [n.name for n in model.graph.topological() if n.op in ("Conv", "Dense")]
    assert [row.layer for row in result.rows] == layers
    for row in result.rows:
        assert row.weight_bits == result.config.weights(row.layer)
        assert 2 <= row.input_bits <= 8 and 2 <= row.output_bits <= 8
        assert row.weight_storage_bits + row.bits_saved == (row.weight_storage_bits // row.weight_bits) * 8
    table = format_table(result)
    lines = table.splitlines()
    assert all(name in table for name in layers)
    assert len({len(line) for line in lines[: len(layers) + 2]}) <= 2  # fixed-width columns
    data = json.loads(json.dumps(result.to_json()))
    assert data["mode"] == "accuracy" and data["evaluations"] == result.evaluations
    assert data["weight_bits"] == result.config.layer_weight_bits
    assert [row["layer"] for row in data["layers"]] == layers


def test_sqnr_budget_without_labels(digits, sqnr_search):
    model, calib, _, stats = digits
    result = sqnr_search
    assert result.mode == "sqnr" and result.float_accuracy is None
    quantized = quantize(model.graph, calib, result.config, stats=stats)
    reference = model.run({"image": calib["image"]})["logits"].astype(np.float64)
    noise = np.sum((quantized.run({"image": calib["image"]})["logits"] - reference) ** 2)
    sqnr = 10 * np.log10(np.sum(reference**2) / noise)
    print(f"\nSQNR budget 30 dB: chosen {sqnr:.2f} dB, 8-bit {result.baseline.sqnr_db:.2f} dB, "
          f"storage saved {100 * result.storage_saving:.1f}%")
    assert sqnr >= 30.0
    assert result.quality.sqnr_db == pytest.approx(sqnr, abs=1e-6)
    assert result.cost.total < result.baseline_cost.total  # it did narrow something


def test_deterministic(digits, sqnr_search):
    model, calib, _, stats = digits
    again = search_bit_widths(model.graph, {"image": calib["image"]}, None, None, 30.0, stats=stats)
    first, second = sqnr_search.to_json(), again.to_json()
    first.pop("seconds"), second.pop("seconds")
    assert first == second


def test_impossible_budget_raises(digits):
    model, calib, _, stats = digits
    with pytest.raises(BudgetError) as caught:
        search_bit_widths(model.graph, {"image": calib["image"]}, None, None, 200.0, stats=stats)
    message = str(caught.value)
    assert isinstance(caught.value, HlsgenError)
    assert "\n" not in message and "200 dB" in message and "8-bit" in message and "--min-sqnr" in message


# ---- hardware cost on a tiny hand-built model --------------------------------------------------------
def _tiny() -> Model:
    """Conv(1->2, 3x3, pad 1)+Relu on 1x1x4x4, MaxPool 2x2, Flatten, Gemm(8->3)."""
    rng = np.random.default_rng(0)
    nodes = [
        helper.make_node("Conv", ["x", "cw", "cb"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Gemm", ["f", "gw", "gb"], ["y"], transB=1),
    ]
    inits = {"cw": rng.standard_normal((2, 1, 3, 3)).astype(np.float32), "cb": np.zeros(2, np.float32),
             "gw": rng.standard_normal((3, 8)).astype(np.float32), "gb": np.zeros(3, np.float32)}
    onnx_model = make_model(nodes, [tensor_value("x", [1, 1, 4, 4])], [tensor_value("y", None)], inits)
    return Model(import_model(onnx_model)).optimize()


def test_hardware_cost_formula_and_monotone():
    model = _tiny()
    graph = model.graph
    feeds = {"x": np.random.default_rng(1).uniform(0, 1, (8, 1, 4, 4)).astype(np.float32)}
    stats = collect_stats(graph, feeds)
    layers = [n for n in graph.topological() if n.op in ("Conv", "Dense")]
    assert len(layers) == 2
    conv, dense = layers[0].name, layers[1].name
    conv_out = layers[0].outputs[0]

    def cost(wc, wd, a_in, a_mid):
        bits = BitConfig(8, 8, {conv: wc, dense: wd}, {"x": a_in, conv_out: a_mid})
        return hardware_cost(lower(graph, stats, bits), graph)

    # 18 conv weights, 32 outputs x 9 MACs; 24 dense weights and MACs; the Dense input is the pooled conv output.
    assert cost(8, 8, 8, 8).weight_storage_bits == (18 + 24) * 8
    assert cost(5, 3, 4, 6).weight_storage_bits == 18 * 5 + 24 * 3
    assert cost(5, 3, 4, 6).mac_cost == pytest.approx(288 * 5 * 4 / 64 + 24 * 3 * 6 / 64)

    widths = (2, 4, 6, 8)
    table = {combo: cost(*combo) for combo in itertools.product(widths, repeat=4)}
    for combo, c in table.items():
        for knob in range(4):
            if combo[knob] == 8:
                continue
            wider = list(combo)
            wider[knob] = widths[widths.index(combo[knob]) + 1]
            w = table[tuple(wider)]
            assert w.weight_storage_bits >= c.weight_storage_bits
            assert w.mac_cost > c.mac_cost and w.total > c.total

    # The search's fast cost model (no lowering) agrees with hardware_cost.
    knobs = [Knob("weight", conv), Knob("weight", dense), Knob("act", "x"), Knob("act", conv_out)]
    estimate = AssignmentCost(graph, lower(graph, stats, BitConfig()), knobs)
    for combo in [(8, 8, 8, 8), (5, 3, 4, 6), (2, 7, 3, 5)]:
        assert estimate(dict(zip(knobs, combo))) == cost(*combo)
    assert MAX_BITS == 8


def test_the_sqnr_budget_applies_to_the_worst_output():
    """A detector's quiet output (boxes) may not hide behind a loud one (scores): the search's SQNR is the
    worst output's, not the pooled one."""
    from hlsgen.quant.evaluate import _quality

    loud = np.full(100, 100.0)
    quiet = np.full(100, 1.0)
    quality = _quality([loud + 0.01, quiet + 0.1], [loud, quiet], None)
    assert quality.sqnr_db == pytest.approx(20.0)  # quiet: 1 / 0.01; pooled it would be 49 dB
