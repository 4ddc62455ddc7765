"""Elementwise arithmetic with numpy broadcasting: Add, Sub, Mul, Div and the variadic Max, Min, Sum, Mean."""
from __future__ import annotations

from functools import reduce

import numpy as np

from ..ir import Node
from .registry import NoAttrs, UnsupportedAttribute, kernel, onnx_importer
from .shape import reshaped


@kernel("Add")
def add(_: NoAttrs, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b."""
    return np.add(a, b)


@kernel("Sub")
def sub(_: NoAttrs, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a - b."""
    return np.subtract(a, b)


@kernel("Mul")
def mul(_: NoAttrs, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a * b."""
    return np.multiply(a, b)


@kernel("Div")
def div(_: NoAttrs, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a / b; integers divide truncating toward zero, as C (and onnxruntime) do."""
    if np.issubdtype(a.dtype, np.integer):
        # a - fmod(a, b) is an exact multiple of b, so the floor division below is exact.
        return np.floor_divide(a - np.fmod(a, b), b)
    return np.divide(a, b)


@kernel("Max")
def maximum(_: NoAttrs, *xs: np.ndarray) -> np.ndarray:
    """Elementwise maximum of all inputs."""
    return reduce(np.maximum, xs)


@kernel("Min")
def minimum(_: NoAttrs, *xs: np.ndarray) -> np.ndarray:
    """Elementwise minimum of all inputs."""
    return reduce(np.minimum, xs)


@kernel("Sum")
def total(_: NoAttrs, *xs: np.ndarray) -> np.ndarray:
    """Elementwise sum of all inputs."""
    return reduce(np.add, xs)


@kernel("Mean")
def mean(_: NoAttrs, *xs: np.ndarray) -> np.ndarray:
    """Elementwise mean of all inputs."""
    return (reduce(np.add, xs) / len(xs)).astype(xs[0].dtype)


@onnx_importer("Add", "Sub", "Mul", "Div")
def import_binary(node, ctx) -> list[Node]:
    a, b = node.input
    attrs = ctx.attrs(node)
    extra: list[Node] = []
    # Opset < 7 aligns b with a starting at `axis` (numpy broadcasting aligns trailing axes instead).
    if ctx.opset < 7 and attrs.get("broadcast", 0) and "axis" in attrs:

        rank_a, shape_b = len(ctx.shape(a)), ctx.shape(b)
        axis = attrs["axis"] + rank_a if attrs["axis"] < 0 else attrs["axis"]
        trailing = rank_a - axis - len(shape_b)
        if axis < 0 or trailing < 0:
            raise UnsupportedAttribute(f"broadcast axis {attrs['axis']} does not fit shapes {ctx.shape(a)}, {shape_b}")
        b, extra = reshaped(ctx, node, b, shape_b + (1,) * trailing)
    return extra + [Node(ctx.node_name(node), node.op_type, (a, b), (node.output[0],), NoAttrs())]


@onnx_importer("Max", "Min", "Sum", "Mean")
def import_variadic(node, ctx) -> list[Node]:
    return [Node(ctx.node_name(node), node.op_type, tuple(node.input), (node.output[0],), NoAttrs())]
