"""QONNX's Quant and BipolarQuant (as Brevitas exports them) imported as QuantDequant, a float fake-quantizer;
QONNX's Trunc (the bit-dropping step of a quantized average pool) as Trunc.

The frontend accepts these op types from the QONNX, FINN and older Brevitas custom domains and from the default
domain (where FINN's and Brevitas' exports write them).
Scale, zero point and bit width must be constants; scale and zero point are per tensor or per channel.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import Node
from .quantize import along
from .registry import UnsupportedAttribute, kernel, onnx_importer

ROUNDING = {"ROUND": np.rint, "ROUND_TO_ZERO": np.trunc, "FLOOR": np.floor, "CEIL": np.ceil}
MAX_BITS = 32


@dataclass(frozen=True)
class QuantDequantAttrs:
    """bits, signed, narrow: the integer grid (see `int_range`); rounding_mode: a key of ROUNDING (ROUND is
    half to even); axis: the channel axis of a per-channel scale or zero point (None: per tensor).

    bipolar: BipolarQuant, y = +scale where x >= 0 else -scale (bits is 1; signed, narrow and
    rounding_mode play no part).
    """

    bits: int
    signed: bool
    narrow: bool
    rounding_mode: str
    axis: int | None
    bipolar: bool = False

    def int_range(self) -> tuple[int, int]:
        """[-2^(b-1), 2^(b-1)-1] or [0, 2^b-1]; narrow drops the lowest signed / highest unsigned value."""
        if self.signed:
            return -(1 << (self.bits - 1)) + int(self.narrow), (1 << (self.bits - 1)) - 1
        return 0, (1 << self.bits) - 1 - int(self.narrow)


@kernel("QuantDequant", QuantDequantAttrs)
def quant_dequant(a: QuantDequantAttrs, x, scale, zeropt=None) -> np.ndarray:
    """y = (clip(round(x / scale + zeropt), lo, hi) - zeropt) * scale in x's type; bipolar: where(x >= 0, s, -s)."""
    s = along(scale, a.axis, x.ndim).astype(x.dtype)
    if a.bipolar:
        return np.where(x >= 0, s, -s).astype(x.dtype)
    z = np.zeros((), x.dtype) if zeropt is None else along(zeropt, a.axis, x.ndim).astype(x.dtype)
    lo, hi = a.int_range()
    q = np.clip(ROUNDING[a.rounding_mode](x / s + z), lo, hi)
    return ((q - z) * s).astype(x.dtype)


@onnx_importer("Quant")
def import_quant(node, ctx) -> list[Node]:
    attrs = ctx.attrs(node)
    mode = _rounding_mode(attrs, "ROUND")
    bitwidth = ctx.require_constant(node, 3, "bitwidth")
    if bitwidth is None:
        raise UnsupportedAttribute("the bitwidth input is missing")
    qattrs = QuantDequantAttrs(
        _bits(bitwidth),
        bool(attrs.get("signed", 1)),
        bool(attrs.get("narrow", 0)),
        mode,
        _channel_axis(ctx, node, (1, 2)),
    )
    return [Node(ctx.node_name(node), "QuantDequant", tuple(node.input[:3]), (node.output[0],), qattrs)]


@onnx_importer("BipolarQuant")
def import_bipolar_quant(node, ctx) -> list[Node]:
    qattrs = QuantDequantAttrs(1, True, False, "ROUND", _channel_axis(ctx, node, (1,)), bipolar=True)
    return [Node(ctx.node_name(node), "QuantDequant", tuple(node.input[:2]), (node.output[0],), qattrs)]


def _rounding_mode(attrs: dict, default: str) -> str:
    """The node's rounding_mode (a key of ROUNDING), upper-cased as QONNX compares it."""
    mode = str(attrs.get("rounding_mode", default)).upper()
    if mode not in ROUNDING:
        raise UnsupportedAttribute(f"rounding_mode {mode} is not supported (only {', '.join(ROUNDING)})")
    return mode


def _bits(bitwidth: np.ndarray) -> int:
    """The bit width as an int; QONNX allows a float input as long as it holds a whole number."""
    values = np.ravel(bitwidth)
    if values.size != 1 or not float(values[0]).is_integer() or not 1 <= values[0] <= MAX_BITS:
        raise UnsupportedAttribute(f"bitwidth must be one whole number in 1..{MAX_BITS}, got {values.tolist()}")
    return int(values[0])


def _channel_axis(ctx, node, indices: tuple[int, ...]) -> int | None:
    """The one axis of x along which the constant inputs at `indices` vary (None when all hold one value).

    QONNX parameters broadcast numpy-style against x, e.g. [C, 1, 1, 1] for a weight, [1, C, 1, 1] for
    an activation.
    """
    shape = ctx.shape(node.input[0])
    axes = set()
    for index in indices:
        value = ctx.require_constant(node, index, "scale" if index == 1 else "zeropt")
        if value is None or value.size == 1:
            continue
        offset = len(shape) - value.ndim
        varying = [offset + i for i, d in enumerate(value.shape) if d != 1]
        if offset < 0 or len(varying) != 1 or value.size != shape[varying[0]]:
            raise UnsupportedAttribute(f"input {index} of shape {value.shape} is neither per tensor nor per "
                                       f"channel of x {shape}")
        axes.add(varying[0])
    if len(axes) > 1:
        raise UnsupportedAttribute(f"scale and zeropt vary along different axes {sorted(axes)}")
    return axes.pop() if axes else None


@dataclass(frozen=True)
class TruncAttrs:
    """QONNX Trunc: drop the low bits of a quantized value. rounding_mode: a key of ROUNDING (QONNX's default
    is FLOOR). Version 1 (5 inputs) keeps the input scale and does not clamp; version 2 (6 inputs, with an
    output scale) shifts by log2(out_scale / scale) and clamps to the `out_bits`, `signed`, `narrow` range."""

    rounding_mode: str
    out_bits: int
    signed: bool
    narrow: bool
    rescaled: bool  # version 2

    def int_range(self) -> tuple[int, int]:
        return QuantDequantAttrs(self.out_bits, self.signed, self.narrow, self.rounding_mode, None).int_range()


@kernel("Trunc", TruncAttrs)
def trunc(a: TruncAttrs, x, scale, zeropt, in_bits, *rest) -> np.ndarray:
    """q = round(x / scale + zeropt) (half to even); v1: y = (R(q / 2^(in_bits - out_bits)) - zeropt) * scale;
    v2: t = 2^round(log2(out_scale / scale)), y = (R(clip(q / t)) - zeropt / t) * out_scale."""
    q = np.round(x / scale + zeropt)
    rounding = ROUNDING[a.rounding_mode]
    if not a.rescaled:
        step = np.float32(2.0) ** (np.float32(in_bits) - np.float32(a.out_bits))
        return ((rounding(q / step) - zeropt) * scale).astype(x.dtype)
    out_scale = rest[0]
    step = np.float32(2.0) ** np.round(np.log2(out_scale / scale))
    lo, hi = a.int_range()
    return ((rounding(np.clip(q / step, lo, hi)) - zeropt / step) * out_scale).astype(x.dtype)


@onnx_importer("Trunc")
def import_trunc(node, ctx) -> list[Node]:
    attrs = ctx.attrs(node)
    mode = _rounding_mode(attrs, "FLOOR")
    if len(node.input) not in (5, 6):
        raise UnsupportedAttribute(f"Trunc takes 5 inputs (version 1) or 6 (version 2), not {len(node.input)}")
    rescaled = len(node.input) == 6
    for index in range(1, len(node.input)):
        value = ctx.require_constant(node, index, "a Trunc parameter")
        if value is None or value.size != 1:
            raise UnsupportedAttribute(f"input {index} must be one constant value (per-tensor truncation)")
    out_bits = _bits(ctx.constant(node.input[-1]))
    qattrs = TruncAttrs(mode, out_bits, bool(attrs.get("signed", 1)), bool(attrs.get("narrow", 0)), rescaled)
    inputs = tuple(node.input[:4]) + ((node.input[4],) if rescaled else ())
    return [Node(ctx.node_name(node), "Trunc", inputs, (node.output[0],), qattrs)]
