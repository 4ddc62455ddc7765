"""The model zoo (hlsgen/zoo.py): valid ONNX, sensible activations, imports and optimizes to fused ops."""
from collections import Counter
from functools import lru_cache

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import hlsgen
from hlsgen import zoo
from hlsgen.frontend import import_model
from hlsgen.reference import verify_graph
from tests.builders import run_ort
from tests.frontend.conformance import relative_error

NAMES = sorted(zoo.ZOO)
# What an optimized zoo model may contain: Conv/Dense with or without a fused activation, the residual
# Add and the Relu after it, pooling. No BatchNormalization, Clip, Gemm, Flatten/Reshape, ChannelAffine.
FUSED_OPS = {"Conv", "Dense", "Add", "Relu", "MaxPool", "AveragePool", "GlobalAveragePool"}


@lru_cache(maxsize=None)
def built(name: str) -> onnx.ModelProto:
    return zoo.ZOO[name]()


@lru_cache(maxsize=None)
def optimized(name: str) -> hlsgen.Model:
    return hlsgen.Model(import_model(built(name))).optimize(verify_each=True)


def op_counts(model: onnx.ModelProto) -> Counter:
    return Counter(n.op_type for n in model.graph.node)


def conv_attrs(model: onnx.ModelProto) -> list[dict]:
    inits = {i.name: i for i in model.graph.initializer}
    out = []
    for node in model.graph.node:
        if node.op_type == "Conv":
            attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
            out.append(dict(attrs, w_shape=tuple(inits[node.input[1]].dims)))
    return out


@pytest.mark.parametrize("name", NAMES)
def test_valid_onnx_with_the_zoo_interface(name):
    model = built(name)
    onnx.checker.check_model(model, full_check=True)
    assert model.ir_version == 10
    assert [(o.domain, o.version) for o in model.opset_import] == [("", 17)]
    (inp,), (out,) = model.graph.input, model.graph.output
    assert inp.name == "image" and out.name == "logits"
    in_dims = inp.type.tensor_type.shape.dim
    assert in_dims[0].dim_param == "N" and [d.dim_value for d in in_dims[1:]] == ([3, 32, 32] if "cifar" in name else [3, 16, 16])
    out_dims = out.type.tensor_type.shape.dim
    assert out_dims[0].dim_param == "N" and out_dims[1].dim_value == 10
    assert all(numpy_helper.to_array(i).dtype == np.float32 for i in model.graph.initializer)


@pytest.mark.parametrize("name", NAMES)
def test_logits_are_sensible_in_onnxruntime(name):
    model = built(name)
    images = zoo.calibration_data(model, n=32, seed=7)
    logits = run_ort(model, {"image": images})["logits"]
    assert logits.shape == (32, 10) and np.isfinite(logits).all()
    assert 0.3 < logits.std() < 5 and np.abs(logits).max() < 20
    assert logits.std(axis=0).mean() > 0.3  # varies from image to image, not just from class to class
    assert len(set(logits.argmax(axis=1))) >= 3
    noise = np.random.default_rng(0).standard_normal(images.shape).astype(np.float32)
    logits = run_ort(model, {"image": noise})["logits"]
    assert np.isfinite(logits).all() and 0.3 < logits.std() < 30 and np.abs(logits).max() < 100


@pytest.mark.parametrize("name", NAMES)
def test_imports_optimizes_and_matches_onnxruntime(name, tmp_path):
    model = built(name)
    graph = import_model(model)
    verify_graph(graph)
    path = tmp_path / f"{name}.onnx"
    onnx.save_model(model, str(path))
    loaded = hlsgen.load_onnx(path)
    assert [n.op for n in loaded.graph.topological()] == [n.op for n in graph.topological()]
    images = zoo.calibration_data(model, n=4, seed=1)
    expected = run_ort(model, {"image": images})["logits"]
    assert relative_error(loaded.run(images)["logits"], expected) < 1e-4
    fast = loaded.optimize(verify_each=True)
    got = fast.run(images)["logits"]
    assert relative_error(got, expected) < 1e-4
    assert (got.argmax(axis=1) == expected.argmax(axis=1)).all()


@pytest.mark.parametrize("name", NAMES)
def test_optimized_graph_has_only_fused_ops(name):
    model, graph = built(name), optimized(name).graph
    ops = Counter(n.op for n in graph.nodes.values())
    assert set(ops) <= FUSED_OPS, ops
    counts = op_counts(model)
    assert ops["Conv"] == counts["Conv"]  # every BatchNormalization folded, no Conv lost
    assert ops["Add"] == counts["Add"] and ops["Dense"] == 1 and ops["GlobalAveragePool"] == 1
    fused = Counter(str(n.attrs.activation) for n in graph.nodes.values() if n.op == "Conv")
    if name.startswith("res"):
        # stem + the first Conv of each of the 3 blocks carry the Relu; the Relu after each Add stays
        assert fused == {"relu": 4, "None": 4} and ops["Relu"] == 3
    else:
        # every Conv but the inverted-residual block's linear projection carries the Relu6
        assert fused == {"relu6": counts["Conv"] - 1, "None": 1} and ops["Relu"] == 0
    assert len(graph.nodes) < len(model.graph.node)


def test_residual_net_structure():
    model = built("residual")
    assert op_counts(model) == Counter(
        Conv=8, BatchNormalization=8, Relu=7, Add=3, GlobalAveragePool=1, Flatten=1, Gemm=1
    )
    convs = conv_attrs(model)
    strided = [c for c in convs if c["strides"] == [2, 2]]
    assert sorted(c["kernel_shape"][0] for c in strided) == [1, 3]  # strided 3x3 and 1x1 projection
    assert all(c["group"] == 1 for c in convs)
    assert not any(n.input[2:] for n in model.graph.node if n.op_type == "Conv")  # bias-free, BN follows
    one_channel = zoo.residual_net(in_channels=1, input_hw=8, channels=8, classes=4)
    assert [d.dim_value for d in one_channel.graph.input[0].type.tensor_type.shape.dim[1:]] == [1, 8, 8]
    assert run_ort(one_channel, {"image": zoo.calibration_data(one_channel, n=2)})["logits"].shape == (2, 4)


def test_mobilenet_structure():
    model = built("mobilenet")
    depthwise = [c for c in conv_attrs(model) if c["group"] > 1]
    assert len(depthwise) >= 4 and all(c["group"] == c["w_shape"][0] and c["w_shape"][1] == 1 for c in depthwise)
    assert any(c["strides"] == [2, 2] for c in depthwise)
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    clips = [n for n in model.graph.node if n.op_type == "Clip"]
    assert len(clips) == op_counts(model)["Conv"] - 1 and not any(n.attribute for n in clips)
    assert all((inits[n.input[1]], inits[n.input[2]]) == (0.0, 6.0) for n in clips)  # Relu6 as constant inputs


@pytest.mark.parametrize("name", NAMES)
def test_deterministic(name):
    assert zoo.ZOO[name]().SerializeToString() == built(name).SerializeToString()
    if "cifar" not in name:  # (the CIFAR ones take a second to build)
        assert zoo.ZOO[name](seed=1).SerializeToString() != built(name).SerializeToString()


def test_calibration_data_is_image_like_and_deterministic():
    model = built("residual")
    data = zoo.calibration_data(model)
    assert data.shape == (64, 3, 16, 16) and data.dtype == np.float32
    assert data.min() == 0.0 and data.max() == 1.0
    assert np.array_equal(data, zoo.calibration_data(model))
    assert not np.array_equal(data, zoo.calibration_data(model, seed=1))
    # smooth: neighbouring pixels are strongly correlated, unlike white noise
    a, b = data[..., :-1].ravel(), data[..., 1:].ravel()
    assert np.corrcoef(a, b)[0, 1] > 0.8
    assert zoo.calibration_data(built("mobilenet_cifar"), n=3).shape == (3, 3, 32, 32)


# ---- the dense-only anomaly-detection autoencoder ----------------------------------------------
@lru_cache(maxsize=None)
def autoencoder() -> onnx.ModelProto:
    return zoo.anomaly_autoencoder()


def test_autoencoder_has_mlperf_tinys_shape():
    model = autoencoder()
    onnx.checker.check_model(model, full_check=True)
    assert model.ir_version == 10 and [(o.domain, o.version) for o in model.opset_import] == [("", 17)]
    (inp,), (out,) = model.graph.input, model.graph.output
    dims = lambda v: [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]  # noqa: E731
    assert (inp.name, dims(inp), out.name, dims(out)) == ("features", ["N", 640], "reconstruction", ["N", 640])
    assert op_counts(model) == Counter(Gemm=10, BatchNormalization=9, Relu=9)
    gemms = [n for n in model.graph.node if n.op_type == "Gemm"]
    assert all(onnx.helper.get_attribute_value(n.attribute[0]) == 1 for n in gemms)  # transB=1, as PyTorch
    assert gemm_weight_shapes(model) == [(128, 640), *[(128, 128)] * 3, (8, 128), (128, 8), *[(128, 128)] * 3,
                                         (640, 128)]
    assert [m for m, _ in gemm_weight_shapes(zoo.anomaly_autoencoder(hidden=32))] == [32] * 4 + [8] + [32] * 4 + [640]


def gemm_weight_shapes(model: onnx.ModelProto) -> list[tuple[int, ...]]:
    inits = {i.name: tuple(i.dims) for i in model.graph.initializer}
    return [inits[n.input[1]] for n in model.graph.node if n.op_type == "Gemm"]


def test_autoencoder_reconstructs_log_mel_like_features_in_onnxruntime():
    model = autoencoder()
    features = zoo.calibration_data(model, n=32, seed=7)
    assert features.shape == (32, 640) and features.dtype == np.float32
    assert -60 < features.mean() < -20 and 5 < features.std() < 30  # log-mel energies in dB
    frames = features.reshape(32, 5, 128)
    assert np.abs(np.diff(frames, axis=1)).mean() < np.abs(np.diff(frames, axis=2)).mean() * 3  # slow in time
    got = run_ort(model, {"features": features})["reconstruction"]
    assert got.shape == (32, 640) and np.isfinite(got).all()
    assert abs(got.mean() - features.mean()) < features.std() / 2 and 0.5 < got.std() / features.std() < 2
    assert features.min() - 20 < got.min() and got.max() < features.max() + 20  # input-like, no wild outliers
    assert got.std(axis=0).mean() > 1  # varies from sample to sample
    assert np.array_equal(features, zoo.calibration_data(model, n=32, seed=7))


def test_autoencoder_optimizes_to_ten_dense_layers_matching_onnxruntime():
    model = autoencoder()
    optimized_model = hlsgen.Model(import_model(model)).optimize(verify_each=True)
    nodes = list(optimized_model.graph.topological())
    assert [n.op for n in nodes] == ["Dense"] * 10  # every BatchNormalization folded, every Relu fused
    assert [str(n.attrs.activation) for n in nodes] == ["relu"] * 9 + ["None"]  # a signed reconstruction
    features = zoo.calibration_data(model, n=4, seed=1)
    expected = run_ort(model, {"features": features})["reconstruction"]
    assert relative_error(optimized_model.run(features)["reconstruction"], expected) < 1e-4


def test_autoencoder_is_deterministic():
    assert zoo.anomaly_autoencoder().SerializeToString() == autoencoder().SerializeToString()
    assert zoo.anomaly_autoencoder(seed=1).SerializeToString() != autoencoder().SerializeToString()
