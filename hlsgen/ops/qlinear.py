"""ONNX's integer operators: ConvInteger and MatMulInteger as exact int32 ops; DynamicQuantizeLinear as
ONNX specifies it (scale and zero point from the data); QLinearConv and QLinearMatMul expanded into
DequantizeLinear -> Conv/MatMul -> QuantizeLinear, their float equivalent. onnxruntime's dynamic pattern
(DynamicQuantizeLinear -> ConvInteger/MatMulInteger -> Cast -> Mul) is folded by
`hlsgen.passes.dynamic_quant`.

Zero points, scales and the QLinearConv bias must be constants. Expanded nodes are named after the
original node (`conv1/dequant_x`, `conv1/dequant_w`, `conv1`, `conv1/quant_y`).
"""
from __future__ import annotations

import numpy as np
from onnx import helper

from ..ir import Node
from .conv import ConvAttrs, conv, import_conv
from .quantize import along, import_dequantize_linear, import_quantize_linear
from .registry import NoAttrs, UnsupportedAttribute, kernel, onnx_importer


@kernel("ConvInteger", ConvAttrs)
def conv_integer(a: ConvAttrs, x, w, x_zero_point=None, w_zero_point=None) -> np.ndarray:
    """y = conv(x - x_zero_point, w - w_zero_point), exact, in int32 (wrapping like a 32-bit accumulator).

    x_zero_point is per tensor, w_zero_point per tensor or per output channel; the pads hold
    x_zero_point (0 once it is subtracted).
    """
    xi = x.astype(np.int64)
    wi = w.astype(np.int64)
    if x_zero_point is not None:
        xi = xi - np.asarray(x_zero_point, np.int64).reshape(())
    if w_zero_point is not None:
        wi = wi - along(np.asarray(w_zero_point, np.int64), 0, w.ndim)
    return conv(a, xi, wi).astype(np.int32)


@kernel("MatMulInteger")
def matmul_integer(_: NoAttrs, a, b, a_zero_point=None, b_zero_point=None) -> np.ndarray:
    """y = (a - a_zero_point) @ (b - b_zero_point), exact, in int32 (wrapping like a 32-bit accumulator).

    a_zero_point is per tensor or per row ([M], or shaped like a with K = 1); b_zero_point per tensor or
    per column ([N], or shaped like b with K = 1).
    """
    ai = a.astype(np.int64)
    bi = b.astype(np.int64)
    if a_zero_point is not None:
        za = np.asarray(a_zero_point, np.int64)
        # A vector of row zero points must become a column to broadcast over a's rows.
        ai = ai - (za.reshape(-1, 1) if za.ndim == 1 and za.size > 1 else za)
    if b_zero_point is not None:
        bi = bi - np.asarray(b_zero_point, np.int64)
    return np.matmul(ai, bi).astype(np.int32)


@kernel("DynamicQuantizeLinear")
def dynamic_quantize_linear(_: NoAttrs, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(y, y_scale, y_zero_point): uint8 quantization of x over [min(x, 0), max(x, 0)], computed from x."""
    hi, lo = np.float32(max(0.0, x.max(initial=0.0))), np.float32(min(0.0, x.min(initial=0.0)))
    scale = np.float32(1.0 if hi == lo else hi - lo) / np.float32(255)
    zero = np.uint8(np.rint(np.clip(np.float32(0) - lo / scale, 0, 255)))
    y = np.clip(np.rint(x.astype(np.float32) / scale) + np.float32(zero), 0, 255).astype(np.uint8)
    return y, np.asarray(scale, np.float32), np.asarray(zero, np.uint8)


@onnx_importer("DynamicQuantizeLinear")
def import_dynamic_quantize_linear(node, ctx) -> list[Node]:
    return [Node(ctx.node_name(node), "DynamicQuantizeLinear", (node.input[0],), tuple(node.output), NoAttrs())]


@onnx_importer("ConvInteger")
def import_conv_integer(node, ctx) -> list[Node]:
    _single_value(ctx, node, 2, "x_zero_point")
    w_zp = ctx.require_constant(node, 3, "w_zero_point")
    channels = ctx.shape(node.input[1])[0]
    if w_zp is not None and w_zp.size not in (1, channels):
        raise UnsupportedAttribute(f"w_zero_point of shape {w_zp.shape} is neither per tensor nor per output channel")
    # ConvInteger has exactly Conv's attributes and the same first two inputs.
    return [import_conv(node, ctx)[0].with_(op="ConvInteger")]


@onnx_importer("MatMulInteger")
def import_matmul_integer(node, ctx) -> list[Node]:
    if len(node.input) > 2 and node.input[2] and ctx.constant(node.input[2]) is None:
        _single_value(ctx, node, 2, "a_zero_point")  # a constant one may also be per row
    ctx.require_constant(node, 3, "b_zero_point")
    return [Node(ctx.node_name(node), "MatMulInteger", tuple(node.input), (node.output[0],), NoAttrs())]


@onnx_importer("QLinearConv")
def import_qlinear_conv(node, ctx) -> list[Node]:
    x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp = node.input[:8]
    for index, what in ((1, "x_scale"), (2, "x_zero_point"), (6, "y_scale"), (7, "y_zero_point")):
        _per_tensor(ctx, node, index, what)
    base = _base_name(node)
    x_float, dq_x = _dequantize(ctx, base, "x", [x, x_scale, x_zp])
    w_float, dq_w = _dequantize(ctx, base, "w", [w, w_scale, w_zp], axis=0)
    y_float = ctx.graph.fresh_name(f"{base}/y_float")
    q_y = _quantize(ctx, base, [y_float, y_scale, y_zp], node.output[0])
    inputs = (x_float, w_float)
    if len(node.input) > 8 and node.input[8]:
        # B is quantized with scale x_scale * w_scale and zero point 0: its float value is a constant.
        bias = ctx.require_constant(node, 8, "the bias B").astype(np.float64)
        scale = ctx.constant(x_scale).astype(np.float64) * ctx.constant(w_scale).astype(np.float64)
        value = (bias * scale.reshape(-1)).astype(ctx.constant(x_scale).dtype)
        inputs += (ctx.graph.add_constant(ctx.graph.fresh_name(f"{base}/bias"), value),)
    # Import as a Conv on the quantized tensors (same shapes) so kernel_shape and auto_pad resolve the same.
    proto = helper.make_node("Conv", [x, w], [y_float], name=base)
    proto.attribute.extend(node.attribute)
    conv_node = import_conv(proto, ctx)[0].with_(inputs=inputs)
    return dq_x + dq_w + [conv_node] + q_y


@onnx_importer("QLinearMatMul")
def import_qlinear_matmul(node, ctx) -> list[Node]:
    a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp = node.input[:8]
    for index, what in ((1, "a_scale"), (2, "a_zero_point"), (6, "y_scale"), (7, "y_zero_point")):
        _per_tensor(ctx, node, index, what)
    base = _base_name(node)
    a_float, dq_a = _dequantize(ctx, base, "a", [a, a_scale, a_zp])
    # b's scale and zero point are per tensor or per column (the last axis).
    b_float, dq_b = _dequantize(ctx, base, "b", [b, b_scale, b_zp], axis=-1)
    y_float = ctx.graph.fresh_name(f"{base}/y_float")
    q_y = _quantize(ctx, base, [y_float, y_scale, y_zp], node.output[0])
    matmul = Node(ctx.node_name(node), "MatMul", (a_float, b_float), (y_float,), NoAttrs())
    return dq_a + dq_b + [matmul] + q_y


def _base_name(node) -> str:
    return node.name or f"{node.op_type}_{node.output[0]}"


def _per_tensor(ctx, node, index: int, what: str) -> None:
    value = ctx.require_constant(node, index, what)
    if value is not None and value.size != 1:
        raise UnsupportedAttribute(f"{what} must be a single value (per tensor), not shape {value.shape}")


def _single_value(ctx, node, index: int, what: str) -> None:
    """An activation zero point: one value, a constant or computed at run time (by DynamicQuantizeLinear)."""
    if index < len(node.input) and node.input[index] and int(np.prod(ctx.shape(node.input[index]))) != 1:
        shape = ctx.shape(node.input[index])
        raise UnsupportedAttribute(f"{what} must be a single value (per tensor), not shape {shape}")


def _dequantize(ctx, base: str, what: str, inputs: list[str], **attrs) -> tuple[str, list[Node]]:
    """A DequantizeLinear node reading `inputs`, imported like an ONNX one; returns its output and nodes."""
    out = ctx.graph.fresh_name(f"{base}/{what}_float")
    proto = helper.make_node("DequantizeLinear", inputs, [out], name=f"{base}/dequant_{what}", **attrs)
    return out, import_dequantize_linear(proto, ctx)


def _quantize(ctx, base: str, inputs: list[str], output: str) -> list[Node]:
    """A per-tensor QuantizeLinear node writing `output`, imported like an ONNX one."""
    proto = helper.make_node("QuantizeLinear", inputs, [output], name=f"{base}/quant_y")
    return import_quantize_linear(proto, ctx)
