"""Each kernel family C-simulated bit-exact on small models built in code, beyond the issue's models:
padding, dilation, strides, ceil_mode, count_include_pad, 1-D and grouped convolutions, LeakyRelu, lookup
tables, copies, zero points; plus off-chip weights, unsupported layers, and deterministic output."""
from __future__ import annotations

import filecmp
import re

import numpy as np
import pytest
from onnx import helper

from hlsgen.errors import UnsupportedOpsError
from hlsgen.hls.csim import vendor_headers
from tests.builders import make_model, tensor_value
from tests.hls.helpers import csim, generate, generate_and_csim, quantize_model

pytestmark = pytest.mark.csim
RNG = np.random.default_rng(5)


def inputs(shape, n=6):
    return {"x": RNG.uniform(-1, 1, (n, *shape)).astype(np.float32)}


def weights(*shape):
    return (RNG.standard_normal(shape) * 0.3).astype(np.float32)


def copies_model():
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["a"], ["ar"]),
             helper.make_node("Conv", ["x", "w2"], ["b"]),
             # the input on its own scale: a QRequant aligns it (a Conv alone read by the Concat writes onto its grid)
             helper.make_node("Concat", ["ar", "b", "x"], ["c"], axis=1),
             helper.make_node("Transpose", ["c"], ["t"], perm=[0, 2, 3, 1]),
             helper.make_node("Pad", ["t", "pads"], ["y"], mode="constant")]
    inits = {"w1": weights(4, 3, 3, 3), "w2": weights(2, 3, 1, 1),
             "pads": np.array([0, 1, 0, 2, 0, 0, 1, 0], np.int64)}
    return make_model(nodes, [tensor_value("x", [1, 3, 5, 6])], [tensor_value("y", None)], inits), inputs((3, 5, 6))


def pools_model():
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1], dilations=[1, 2], strides=[1, 1]),
             helper.make_node("MaxPool", ["a"], ["p"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1),
             helper.make_node("AveragePool", ["p"], ["q"], kernel_shape=[3, 2], strides=[2, 1], pads=[1, 0, 1, 1],
                              count_include_pad=0, ceil_mode=1),
             helper.make_node("AveragePool", ["q"], ["y"], kernel_shape=[2, 2], pads=[1, 1, 0, 0], count_include_pad=1)]
    return make_model(nodes, [tensor_value("x", [1, 3, 9, 13])], [tensor_value("y", None)], {"w1": weights(5, 3, 3, 3)}), \
        inputs((3, 9, 13))


def conv1d_model():
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["a"], pads=[2, 1], strides=[2], dilations=[2]),
             helper.make_node("LeakyRelu", ["a"], ["l"], alpha=0.2),  # fused: a negative-side multiplier
             helper.make_node("Conv", ["l", "w2"], ["g"], group=2, pads=[1, 1], kernel_shape=[3]),
             helper.make_node("Sigmoid", ["g"], ["s"]),  # a lookup table
             helper.make_node("Flatten", ["s"], ["f"]),
             helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], transB=1)]
    inits = {"w1": weights(6, 3, 3), "b1": weights(6), "w2": weights(4, 3, 3), "wf": weights(5, 40), "bf": weights(5)}
    return make_model(nodes, [tensor_value("x", [1, 3, 20])], [tensor_value("y", None)], inits), inputs((3, 20))


def depthwise_clip_global_max_model():
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1], group=3, strides=[2, 2]),
             helper.make_node("Clip", ["a", "lo", "hi"], ["c"]),
             helper.make_node("GlobalMaxPool", ["c"], ["g"]),
             helper.make_node("Flatten", ["g"], ["f"]),
             helper.make_node("Gemm", ["f", "wf"], ["y"], transB=1)]
    inits = {"w1": weights(3, 1, 3, 3), "lo": np.array(0, np.float32), "hi": np.array(0.5, np.float32), "wf": weights(4, 3)}
    return make_model(nodes, [tensor_value("x", [1, 3, 7, 7])], [tensor_value("y", None)], inits), inputs((3, 7, 7))


CASES = {"copies": (copies_model, {"QConv", "QRequant", "Concat", "Transpose", "Pad"}),
         "pools": (pools_model, {"QConv", "MaxPool", "QAveragePool"}),
         "conv1d_grouped_leaky_lut": (conv1d_model, {"QConv", "QLut", "QDense"}),
         # the depthwise layer reads the input through an identity QRequant (its window copies: hlsgen.quant.lower)
         "depthwise_clip_global_max": (depthwise_clip_global_max_model, {"QRequant", "QConv", "GlobalMaxPool", "QDense"})}


@pytest.mark.parametrize("name", CASES)
def test_family_is_bit_exact(name, tmp_path):
    make, ops = CASES[name]
    model, calib = make()
    quantized = quantize_model(model, calib)
    assert {n.op for n in quantized.graph.nodes.values()} == ops
    generate(quantized, calib, tmp_path / "hls")
    result = csim(tmp_path / "hls", portable=True)
    assert result.mismatches == 0 and result.samples == 6, result.log


def test_leaky_relu_and_lut_with_the_vendor_headers(tmp_path):
    if vendor_headers() is None:
        pytest.fail("hls4ml (a dependency carrying the vendor ap_types headers) is not installed: pip install .")
    model, calib = conv1d_model()
    result = generate_and_csim(model, calib, tmp_path, portable=False)
    assert result.headers.kind == "vendor" and result.mismatches == 0


@pytest.mark.parametrize("portable", [True, False])
def test_input_zero_points_and_4_bit_weights_of_pre_quantized_models(tmp_path, portable):
    from tests.ops.test_quantize import brevitas_conv_model
    from tests.quant.test_prequant import build_int, qdq_conv_model

    if not portable and vendor_headers() is None:
        pytest.fail("hls4ml (a dependency carrying the vendor ap_types headers) is not installed: pip install .")
    for i, (model, low, high) in enumerate([(qdq_conv_model()[0], -3, 3), (brevitas_conv_model(RNG)[0], -2, 2)]):
        shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
        x = RNG.uniform(low, high, (8, *shape[1:])).astype(np.float32)
        quantized, _ = build_int(model, x[:1])
        generate(quantized, {"x": x}, tmp_path / f"hls{i}")
        result = csim(tmp_path / f"hls{i}", portable)
        assert result.mismatches == 0 and result.samples == 8, result.log
    assert "128" in (tmp_path / "hls0" / "kernels" / "conv.h").read_text()  # the input zero point is subtracted


def test_weights_off_chip_come_through_an_m_axi_port(tmp_path):
    model, calib = pools_model()
    quantized = quantize_model(model, calib)
    layer = next(n.name for n in quantized.graph.nodes.values() if n.op == "QConv")
    design = generate(quantized, calib, tmp_path / "hls", offchip={layer})
    top = (tmp_path / "hls" / "tiny.cpp").read_text()
    port = design.offchip[0].port
    assert f"#pragma HLS INTERFACE mode=m_axi port={port} offset=slave bundle=gmem" in top
    assert f"const int8_t {port}[" in top
    assert design.offchip[0].data.name in (tmp_path / "hls" / "tiny_tb.cpp").read_text()
    result = csim(tmp_path / "hls", portable=True)
    assert result.mismatches == 0, result.log


def test_unsupported_layers_are_listed_by_name(tmp_path):
    nodes = [helper.make_node("Conv", ["x", "w"], ["a"]),
             helper.make_node("Pad", ["a", "pads"], ["y"], mode="reflect")]
    model = make_model(nodes, [tensor_value("x", [1, 2, 6, 6])], [tensor_value("y", None)],
                       {"w": weights(2, 2, 1, 1), "pads": np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64)})
    calib = inputs((2, 6, 6))
    # named as the ONNX file spells it: node y, op Pad, the model's opset
    with pytest.raises(UnsupportedOpsError, match=r"'y' \(Pad, opset 17\): the HLS kernels cannot implement it: .*reflect"):
        generate(quantize_model(model, calib), calib, tmp_path / "hls")


def test_generation_is_deterministic_and_fully_rendered(tmp_path):
    model, calib = copies_model()
    quantized = quantize_model(model, calib)
    for run in ("a", "b"):
        generate(quantized, calib, tmp_path / run)
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert all(filecmp.cmp(tmp_path / "a" / f, tmp_path / "b" / f, shallow=False) for f in files)
    leftovers = re.compile(r"\{\{|\}\}|\{%|%\}|\{#|#\}|TODO|FIXME|XXX|PLACEHOLDER|@@")
    for f in files:
        assert not leftovers.search((tmp_path / "a" / f).read_text()), f


def test_accumulators_start_on_the_first_reduction_step(tmp_path):
    from hlsgen import zoo

    model = zoo.ZOO["residual"]()
    calib = {"image": zoo.calibration_data(model, n=4, seed=0)}
    generate(quantize_model(model, calib), calib, tmp_path / "hls")
    conv = (tmp_path / "hls" / "kernels" / "stem_conv.h").read_text()
    assert "if (row_tile == 0 && row == 0) {" in conv
    pool = (tmp_path / "hls" / "kernels" / "pool.h").read_text()
    assert "if (q == 0) {" in pool


@pytest.fixture(scope="module")
def mobilenet():
    from hlsgen import zoo

    model = zoo.ZOO["mobilenet"]()
    calib = {"image": zoo.calibration_data(model, n=8, seed=0)}
    return quantize_model(model, calib), calib


@pytest.mark.parametrize("target", ["systolic8x8", "systolic32x32", "output_stationary"])
def test_other_array_shapes_and_dataflows(mobilenet, tmp_path, target):
    """Other tilings (guards where channels or reductions do not divide the array) and the
    output-stationary nests: same integers."""
    if target == "output_stationary":
        from hlsgen.resources import data_dir

        text = (data_dir("hw_models") / "systolic16x16.yaml").read_text()
        (tmp_path / "os.yaml").write_text(text.replace("dataflow: weight_stationary", "dataflow: output_stationary"))
        target = str(tmp_path / "os.yaml")
    quantized, calib = mobilenet
    generate(quantized, calib, tmp_path / "hls", target=target)
    result = csim(tmp_path / "hls", portable=True)
    assert result.mismatches == 0 and result.samples == 8, result.log
