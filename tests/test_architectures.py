"""The published architectures (hlsgen/architectures.py): valid ONNX of the published size, the float
executor equal to onnxruntime, fused as expected, quantized at 8 bits with a measured output SQNR."""
from collections import Counter
from functools import lru_cache

import numpy as np
import onnx
import pytest
from onnx import numpy_helper, shape_inference

import hlsgen
from hlsgen import architectures, zoo
from hlsgen.cli import main
from hlsgen.frontend import import_model
from hlsgen.quant import BitConfig, quantize
from hlsgen.quant.report import quality
from tests.builders import run_ort
from tests.frontend.conformance import relative_error

SLOW = {"resnet18"}  # ~3 s to build, ~1 min through the float references and the quantizer
NAMES = [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n
         for n in architectures.ARCHITECTURES if n != "anomaly_autoencoder"]  # (tested in test_zoo.py)

# name: (input name, input shape, classes)
INTERFACE = {
    "resnet8": ("image", [3, 32, 32], 10),
    "ds_cnn": ("features", [1, 49, 10], 12),
    "mobilenet_v1": ("image", [3, 96, 96], 2),
    "mobilenet_v2": ("image", [3, 128, 128], 1000),
    "resnet18": ("image", [3, 224, 224], 1000),
}

# Weights + biases of Conv and Gemm, BatchNormalization's scale + shift (trainable; not its running statistics),
# and MACs of Conv and Gemm, counted from each ONNX definition (`definition_size`). Where they come from:
# - resnet8: mlcommons/tiny benchmark/training/image_classification/keras_model.py, `resnet_v1_eembc` with 16
#   filters; by hand from its layer list: 77,706 + 480 (Keras: 78,666 with the 480 moving statistics),
#   12,501,632 MACs (12.5 M).
# - ds_cnn: mlcommons/tiny keyword spotting DS-CNN (64 filters); by hand: 22,604 + 1,152 (Keras: 24,908 with
#   the moving statistics), 2,656,768 MACs (2.7 M).
# - mobilenet_v1 (alpha 0.25, 96 px, 2 classes): by hand from Howard et al. 2017 table 1: 208,114 + 5,472,
#   7,489,664 MACs (7.5 M); the TF-slim table is checked at 128 px below.
# - mobilenet_v2 (alpha 0.5, 128 px, 1000 classes): TF-slim's mobilenet_v2_0.5_128 (tensorflow/models
#   research/slim/nets/mobilenet/README.md): 1.95 M parameters without BatchNormalization, 32 M MACs.
# - resnet18: torchvision's ResNet18_Weights.IMAGENET1K_V1 metadata: 11,689,512 parameters (BatchNormalization
#   weight and bias included), 1.81 GFLOPS (torchvision counts multiply-adds).
SIZES = {  # name: (Conv/Gemm params, BatchNormalization params, MACs)
    "resnet8": (77_706, 480, 12_501_632),
    "ds_cnn": (22_604, 1_152, 2_656_768),
    "mobilenet_v1": (208_114, 5_472, 7_489_664),
    "mobilenet_v2": (1_950_136, 18_544, 32_578_560),
    "resnet18": (11_679_912, 9_600, 1_814_073_344),
}
PUBLISHED = {  # name: (parameters as published, with BatchNormalization?, MACs as published)
    "mobilenet_v2": (1.95e6, False, 32e6),
    "resnet18": (11_689_512, True, 1.81e9),
}

# What import + optimize makes of each: op counts and the activations fused into Conv/Dense.
FUSED = {
    "resnet8": ({"Conv": 9, "Add": 3, "Relu": 3, "GlobalAveragePool": 1, "Dense": 1}, {"relu": 4, "None": 6}),
    "ds_cnn": ({"Conv": 9, "AveragePool": 1, "Dense": 1}, {"relu": 9, "None": 1}),  # a window, not the map
    "mobilenet_v1": ({"Conv": 27, "GlobalAveragePool": 1, "Dense": 1}, {"relu6": 27, "None": 1}),
    "mobilenet_v2": ({"Conv": 52, "Add": 10, "GlobalAveragePool": 1, "Dense": 1}, {"relu6": 35, "None": 18}),
    "resnet18": ({"Conv": 20, "Add": 8, "Relu": 8, "MaxPool": 1, "GlobalAveragePool": 1, "Dense": 1},
                 {"relu": 9, "None": 12}),
}

# Output SQNR of uniform 8-bit quantization on held-out synthetic inputs (measured: resnet8 24.2 dB, ds_cnn
# 24.3, mobilenet_v1 6.0, mobilenet_v2 12.0, resnet18 20.3). The 28 and 53 plain layers of the MobileNets lose
# 1 to 1.5 dB each (rounding noise passes a ReLU where it is active, while the ReLU shrinks the signal's
# variance more; trained weights and real images fare better), then the classifier, centred on the images'
# mean, loses some more: a property of these random networks, not a bound on hlsgen's quantizer.
MIN_SQNR_DB = {"resnet8": 20, "ds_cnn": 20, "mobilenet_v1": 5, "mobilenet_v2": 10, "resnet18": 10}


@lru_cache(maxsize=None)
def built(name: str) -> onnx.ModelProto:
    return architectures.ARCHITECTURES[name]()


@lru_cache(maxsize=None)
def optimized(name: str) -> hlsgen.Model:
    return hlsgen.Model(import_model(built(name))).optimize(verify_each=True)


def feeds(name: str, n: int, seed: int) -> dict[str, np.ndarray]:
    return {INTERFACE[name][0]: architectures.calibration_data(built(name), n=n, seed=seed)}


def definition_size(model: onnx.ModelProto) -> tuple[int, int, int]:
    """(Conv/Gemm weights + biases, BatchNormalization scale + shift, Conv/Gemm MACs per sample) of `model`."""
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    inferred = shape_inference.infer_shapes(model).graph
    values = [*inferred.value_info, *inferred.output]
    dims = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim] for v in values}
    params = batchnorm = macs = 0
    for node in model.graph.node:
        if node.op_type in ("Conv", "Gemm"):
            w = inits[node.input[1]]
            params += sum(inits[t].size for t in node.input[1:])
            per_output = int(np.prod(w.shape[1:]))  # Conv: C/group * kh * kw; Gemm [out, in] (transB=1): in
            macs += per_output * (int(np.prod(dims[node.output[0]][1:])) if node.op_type == "Conv" else w.shape[0])
        elif node.op_type == "BatchNormalization":
            batchnorm += 2 * inits[node.input[1]].size
    return params, batchnorm, macs


@pytest.mark.parametrize("name", NAMES)
def test_valid_onnx_with_the_interface(name):
    model = built(name)
    onnx.checker.check_model(model, full_check=True)
    assert model.ir_version == 10 and [(o.domain, o.version) for o in model.opset_import] == [("", 17)]
    (inp,), (out,) = model.graph.input, model.graph.output
    input_name, shape, classes = INTERFACE[name]
    dims = lambda v: [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]  # noqa: E731
    assert (inp.name, dims(inp), out.name, dims(out)) == (input_name, ["N", *shape], "logits", ["N", classes])


@pytest.mark.parametrize("name", NAMES)
def test_size_is_the_published_architectures(name):
    params, batchnorm, macs = definition_size(built(name))
    assert (params, batchnorm, macs) == SIZES[name]
    if name in PUBLISHED:
        published_params, with_batchnorm, published_macs = PUBLISHED[name]
        assert abs(params + with_batchnorm * batchnorm - published_params) <= 0.005 * published_params
        assert abs(macs - published_macs) <= 0.02 * published_macs  # the tables round to 2 or 3 digits
    costs = optimized(name).costs()  # hlsgen's own count agrees (BatchNormalization folded into Conv biases)
    assert sum(c.macs for c in costs if c.macs and c.params) == macs


@pytest.mark.parametrize("alpha, published_macs, published_params", [(0.25, 14e6, 0.47e6), (0.5, 49e6, 1.32e6)])
def test_mobilenet_v1_matches_the_tf_slim_table_at_128_px(alpha, published_macs, published_params):
    # tensorflow/models research/slim/nets/mobilenet_v1.md: MobileNet_v1_{0.25,0.50}_128, 1000 classes
    params, batchnorm, macs = definition_size(architectures.mobilenet_v1(alpha, 128, classes=1000))
    assert abs(macs - published_macs) / published_macs < 0.04  # 13.57 M and 49.16 M
    assert abs(params - published_params) / published_params < 0.02  # 464,600 and 1,320,648


def test_the_layer_forms_the_architectures_name():
    attrs = lambda n: {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}  # noqa: E731
    first = lambda name, op: next(n for n in built(name).graph.node if n.op_type == op)  # noqa: E731
    assert attrs(first("ds_cnn", "Conv")) == dict(kernel_shape=[10, 4], strides=[2, 2], pads=[4, 1, 5, 1], group=1)
    assert attrs(first("ds_cnn", "AveragePool")) == dict(kernel_shape=[24, 5], strides=[24, 5])  # of a 25x5 map
    assert attrs(first("resnet8", "AveragePool")) == dict(kernel_shape=[8, 8], strides=[8, 8])
    resnet8_convs = [n for n in built("resnet8").graph.node if n.op_type == "Conv"]
    assert all(len(n.input) == 3 for n in resnet8_convs)  # Keras's biases
    # MLPerf Tiny's projection shortcuts feed the Add straight from the Conv, without a BatchNormalization
    adds = [n for n in built("resnet8").graph.node if n.op_type == "Add"]
    assert [n.input[0].endswith("_proj") for n in adds] == [False, True, True]
    depthwise = [n for n in built("mobilenet_v2").graph.node if n.op_type == "Conv" and attrs(n)["group"] > 1]
    assert len(depthwise) == 17 and sum(attrs(n)["strides"] == [2, 2] for n in depthwise) == 4


@pytest.mark.slow
def test_resnet18_stem_is_torchvisions():
    nodes = built("resnet18").graph.node
    conv, pool = next(n for n in nodes if n.op_type == "Conv"), next(n for n in nodes if n.op_type == "MaxPool")
    attrs = lambda n: {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}  # noqa: E731
    assert attrs(conv) == dict(kernel_shape=[7, 7], strides=[2, 2], pads=[3] * 4, group=1)
    assert attrs(pool) == dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4)  # overlapping and padded


@pytest.mark.parametrize("name", NAMES)
def test_float_executor_matches_onnxruntime(name):
    x = feeds(name, n=3, seed=1)
    expected = run_ort(built(name), x)["logits"]
    assert np.isfinite(expected).all() and expected.std() > 0.3  # logits of a trained net's scale
    assert relative_error(hlsgen.Model(import_model(built(name))).run(x)["logits"], expected) < 1e-4
    got = optimized(name).run(x)["logits"]
    assert relative_error(got, expected) < 1e-4 and (got.argmax(axis=1) == expected.argmax(axis=1)).all()


@pytest.mark.parametrize("name", NAMES)
def test_optimizes_to_fused_layers(name):
    nodes = optimized(name).graph.nodes.values()
    ops, acts = FUSED[name]
    assert Counter(n.op for n in nodes) == ops
    assert Counter(str(n.attrs.activation) for n in nodes if n.op in ("Conv", "Dense")) == acts


@pytest.mark.parametrize("name", NAMES)
def test_quantizes_at_8_bits(name):
    graph = optimized(name).graph
    quantized = quantize(graph, feeds(name, n=16 if name in SLOW else 32, seed=0), BitConfig(8, 8))
    held_out = feeds(name, n=4 if name in SLOW else 16, seed=1)
    assert quality(graph, quantized, held_out, None)["sqnr_db"]["logits"] >= MIN_SQNR_DB[name]
    (logits,) = quantized.run_int(quantized.quantize_inputs(held_out)).values()  # the integer reference
    assert logits.dtype.kind == "i" and logits.shape == (len(held_out[INTERFACE[name][0]]), INTERFACE[name][2])


@pytest.mark.parametrize("name", NAMES)
def test_deterministic(name):
    assert architectures.ARCHITECTURES[name]().SerializeToString() == built(name).SerializeToString()
    if name not in SLOW:
        assert architectures.ARCHITECTURES[name](seed=1).SerializeToString() != built(name).SerializeToString()


def test_registry_holds_the_autoencoder_and_its_features():
    assert architectures.ARCHITECTURES["anomaly_autoencoder"] is zoo.anomaly_autoencoder
    data = architectures.calibration_data(zoo.anomaly_autoencoder(hidden=32), n=3)
    assert data.shape == (3, 640) and -60 < data.mean() < -20  # log-mel frames in dB, as zoo makes them


def test_mfcc_like_features():
    data = architectures.calibration_data(built("ds_cnn"), n=64, seed=3)
    assert data.shape == (64, 1, 49, 10) and data.dtype == np.float32
    assert np.array_equal(data, architectures.calibration_data(built("ds_cnn"), n=64, seed=3))
    c = data[:, 0]
    spread = c.std(axis=(0, 1))
    assert (np.diff(spread[1:]) < 0).mean() >= 0.75  # higher cepstral coefficients vary less
    energy = c[:, :, 0]
    assert (energy.max(axis=1) - energy.min(axis=1)).mean() > 15  # a word stands out of the quiet frames
    assert np.corrcoef(c[:, :-1].ravel(), c[:, 1:].ravel())[0, 1] > 0.5  # consecutive frames alike


@pytest.mark.parametrize("name, keras_params", [("resnet8", "78,666"), ("ds_cnn", "24,908")])
def test_hlsgen_inspect_counts_keras_params_then_the_fused_layers(name, keras_params, tmp_path, capsys):
    # Before optimization inspect counts every initializer, BatchNormalization's moving statistics too:
    # the "Total params" Keras's model.summary() gives for the MLPerf Tiny reference definitions.
    path = tmp_path / f"{name}.onnx"
    onnx.save_model(built(name), str(path))
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    fused = sum(FUSED[name][0].values())
    assert f"total: {len(built(name).graph.node)} nodes" in out and keras_params in out
    assert f"total: {fused} nodes" in out and f"{SIZES[name][2]:,}" in out
