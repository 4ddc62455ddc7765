"""ONNX QuantizeLinear / DequantizeLinear as float-reference ops: integer quantization, per tensor or per axis.

Scales and zero points must be constants (the compiled hardware bakes them in). Sub-byte types (int4, uint4,
int2, uint2) are held in int8/uint8 arrays restricted to their range; fp8/float4 and blocked quantization
are rejected. The helpers at the bottom are shared with the QOperator and QONNX importers.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from onnx import helper

from ..ir import Node
from .registry import UnsupportedAttribute, kernel, onnx_importer

# Integer quantized types: their value range and the numpy dtype that stores them.
INT_RANGES = {
    "int8": (-128, 127),
    "uint8": (0, 255),
    "int16": (-32768, 32767),
    "uint16": (0, 65535),
    "int4": (-8, 7),
    "uint4": (0, 15),
    "int2": (-2, 1),
    "uint2": (0, 3),
}
SUB_BYTE_STORAGE = {"int4": "int8", "uint4": "uint8", "int2": "int8", "uint2": "uint8"}


@dataclass(frozen=True)
class QuantizeLinearAttrs:
    """axis: the per-axis channel (None: per tensor); out_dtype: a key of INT_RANGES."""

    axis: int | None
    out_dtype: str = "uint8"


@dataclass(frozen=True)
class DequantizeLinearAttrs:
    """axis: the per-axis channel (None: per tensor); out_dtype: the float output type."""

    axis: int | None
    out_dtype: str = "float32"


@kernel("QuantizeLinear", QuantizeLinearAttrs)
def quantize_linear(a: QuantizeLinearAttrs, x, scale, zero_point=None) -> np.ndarray:
    """y = saturate(round_half_even(x / scale) + zero_point) to out_dtype's range; division in scale's type."""
    s = along(scale, a.axis, x.ndim)
    q = np.rint(x.astype(s.dtype) / s).astype(np.float64)
    if zero_point is not None:
        q = q + along(zero_point, a.axis, x.ndim).astype(np.float64)
    lo, hi = INT_RANGES[a.out_dtype]
    return np.clip(q, lo, hi).astype(storage_dtype(a.out_dtype))


@kernel("DequantizeLinear", DequantizeLinearAttrs)
def dequantize_linear(a: DequantizeLinearAttrs, x, scale, zero_point=None) -> np.ndarray:
    """y = (x - zero_point) * scale, the difference exact in integers, the product in out_dtype."""
    q = x.astype(np.int64)
    if zero_point is not None:
        q = q - along(zero_point, a.axis, x.ndim).astype(np.int64)
    out = np.dtype(a.out_dtype)
    return q.astype(out) * along(scale, a.axis, x.ndim).astype(out)


@onnx_importer("QuantizeLinear")
def import_quantize_linear(node, ctx) -> list[Node]:
    attrs = ctx.attrs(node)
    _reject_blocked(attrs)
    if attrs.get("precision", 0):
        raise UnsupportedAttribute("the precision attribute is not supported (the division uses y_scale's type)")
    if attrs.get("output_dtype", 0):
        out_dtype = np.dtype(helper.tensor_dtype_to_np_dtype(attrs["output_dtype"])).name
    elif len(node.input) > 2 and node.input[2]:
        out_dtype = ctx.graph.tensors[node.input[2]].dtype
    else:
        out_dtype = "uint8"
    check_quantized_type(out_dtype)
    axis = quant_axis(ctx, node, attrs)
    return [Node(ctx.node_name(node), "QuantizeLinear", tuple(node.input), (node.output[0],),
                 QuantizeLinearAttrs(axis, out_dtype))]


@onnx_importer("DequantizeLinear")
def import_dequantize_linear(node, ctx) -> list[Node]:
    attrs = ctx.attrs(node)
    _reject_blocked(attrs)
    x_dtype = ctx.graph.tensors[node.input[0]].dtype
    if x_dtype != "int32":  # int32 (a bias) dequantizes without a zero point
        check_quantized_type(x_dtype)
    axis = quant_axis(ctx, node, attrs)
    scale = ctx.require_constant(node, 1, "x_scale")
    if attrs.get("output_dtype", 0):
        out_dtype = np.dtype(helper.tensor_dtype_to_np_dtype(attrs["output_dtype"])).name
    else:
        out_dtype = scale.dtype.name
    return [Node(ctx.node_name(node), "DequantizeLinear", tuple(node.input), (node.output[0],),
                 DequantizeLinearAttrs(axis, out_dtype))]


# ---- shared helpers ----------------------------------------------------------------------------
def storage_dtype(quantized: str) -> np.dtype:
    """The numpy dtype holding values of a quantized type (sub-byte types widen to a byte)."""
    return np.dtype(SUB_BYTE_STORAGE.get(quantized, quantized))


def check_quantized_type(dtype: str) -> None:
    """Raise UnsupportedAttribute unless `dtype` is an integer quantized type of INT_RANGES."""
    if dtype in INT_RANGES:
        return
    if dtype.startswith("float8"):
        raise UnsupportedAttribute(f"fp8 types are not supported ({dtype}); hlsgen quantizes to integers")
    if dtype.startswith("float4"):
        raise UnsupportedAttribute(f"float4 types are not supported ({dtype}); hlsgen quantizes to integers")
    raise UnsupportedAttribute(f"quantized type {dtype} is not supported")


def along(value: np.ndarray, axis: int | None, ndim: int) -> np.ndarray:
    """A scale or zero point shaped to broadcast against an ndim-array: a scalar, or a vector along `axis`."""
    value = np.asarray(value)
    if value.size == 1:
        return value.reshape(())
    return value.reshape([-1 if i == axis else 1 for i in range(ndim)])


def quant_axis(ctx, node, attrs) -> int | None:
    """The non-negative quantization axis of a QuantizeLinear/DequantizeLinear node (None when per tensor).

    Its scale (input 1) and optional zero point (input 2) must be constants holding one value or a 1-D
    vector as long as the `axis` attribute's dimension.
    """
    params = [ctx.require_constant(node, 1, "the scale")]
    zp = ctx.require_constant(node, 2, "the zero point")
    if zp is not None:
        params.append(zp)
    if all(p.size == 1 for p in params):
        return None
    shape = ctx.shape(node.input[0])
    rank = len(shape)
    axis = int(attrs.get("axis", 1))
    if not -rank <= axis < rank:
        raise UnsupportedAttribute(f"axis {axis} is out of range for rank {rank}")
    axis %= rank
    for p in params:
        if p.ndim != 1 or p.shape[0] != shape[axis]:
            raise UnsupportedAttribute(
                f"scale/zero point of shape {p.shape} is neither per tensor nor per axis {axis} of {shape}")
    return axis


def _reject_blocked(attrs) -> None:
    if attrs.get("block_size", 0) > 0:
        raise UnsupportedAttribute("blocked quantization (block_size > 0) is not supported")
