"""Pooling: N-d MaxPool and AveragePool (pads, strides, dilations, ceil_mode), the global pools, and a ReduceMean
or ReduceMax over exactly the spatial axes (PyTorch's `x.mean([2, 3])`, `x.mean(dim=2)` of a 1-D map) as the global
pool it is."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import Node
from .common import pad_spatial, resolve_auto_pad, windows
from .registry import NoAttrs, UnsupportedAttribute, kernel, onnx_importer
from .shape import ReshapeAttrs


@dataclass(frozen=True)
class PoolAttrs:
    kernel_shape: tuple[int, ...]
    strides: tuple[int, ...]
    pads: tuple[int, ...]  # all begins, then all ends
    dilations: tuple[int, ...]
    ceil_mode: bool = False
    count_include_pad: bool = False  # AveragePool only


def output_size(size: int, k: int, stride: int, dilation: int, pad_begin: int, pad_end: int, ceil_mode: bool) -> int:
    """Number of windows along one spatial axis, by the ONNX rule."""
    room = size + pad_begin + pad_end - ((k - 1) * dilation + 1)
    if not ceil_mode:
        return room // stride + 1
    out = -(-room // stride) + 1
    # ceil_mode may add a window only if it starts inside the input or the begin padding.
    return out - 1 if (out - 1) * stride >= size + pad_begin else out


def pool_windows(a: PoolAttrs, x: np.ndarray, pad_value, overhang_value) -> np.ndarray:
    """Windows N,C,*O,*K of `x` padded with `pad_value`.

    Where ceil_mode lets the last window run past the end padding, the overhang reads `overhang_value`.
    """
    n = len(a.kernel_shape)
    sizes = x.shape[x.ndim - n :]
    out, overhang = [], []
    for i, (size, k, s, d) in enumerate(zip(sizes, a.kernel_shape, a.strides, a.dilations)):
        o = output_size(size, k, s, d, a.pads[i], a.pads[n + i], a.ceil_mode)
        out.append(o)
        overhang.append(max((o - 1) * s + (k - 1) * d + 1 - (size + a.pads[i] + a.pads[n + i]), 0))
    xp = pad_spatial(pad_spatial(x, a.pads, pad_value), (0,) * n + tuple(overhang), overhang_value)
    win = windows(xp, a.kernel_shape, a.strides, a.dilations)
    # Padding wider than a window can leave room for windows past the last one ONNX counts.
    return win[(slice(None),) * (x.ndim - n) + tuple(slice(o) for o in out)]


def _lowest(dtype: np.dtype):
    # Finite, so that a window over padding only yields the lowest value (as onnxruntime), not -inf.
    return np.finfo(dtype).min if np.issubdtype(dtype, np.floating) else np.iinfo(dtype).min


@kernel("MaxPool", PoolAttrs)
def max_pool(a: PoolAttrs, x: np.ndarray) -> np.ndarray:
    """Maximum over each window; padding never wins. x: N,C,*S."""
    n = len(a.kernel_shape)
    low = _lowest(x.dtype)
    return pool_windows(a, x, low, low).max(axis=tuple(range(-n, 0)))


@kernel("AveragePool", PoolAttrs)
def average_pool(a: PoolAttrs, x: np.ndarray) -> np.ndarray:
    """Mean over each window. The divisor counts the input elements in the window, plus its explicit
    padding when count_include_pad; never the ceil_mode overhang. x: N,C,*S."""
    n = len(a.kernel_shape)
    axes = tuple(range(-n, 0))
    sums = pool_windows(a, x, 0, 0).sum(axis=axes)
    inside = np.ones(x.shape[x.ndim - n :], x.dtype)
    counts = pool_windows(a, inside, 1 if a.count_include_pad else 0, 0).sum(axis=axes)
    # A window over padding only has sum 0 and count 0; it averages to 0, as in onnxruntime.
    return (sums / np.maximum(counts, 1)).astype(x.dtype)


@onnx_importer("MaxPool", "AveragePool")
def import_pool(node, ctx) -> list[Node]:
    attrs = ctx.attrs(node)
    if node.op_type == "MaxPool":
        if len(node.output) > 1 and node.output[1]:
            raise UnsupportedAttribute("the Indices output of MaxPool is not supported")
        if attrs.get("storage_order", 0):
            raise UnsupportedAttribute("storage_order=1 (column-major Indices) is not supported")
    kshape = tuple(attrs["kernel_shape"])
    n = len(kshape)
    strides = tuple(attrs.get("strides", (1,) * n))
    dilations = tuple(attrs.get("dilations", (1,) * n))
    auto_pad = attrs.get("auto_pad", "NOTSET")
    in_spatial = ctx.shape(node.input[0])[2:]
    pads = resolve_auto_pad(auto_pad, in_spatial, kshape, strides, dilations, attrs.get("pads"))
    # ceil_mode applies to the resolved pads: SAME_* pads make the size ceil(in/stride) either way. For VALID
    # this follows onnxruntime and ONNX shape inference, not the spec's prose (which ignores ceil_mode there).
    ceil_mode = bool(attrs.get("ceil_mode", 0))
    for i, (size, k, s, d) in enumerate(zip(in_spatial, kshape, strides, dilations)):
        if output_size(size, k, s, d, pads[i], pads[n + i], ceil_mode) < 1:
            raise UnsupportedAttribute(f"the pooling window is larger than the padded input along spatial axis {i}")
    count_include_pad = bool(attrs.get("count_include_pad", 0))
    pool_attrs = PoolAttrs(kshape, strides, pads, dilations, ceil_mode, count_include_pad)
    return [Node(ctx.node_name(node), node.op_type, (node.input[0],), (node.output[0],), pool_attrs)]


@kernel("GlobalAveragePool")
def global_average_pool(_: NoAttrs, x: np.ndarray) -> np.ndarray:
    """Mean over all spatial axes, kept as size-1 axes: N,C,*S -> N,C,1,...,1."""
    return x.mean(axis=tuple(range(2, x.ndim)), keepdims=True).astype(x.dtype)


@kernel("GlobalMaxPool")
def global_max_pool(_: NoAttrs, x: np.ndarray) -> np.ndarray:
    """Maximum over all spatial axes, kept as size-1 axes: N,C,*S -> N,C,1,...,1."""
    return x.max(axis=tuple(range(2, x.ndim)), keepdims=True)


@onnx_importer("GlobalAveragePool", "GlobalMaxPool")
def import_global_pool(node, ctx) -> list[Node]:
    return [Node(ctx.node_name(node), node.op_type, (node.input[0],), (node.output[0],), NoAttrs())]


@onnx_importer("ReduceMean", "ReduceMax")
def import_spatial_reduce(node, ctx) -> list[Node]:
    """A reduction over every spatial axis and nothing else is a global pool (then a Reshape to N x C without
    keepdims); any other reduction runs on the host."""
    x, y = node.input[0], node.output[0]
    shape, attrs = ctx.shape(x), ctx.attrs(node)
    if ctx.opset >= 18:  # axes became an input
        given = ctx.require_constant(node, 1, "axes")
        axes = None if given is None else [int(a) for a in np.ravel(given)]
    else:
        axes = attrs.get("axes")
    if not axes and attrs.get("noop_with_empty_axes", 0):
        raise UnsupportedAttribute("an empty `axes` with noop_with_empty_axes is an identity")
    rank = len(shape)
    reduced = sorted(a % rank for a in axes) if axes else list(range(rank))
    if rank < 3 or reduced != list(range(2, rank)):
        raise UnsupportedAttribute(f"it reduces axes {reduced} of a rank-{rank} tensor; only a reduction over "
                                   "exactly the spatial axes (a global pool) runs on the accelerator")
    op = "GlobalAveragePool" if node.op_type == "ReduceMean" else "GlobalMaxPool"
    if attrs.get("keepdims", 1):
        return [Node(ctx.node_name(node), op, (x,), (y,), NoAttrs())]
    pooled = ctx.graph.fresh_name(f"{y}_pooled")
    return [Node(ctx.node_name(node), op, (x,), (pooled,), NoAttrs()),
            Node(ctx.node_name(node, "_flatten"), "Reshape", (pooled,), (y,), ReshapeAttrs(tuple(shape[:2])))]
