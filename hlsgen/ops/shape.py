"""Data movement and layout: Reshape (also from Flatten, Squeeze, Unsqueeze), Transpose, Concat, Pad,
Identity, Dropout, Softmax, Interleave (a transposed convolution's phase maps woven together), Slice (also
from Split), Gather of constant indices; and Constant, which becomes a graph constant rather than a node."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..ir import Node
from .registry import NoAttrs, UnsupportedAttribute, kernel, onnx_importer


@dataclass(frozen=True)
class ReshapeAttrs:
    shape: tuple[int, ...]  # fully resolved: no 0 or -1 placeholders


@dataclass(frozen=True)
class TransposeAttrs:
    perm: tuple[int, ...]


@dataclass(frozen=True)
class ConcatAttrs:
    axis: int  # non-negative


@dataclass(frozen=True)
class BlockAttrs:
    blocksize: int
    mode: str = "DCR"  # DepthToSpace: DCR (depth-column-row, the default) or CRD (column-row-depth)


@dataclass(frozen=True)
class SliceAttrs:
    starts: tuple[int, ...]  # every axis, resolved: 0 <= start < size
    steps: tuple[int, ...]  # positive
    shape: tuple[int, ...]  # the output's


@dataclass(frozen=True)
class GatherAttrs:
    axis: int  # non-negative
    indices: tuple[int, ...]  # non-negative; the output keeps the axis (a scalar index is a Gather + Reshape)


@dataclass(frozen=True)
class InterleaveAttrs:
    strides: tuple[int, ...]  # per spatial axis
    shape: tuple[int, ...]  # the output's spatial sizes

    @property
    def map_strides(self) -> tuple[int, int]:
        """(rows, columns) of the strides as a map stores them (a 1-D map is one row)."""
        return tuple(self.strides) if len(self.strides) == 2 else (1, *self.strides)


PAD_MODES = ("constant", "reflect", "edge")


@dataclass(frozen=True)
class PadAttrs:
    pads: tuple[int, ...]  # every axis: all begins, then all ends; never negative
    mode: str = "constant"  # one of PAD_MODES
    value: float = 0.0  # constant mode only


@dataclass(frozen=True)
class SoftmaxAttrs:
    axes: tuple[int, ...]  # non-negative; softmax is taken jointly over them


# ---- kernels -------------------------------------------------------------------------------
@kernel("Reshape", ReshapeAttrs)
def reshape(a: ReshapeAttrs, x: np.ndarray) -> np.ndarray:
    """x with the same elements in row-major order and shape `a.shape`."""
    return x.reshape(a.shape)


@kernel("Transpose", TransposeAttrs)
def transpose(a: TransposeAttrs, x: np.ndarray) -> np.ndarray:
    """Output axis i is input axis perm[i]."""
    return np.transpose(x, a.perm)


@kernel("Concat", ConcatAttrs)
def concat(a: ConcatAttrs, *xs: np.ndarray) -> np.ndarray:
    """The inputs joined along `axis`."""
    return np.concatenate(xs, axis=a.axis)


@kernel("Pad", PadAttrs)
def pad(a: PadAttrs, x: np.ndarray) -> np.ndarray:
    """x widened on every axis; `reflect` mirrors without repeating the edge, `edge` repeats it."""
    widths = [(a.pads[i], a.pads[i + x.ndim]) for i in range(x.ndim)]
    if a.mode == "constant":
        return np.pad(x, widths, mode="constant", constant_values=a.value)
    return np.pad(x, widths, mode=a.mode)


@kernel("Identity")
def identity(_: NoAttrs, x: np.ndarray) -> np.ndarray:
    """x."""
    return x


@kernel("Dropout")
def dropout(_: NoAttrs, x: np.ndarray) -> np.ndarray:
    """x: dropout does nothing at inference."""
    return x


@kernel("Softmax", SoftmaxAttrs)
def softmax(a: SoftmaxAttrs, x: np.ndarray) -> np.ndarray:
    """exp(x) / sum(exp(x)) over `axes`, shifted by the maximum so that exp cannot overflow."""
    e = np.exp(x - x.max(axis=a.axes, keepdims=True))
    return e / e.sum(axis=a.axes, keepdims=True)


@kernel("Interleave", InterleaveAttrs)
def interleave(a: InterleaveAttrs, *phases: np.ndarray) -> np.ndarray:
    """Phase maps woven into one: output pixel (s_y * u + dy, s_x * v + dx) is pixel (u, v) of input
    dy * s_x + dx (the phases in row-major order over the strides), a transposed convolution's output."""
    n, c = phases[0].shape[:2]
    y = np.zeros((n, c) + tuple(a.shape), phases[0].dtype)
    for phase, offset in zip(phases, np.ndindex(*a.strides)):
        y[(slice(None), slice(None)) + tuple(slice(o, None, s) for o, s in zip(offset, a.strides))] = phase
    return y


@kernel("DepthToSpace", BlockAttrs)
def depth_to_space(a: BlockAttrs, x: np.ndarray) -> np.ndarray:
    """Channels moved into blocks of pixels: DCR reads output channel c of block offset (dy, dx) from input
    channel (dy * b + dx) * C + c, CRD from c * b * b + dy * b + dx."""
    n, c, h, w = x.shape
    b = a.blocksize
    if a.mode == "DCR":
        y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        y = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    return y.reshape(n, c // (b * b), h * b, w * b)


@kernel("SpaceToDepth", BlockAttrs)
def space_to_depth(a: BlockAttrs, x: np.ndarray) -> np.ndarray:
    """Blocks of pixels moved into channels: output channel (dy * b + dx) * C + c is input channel c at
    pixel (y * b + dy, x * b + dx)."""
    n, c, h, w = x.shape
    b = a.blocksize
    y = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    return y.reshape(n, c * b * b, h // b, w // b)


@kernel("Slice", SliceAttrs)
def slice_(a: SliceAttrs, x: np.ndarray) -> np.ndarray:
    """Every `steps`-th element of each axis from `starts`, `shape` of them."""
    return x[tuple(slice(s, s + n * t, t) for s, t, n in zip(a.starts, a.steps, a.shape))]


@kernel("Gather", GatherAttrs)
def gather(a: GatherAttrs, x: np.ndarray) -> np.ndarray:
    """Element `indices[j]` of `axis` at position j (channels picked and reordered: a channel shuffle)."""
    return np.take(x, np.asarray(a.indices, np.int64), axis=a.axis)


# ---- helpers for importers -------------------------------------------------------------------
def reshaped(ctx, node, name: str, shape: tuple[int, ...]) -> tuple[str, list[Node]]:
    """Tensor `name` seen with `shape`: a reshaped copy of a constant, else the output of a new Reshape node.

    Returns the tensor to read and the nodes to add before `node`.
    """
    out = ctx.graph.fresh_name(f"{name}_reshaped")
    value = ctx.constant(name)
    if value is not None:
        return ctx.graph.add_constant(out, value.reshape(shape)), []
    return out, [Node(ctx.node_name(node, "_reshape"), "Reshape", (name,), (out,), ReshapeAttrs(tuple(shape)))]


def _axis(axis: int, rank: int) -> int:
    """`axis` in 0..rank-1 (ONNX allows -rank..-1 too)."""
    if not -rank <= axis < rank:

        raise UnsupportedAttribute(f"axis {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def _axes_operand(node, ctx) -> tuple[int, ...] | None:
    """The `axes` of Squeeze/Unsqueeze: an attribute before opset 13, an optional constant input from 13."""
    if ctx.opset < 13:
        axes = ctx.attrs(node).get("axes")
    else:
        axes = ctx.require_constant(node, 1, "axes")
    return None if axes is None else tuple(int(v) for v in np.ravel(axes))


def _reshape_node(node, ctx, shape) -> list[Node]:
    attrs = ReshapeAttrs(tuple(int(d) for d in shape))
    return [Node(ctx.node_name(node), "Reshape", (node.input[0],), (node.output[0],), attrs)]


# ---- importers -----------------------------------------------------------------------------
@onnx_importer("Reshape")
def import_reshape(node, ctx) -> list[Node]:

    in_shape = ctx.shape(node.input[0])
    requested = [int(d) for d in ctx.require_constant(node, 1, "shape")]
    # 0 copies the input dimension unless allowzero (opset >= 14) makes it a literal zero.
    copy_zeros = not ctx.attrs(node).get("allowzero", 0)
    dims = [in_shape[i] if d == 0 and copy_zeros and i < len(in_shape) else d for i, d in enumerate(requested)]
    if dims.count(-1) > 1:
        raise UnsupportedAttribute(f"shape {requested} has more than one -1")
    known = math.prod(d for d in dims if d != -1)
    size = math.prod(in_shape)
    if -1 in dims and known > 0:
        dims[dims.index(-1)] = size // known
    if math.prod(dims) != size or min(dims, default=0) < 0:
        raise UnsupportedAttribute(f"cannot reshape {list(in_shape)} to {requested}")
    return _reshape_node(node, ctx, dims)


@onnx_importer("Flatten")
def import_flatten(node, ctx) -> list[Node]:
    in_shape = ctx.shape(node.input[0])
    axis = ctx.attrs(node).get("axis", 1)
    # Flatten's axis may equal the rank (everything goes to the first dimension).
    axis = _axis(axis, len(in_shape) + 1) if axis >= 0 else _axis(axis, len(in_shape))
    return _reshape_node(node, ctx, (math.prod(in_shape[:axis]), math.prod(in_shape[axis:])))


@onnx_importer("Squeeze")
def import_squeeze(node, ctx) -> list[Node]:

    in_shape = ctx.shape(node.input[0])
    axes = _axes_operand(node, ctx)
    if axes is None:
        drop = {i for i, d in enumerate(in_shape) if d == 1}
    else:
        drop = {_axis(a, len(in_shape)) for a in axes}
    wide = [i for i in sorted(drop) if in_shape[i] != 1]
    if wide:
        raise UnsupportedAttribute(f"cannot squeeze axis {wide[0]} of size {in_shape[wide[0]]}")
    return _reshape_node(node, ctx, [d for i, d in enumerate(in_shape) if i not in drop])


@onnx_importer("Unsqueeze")
def import_unsqueeze(node, ctx) -> list[Node]:

    in_shape = ctx.shape(node.input[0])
    axes = _axes_operand(node, ctx)
    if axes is None:
        raise UnsupportedAttribute("Unsqueeze needs axes")
    rank = len(in_shape) + len(axes)
    new = {_axis(a, rank) for a in axes}
    if len(new) != len(axes):
        raise UnsupportedAttribute(f"repeated axes {list(axes)}")
    rest = iter(in_shape)
    return _reshape_node(node, ctx, [1 if i in new else next(rest) for i in range(rank)])


@onnx_importer("Transpose")
def import_transpose(node, ctx) -> list[Node]:
    rank = len(ctx.shape(node.input[0]))
    perm = tuple(int(p) for p in ctx.attrs(node).get("perm", range(rank - 1, -1, -1)))
    return [Node(ctx.node_name(node), "Transpose", (node.input[0],), (node.output[0],), TransposeAttrs(perm))]


@onnx_importer("DepthToSpace", "SpaceToDepth")
def import_block_move(node, ctx) -> list[Node]:
    attrs, shape = ctx.attrs(node), ctx.shape(node.input[0])
    b, mode = int(attrs["blocksize"]), attrs.get("mode", "DCR")
    if isinstance(mode, bytes):
        mode = mode.decode()
    if len(shape) != 4 or b < 1 or mode not in ("DCR", "CRD") or (node.op_type == "DepthToSpace" and shape[1] % (b * b)) \
            or (node.op_type == "SpaceToDepth" and (shape[2] % b or shape[3] % b)):
        raise UnsupportedAttribute(f"blocksize {b} (mode {mode}) does not divide the 4-D input {list(shape)}")
    if node.op_type == "SpaceToDepth":
        mode = "DCR"
    return [Node(ctx.node_name(node), node.op_type, (node.input[0],), (node.output[0],), BlockAttrs(b, mode))]


@onnx_importer("Slice")
def import_slice(node, ctx) -> list[Node]:
    """A Slice of constant starts, ends, axes and steps (the opset-10+ inputs, or the opset-1 attributes)."""
    shape = ctx.shape(node.input[0])
    rank = len(shape)
    if ctx.opset < 10:
        a = ctx.attrs(node)
        starts, ends, axes, steps = a["starts"], a["ends"], a.get("axes", range(len(a["starts"]))), [1] * len(a["starts"])
    else:
        values = [ctx.require_constant(node, i, what) if i < len(node.input) and node.input[i] else None
                  for i, what in ((1, "starts"), (2, "ends"), (3, "axes"), (4, "steps"))]
        starts, ends = (np.ravel(v).tolist() for v in values[:2])
        axes = range(len(starts)) if values[2] is None else np.ravel(values[2]).tolist()
        steps = [1] * len(starts) if values[3] is None else np.ravel(values[3]).tolist()
    first, step, count = [0] * rank, [1] * rank, list(shape)
    for axis, start, end, st in zip(axes, starts, ends, steps):
        axis = _axis(int(axis), rank)
        if st <= 0:
            raise UnsupportedAttribute(f"step {st} on axis {axis}: hlsgen slices forward only")
        lo, hi, _ = slice(int(start), int(end)).indices(shape[axis])
        first[axis], step[axis], count[axis] = lo, int(st), max(0, -(-(hi - lo) // int(st)))
    if 0 in count:
        raise UnsupportedAttribute(f"the slice of {list(shape)} is empty")
    return [Node(ctx.node_name(node), "Slice", (node.input[0],), (node.output[0],),
                 SliceAttrs(tuple(first), tuple(step), tuple(count)))]


@onnx_importer("Split")
def import_split(node, ctx) -> list[Node]:
    """A Split is one Slice per output (the sizes from the `split` input or attribute, else equal parts)."""
    shape = ctx.shape(node.input[0])
    axis = _axis(ctx.attrs(node).get("axis", 0), len(shape))
    sizes = ctx.attrs(node).get("split") if ctx.opset < 13 else ctx.require_constant(node, 1, "split")
    if sizes is None:
        parts = len(node.output)
        sizes = [-(-shape[axis] // parts)] * (parts - 1)
        sizes.append(shape[axis] - sum(sizes))
    sizes = [int(v) for v in np.ravel(sizes)]
    if len(sizes) != len(node.output) or sum(sizes) != shape[axis] or min(sizes) <= 0:
        raise UnsupportedAttribute(f"split {sizes} does not cut axis {axis} of {list(shape)} into {len(node.output)}")
    nodes, first = [], 0
    for i, (out, size) in enumerate(zip(node.output, sizes)):
        starts = tuple(first if d == axis else 0 for d in range(len(shape)))
        count = tuple(size if d == axis else n for d, n in enumerate(shape))
        nodes.append(Node(ctx.node_name(node, f"_{i}" if i else ""), "Slice", (node.input[0],), (out,),
                          SliceAttrs(starts, (1,) * len(shape), count)))
        first += size
    return nodes


@onnx_importer("Gather")
def import_gather(node, ctx) -> list[Node]:
    """A Gather of constant indices from a computed tensor (constant data is folded before import)."""
    shape = ctx.shape(node.input[0])
    axis = _axis(ctx.attrs(node).get("axis", 0), len(shape))
    indices = np.asarray(ctx.require_constant(node, 1, "indices"), np.int64)
    if indices.ndim > 1:
        raise UnsupportedAttribute(f"indices of rank {indices.ndim}: hlsgen gathers a scalar or a list")
    if indices.size == 0 or indices.min() < -shape[axis] or indices.max() >= shape[axis]:
        raise UnsupportedAttribute(f"indices {indices.tolist()} are out of range for axis {axis} of {list(shape)}")
    attrs = GatherAttrs(axis, tuple(int(i) % shape[axis] for i in np.ravel(indices)))
    if indices.ndim == 1:
        return [Node(ctx.node_name(node), "Gather", (node.input[0],), (node.output[0],), attrs)]
    kept = ctx.graph.fresh_name(f"{node.output[0]}_kept")
    return [Node(ctx.node_name(node), "Gather", (node.input[0],), (kept,), attrs),
            Node(ctx.node_name(node, "_squeeze"), "Reshape", (kept,), (node.output[0],),
                 ReshapeAttrs(tuple(n for d, n in enumerate(shape) if d != axis)))]


@onnx_importer("Concat")
def import_concat(node, ctx) -> list[Node]:
    axis = _axis(ctx.attrs(node)["axis"], len(ctx.shape(node.input[0])))
    return [Node(ctx.node_name(node), "Concat", tuple(node.input), (node.output[0],), ConcatAttrs(axis))]


@onnx_importer("Pad")
def import_pad(node, ctx) -> list[Node]:

    attrs = ctx.attrs(node)
    rank = len(ctx.shape(node.input[0]))
    mode = attrs.get("mode", "constant")
    if mode not in PAD_MODES:
        raise UnsupportedAttribute(f"mode {mode!r} is not supported (only {', '.join(PAD_MODES)})")
    if ctx.opset < 11:
        pads = [int(p) for p in attrs["pads"]]
        value = attrs.get("value", 0.0)
    else:
        pads = [int(p) for p in ctx.require_constant(node, 1, "pads")]
        constant_value = ctx.require_constant(node, 2, "constant_value")
        value = 0.0 if constant_value is None else constant_value.item()
        axes = ctx.require_constant(node, 3, "axes")  # opset 18: pads cover only these axes
        if axes is not None:
            pads = _pads_for_all_axes(pads, [_axis(int(a), rank) for a in axes], rank)
    if len(pads) != 2 * rank:
        raise UnsupportedAttribute(f"{len(pads)} pads for a rank-{rank} input")
    if min(pads, default=0) < 0:
        raise UnsupportedAttribute("negative pads (cropping) are not supported")
    pad_attrs = PadAttrs(tuple(pads), mode, value)
    return [Node(ctx.node_name(node), "Pad", (node.input[0],), (node.output[0],), pad_attrs)]


def _pads_for_all_axes(pads: list[int], axes: list[int], rank: int) -> list[int]:
    """Expand pads given for `axes` only (their begins, then their ends) to every axis."""
    full = [0] * (2 * rank)
    for i, axis in enumerate(axes):
        full[axis], full[rank + axis] = pads[i], pads[len(axes) + i]
    return full


@onnx_importer("Identity")
def import_identity(node, ctx) -> list[Node]:
    return [Node(ctx.node_name(node), "Identity", (node.input[0],), (node.output[0],), NoAttrs())]


@onnx_importer("Dropout")
def import_dropout(node, ctx) -> list[Node]:

    training = ctx.require_constant(node, 2, "training_mode")  # opset >= 12
    if training is not None and bool(training):
        raise UnsupportedAttribute("training_mode=True makes Dropout random; export the model in inference mode")
    if len(node.output) > 1 and node.output[1]:
        # At inference nothing is dropped, so the mask is known now: all true (all ones before opset 10).
        x = ctx.graph.tensors[node.input[0]]
        ctx.graph.add_constant(node.output[1], np.ones(x.shape, bool if ctx.opset >= 10 else x.dtype))
    return [Node(ctx.node_name(node), "Dropout", (node.input[0],), (node.output[0],), NoAttrs())]


# How each Constant attribute becomes an array (None: already a typed tensor).
_CONSTANT_ATTRS = {
    "value": None,
    "value_float": np.float32,
    "value_floats": np.float32,
    "value_int": np.int64,
    "value_ints": np.int64,
}


@onnx_importer("Constant")
def import_constant(node, ctx) -> list[Node]:

    attrs = ctx.attrs(node)
    key = next((k for k in _CONSTANT_ATTRS if k in attrs), None)
    if key is None:
        raise UnsupportedAttribute(f"only numeric dense constants are supported, not {', '.join(sorted(attrs))}")
    ctx.graph.add_constant(node.output[0], np.asarray(attrs[key], _CONSTANT_ATTRS[key]))
    return []


@onnx_importer("Softmax")
def import_softmax(node, ctx) -> list[Node]:
    rank = len(ctx.shape(node.input[0]))
    attrs = ctx.attrs(node)
    if ctx.opset < 13:
        # Before opset 13 Softmax flattens axes axis..rank-1 into one and normalizes over that.
        axes = tuple(range(_axis(attrs.get("axis", 1), rank), rank))
    else:
        axes = (_axis(attrs.get("axis", -1), rank),)
    return [Node(ctx.node_name(node), "Softmax", (node.input[0],), (node.output[0],), SoftmaxAttrs(axes))]
