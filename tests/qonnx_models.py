"""Brevitas-style QONNX models built in code, shaped like FINN's MLPerf Tiny exports: Quant nodes in the
default ONNX domain (opset 13 and nothing else imported), on the input, on every weight (per output channel)
and after every ReLU, BatchNormalization between a convolution and its ReLU, and a final Gemm whose logits
no Quant follows."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

from hlsgen.frontend import import_model
from hlsgen.reference import run_graph
from tests.builders import IR_VERSION, tensor_value

DIGITS = Path(__file__).resolve().parent.parent / "examples" / "digits"
QONNX_DOMAIN = "qonnx.custom_op.general"
SCALE_SAMPLES = 32  # calibration images that set the activation scales, as QAT would have learned them


def digits_images(split: str) -> tuple[np.ndarray, np.ndarray]:
    """The example's 16x16 grey images in [0, 1] and their labels ("calib": 256, "test": 360)."""
    data = np.load(DIGITS / f"{split}.npz")
    return data["image"], data["labels"]


def w3a3_digits(domain: str = "", logits_bits: int | None = None) -> onnx.ModelProto:
    """The digits example (Conv16-BN-ReLU-Pool-Conv32-BN-ReLU-Pool-FC64-ReLU-FC10) as a W3A3 export: an
    8-bit unsigned input (scale 1/255), 3-bit narrow signed weights with per-channel scales max|w|/3,
    3-bit unsigned activations after each ReLU, and float logits (or, with `logits_bits`, logits behind a
    signed Quant of that width, as a QuantLinear with an output quantizer exports them).

    The activation scales are what quantization-aware training would learn, here the 99.9th percentile of
    each ReLU's output over calibration images, divided by the top level 7."""
    float_weights = {i.name: numpy_helper.to_array(i) for i in onnx.load(str(DIGITS / "digits.onnx")).graph.initializer}
    scales = {"a1_s": 1.0, "a2_s": 1.0, "a3_s": 1.0, "y_s": 1.0}
    images = digits_images("calib")[0][:SCALE_SAMPLES]
    # each scale depends only on those before it: one sweep settles them
    for key, tensor, top in (("a1_s", "r1", 7), ("a2_s", "r2", 7), ("a3_s", "r3", 7), ("y_s", "logits_f", 127))[
            :4 if logits_bits else 3]:
        graph = import_model(_model(float_weights, scales, QONNX_DOMAIN, logits_bits or 8))
        values = np.concatenate([np.abs(run_graph(graph, {"image": x[None]}, keep_all=True)[tensor]).ravel()
                                 for x in images])
        scales[key] = float(np.percentile(values, 99.9)) / top
    return _model(float_weights, scales, domain, logits_bits)


def _model(w: dict[str, np.ndarray], scales: dict[str, float], domain: str, logits_bits: int | None) -> onnx.ModelProto:
    def per_channel(weight):  # [M, ...] -> [M, 1, ...], narrow 3-bit: levels -3..3
        top = np.abs(weight.reshape(len(weight), -1)).max(axis=1) / 3
        return top.reshape((-1,) + (1,) * (weight.ndim - 1)).astype(np.float32)

    inits = {"zero": np.float32(0), "b3": np.float32(3), "b8": np.float32(8), "in_s": np.float32(1 / 255),
             **{k: np.float32(v) for k, v in scales.items()}}
    for name in ("conv1", "conv2", "fc1", "fc2"):
        inits[f"{name}.weight"] = w[f"{name}.weight"]
        inits[f"{name}.weight_s"] = per_channel(w[f"{name}.weight"])
        inits[f"{name}.bias"] = w[f"{name}.bias"]
    for bn in ("bn1", "bn2"):
        for p in ("weight", "bias", "running_mean", "running_var"):
            inits[f"{bn}.{p}"] = w[f"{bn}.{p}"]

    def quant(x, scale, bits, out, signed, narrow=0):
        return helper.make_node("Quant", [x, scale, "zero", bits], [out], name=f"Quant_{out}", domain=domain,
                                signed=signed, narrow=narrow, rounding_mode="ROUND")

    nodes = [quant("image", "in_s", "b8", "x", signed=0)]
    nodes += [quant(f"{n}.weight", f"{n}.weight_s", "b3", f"{n}.wq", signed=1, narrow=1)
              for n in ("conv1", "conv2", "fc1", "fc2")]
    source = "x"
    for i in (1, 2):
        bn = f"bn{i}"
        nodes += [
            helper.make_node("Conv", [source, f"conv{i}.wq", f"conv{i}.bias"], [f"c{i}"], name=f"conv{i}",
                             kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
            helper.make_node("BatchNormalization", [f"c{i}", f"{bn}.weight", f"{bn}.bias", f"{bn}.running_mean",
                                                    f"{bn}.running_var"], [f"n{i}"], name=bn),
            helper.make_node("Relu", [f"n{i}"], [f"r{i}"], name=f"relu{i}"),
            quant(f"r{i}", f"a{i}_s", "b3", f"q{i}", signed=0),
            helper.make_node("MaxPool", [f"q{i}"], [f"p{i}"], name=f"pool{i}", kernel_shape=[2, 2], strides=[2, 2]),
        ]
        source = f"p{i}"
    logits = "logits_f" if logits_bits else "logits"
    nodes += [
        helper.make_node("Flatten", ["p2"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fc1.wq", "fc1.bias"], ["f1"], name="fc1", transB=1),
        helper.make_node("Relu", ["f1"], ["r3"], name="relu3"),
        quant("r3", "a3_s", "b3", "q3", signed=0),
        helper.make_node("Gemm", ["q3", "fc2.wq", "fc2.bias"], [logits], name="fc2", transB=1),
    ]
    if logits_bits:
        inits["b_out"] = np.float32(logits_bits)
        nodes.append(quant("logits_f", "y_s", "b_out", "logits", signed=1))
    graph = helper.make_graph(nodes, "w3a3_digits", [tensor_value("image", [1, 1, 16, 16])],
                              [tensor_value("logits", [1, 10])],
                              initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    opsets = [helper.make_opsetid("", 13)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    model = helper.make_model(graph, opset_imports=opsets, producer_name="brevitas-style test builder")
    model.ir_version = IR_VERSION
    return model


def trunc_pool_model(version: int = 2, rounding: str = "FLOOR", logits_bits: int | None = None) -> onnx.ModelProto:
    """Quant(8-bit image) -> Conv (3-bit weights) -> ReLU -> Quant (3-bit) -> GlobalAveragePool -> Trunc ->
    Flatten -> Gemm (3-bit weights) -> float logits, as a Brevitas TruncAvgPool exports the pool: the average
    on an 8-bit grid 32 times finer than the activations', truncated to 4 bits (version 2: onto a scale 16
    times coarser; version 1: the same scale, so the value shrinks 16 times). With `logits_bits`, a signed
    Quant of that width (scale 1/16) follows the Gemm."""
    rng = np.random.default_rng(5)
    w1 = (rng.standard_normal((16, 1, 3, 3)) * 0.4).astype(np.float32)
    w2 = (rng.standard_normal((10, 16)) * 0.4).astype(np.float32)
    act = 0.25
    inits = {"zero": np.float32(0), "b3": np.float32(3), "b4": np.float32(4), "b8": np.float32(8),
             "in_s": np.float32(1 / 255), "a_s": np.float32(act), "t_s": np.float32(act / 32),
             "t_out_s": np.float32(act / 2), "w1": w1,
             "w1_s": (np.abs(w1).reshape(16, -1).max(1) / 3).reshape(16, 1, 1, 1),
             "b1": (rng.standard_normal(16) * 0.1).astype(np.float32), "w2": w2,
             "w2_s": (np.abs(w2).max(1) / 3).reshape(10, 1), "b2": np.zeros(10, np.float32)}
    trunc_inputs = ["g", "t_s", "zero", "b8", "t_out_s", "b4"] if version == 2 else ["g", "t_s", "zero", "b8", "b4"]
    def quant(x, s, b, y, **attrs):
        return helper.make_node("Quant", [x, s, "zero", b], [y], name=f"Quant_{y}", **attrs)

    nodes = [
        quant("image", "in_s", "b8", "x", signed=0),
        quant("w1", "w1_s", "b3", "w1q", signed=1, narrow=1),
        quant("w2", "w2_s", "b3", "w2q", signed=1, narrow=1),
        helper.make_node("Conv", ["x", "w1q", "b1"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        quant("r", "a_s", "b3", "a", signed=0),
        helper.make_node("GlobalAveragePool", ["a"], ["g"], name="gap"),
        helper.make_node("Trunc", trunc_inputs, ["t"], name="trunc", rounding_mode=rounding, signed=0, narrow=0),
        helper.make_node("Flatten", ["t"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "w2q", "b2"], ["logits_f" if logits_bits else "logits"], name="fc", transB=1),
    ]
    if logits_bits:
        inits.update(y_s=np.float32(1 / 16), b_out=np.float32(logits_bits))
        nodes.append(quant("logits_f", "y_s", "b_out", "logits", signed=1))
    graph = helper.make_graph(nodes, "trunc_pool", [tensor_value("image", [1, 1, 16, 16])],
                              [tensor_value("logits", [1, 10])],
                              initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = IR_VERSION
    return model
