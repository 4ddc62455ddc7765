"""Small models in the shapes real exports take, built in code: an upsampling decoder with Elu, a Selu
classifier whose AveragePool covers the whole map, and onnxruntime's dynamic quantization of both."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import helper

from tests.builders import make_model, tensor_value

INPUT = [1, 3, 6, 6]


def _weights(seed: int, **shapes) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {name: (rng.standard_normal(shape) * 0.4).astype(np.float32) for name, shape in shapes.items()}


def upsampling_net(opset: int = 13) -> onnx.ModelProto:
    """conv -> Elu -> conv -> Resize 2x (nearest, asymmetric/floor: PyTorch's F.interpolate) -> conv."""
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Elu", ["c1"], ["e1"], alpha=0.7),
             helper.make_node("Conv", ["e1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
             helper.make_node("Resize", ["c2", "", "scales"], ["up"], mode="nearest",
                              coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
             helper.make_node("Conv", ["up", "w3", "b3"], ["y"], pads=[1, 1, 1, 1])]
    inits = _weights(1, w1=(8, 3, 3, 3), b1=(8,), w2=(8, 8, 3, 3), b2=(8,), w3=(4, 8, 3, 3), b3=(4,))
    inits["scales"] = np.array([1, 1, 2, 2], np.float32)
    return make_model(nodes, [tensor_value("x", INPUT)], [tensor_value("y", None)], inits, opset=opset)


def selu_classifier(opset: int = 13) -> onnx.ModelProto:
    """conv -> Selu -> AveragePool(kernel = the whole 6x6 map) -> Flatten -> MatMul + Add (Keras-style)."""
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Selu", ["c1"], ["s1"]),
             helper.make_node("AveragePool", ["s1"], ["p"], kernel_shape=[6, 6]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("MatMul", ["f", "wd"], ["m"]),
             helper.make_node("Add", ["m", "bd"], ["y"])]
    inits = _weights(2, w1=(16, 3, 3, 3), b1=(16,), wd=(16, 10), bd=(10,))
    return make_model(nodes, [tensor_value("x", INPUT)], [tensor_value("y", None)], inits, opset=opset)


def real_ops_net(opset: int = 13) -> onnx.ModelProto:
    """Every op of the two above in one network (one Verilator build covers them all): conv -> Elu -> Cast
    to float (a no-op, as PyTorch exports write them) -> conv (16 channels) -> Resize 2x3 (PyTorch's
    defaults: half_pixel, round_prefer_floor) -> conv -> Selu -> AveragePool(the whole 12x18 map) -> Flatten
    -> MatMul + Add."""
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Elu", ["c1"], ["e1"]),
             helper.make_node("Cast", ["e1"], ["e1_float"], to=onnx.TensorProto.FLOAT),
             helper.make_node("Conv", ["e1_float", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
             helper.make_node("Resize", ["c2", "", "scales"], ["up"], mode="nearest"),
             helper.make_node("Conv", ["up", "w3", "b3"], ["c3"], pads=[1, 1, 1, 1]),
             helper.make_node("Selu", ["c3"], ["s3"]),
             helper.make_node("AveragePool", ["s3"], ["p"], kernel_shape=[12, 18]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("MatMul", ["f", "wd"], ["m"]),
             helper.make_node("Add", ["m", "bd"], ["y"])]
    inits = _weights(3, w1=(8, 3, 3, 3), b1=(8,), w2=(16, 8, 3, 3), b2=(16,), w3=(8, 16, 3, 3), b3=(8,),
                     wd=(8, 10), bd=(10,))
    inits["scales"] = np.array([1, 1, 2, 3], np.float32)
    return make_model(nodes, [tensor_value("x", INPUT)], [tensor_value("y", None)], inits, opset=opset)


def dynamic_quantized(model: onnx.ModelProto, folder: Path, per_channel: bool = False) -> onnx.ModelProto:
    """onnxruntime's `quantize_dynamic` of `model` (int8 weights; its Conv and MatMul become the QOperator
    pattern DynamicQuantizeLinear -> ConvInteger/MatMulInteger -> Cast -> Mul)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    src, dst = folder / "float.onnx", folder / "dynamic.onnx"
    onnx.save(model, str(src))
    quantize_dynamic(str(src), str(dst), weight_type=QuantType.QInt8, per_channel=per_channel,
                     op_types_to_quantize=["Conv", "MatMul"])
    return onnx.load(str(dst))


def images(count: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal([count, *INPUT[1:]]).astype(np.float32)
