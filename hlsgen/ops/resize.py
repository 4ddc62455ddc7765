"""Resize and Upsample: nearest neighbour by integer factors, every pixel repeated s_h x s_w times
(autoencoders, U-Nets, YOLO necks), and linear (FPNs, segmentation heads: torch's bilinear upsampling) by
integer or fractional factors (a head resized to the input's size: 65 -> 513).

ONNX picks source pixel `nearest_mode(transform(x))` for output pixel x. For an integer upscale most
combinations of coordinate_transformation_mode and nearest_mode pick floor(x / s), plain repetition; the
importer checks that the node's combination does so on every output pixel and refuses it otherwise, as it
refuses cubic, downscaling and fractional nearest factors. A linear Resize keeps its coordinate
transformation and its factors as exact fractions out / in (hlsgen.passes.linear_resize turns one by integer
factors into a nearest one and a depthwise Conv; the others interpolate: hlsgen.quant.int_ops.QResample);
a nearest Resize may also repeat its edge pixels `pads` times (an edge Pad after the upsampling, as that
pass's Conv reads it).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..ir import Node
from .registry import UnsupportedAttribute, kernel, onnx_importer


@dataclass(frozen=True)
class ResizeAttrs:
    scales: tuple[int | Fraction, ...]  # one factor per spatial axis (the axes after N and C): out / in, exact
    mode: str = "nearest"  # or "linear"
    transform: str = "asymmetric"  # ONNX's coordinate_transformation_mode (linear, or nearest by a fraction)
    pads: tuple[int, ...] = ()  # nearest: edge pixels repeated before, then after, every spatial axis (none: ())
    nearest: str = "floor"  # ONNX's nearest_mode (nearest by a fraction; by integer factors: plain repetition)


LINEAR_TRANSFORMS = ("half_pixel", "pytorch_half_pixel", "half_pixel_symmetric", "asymmetric", "align_corners")


@kernel("Resize", ResizeAttrs)
def resize(a: ResizeAttrs, x: np.ndarray) -> np.ndarray:
    """Nearest: output pixel (y, x) is input pixel (y // s_h, x // s_w), then the edges repeated `pads` times.
    Linear: ONNX's interpolation between the two source pixels around transform(y), clamped to the map.
    x: N,C,*S."""
    if a.mode == "linear":
        for i, s in enumerate(a.scales):
            weights = linear_weights(a.transform, x.shape[2 + i], s).astype(np.float32)
            x = np.moveaxis(np.tensordot(x, weights, axes=([2 + i], [1])), -1, 2 + i)
        return x.astype(np.float32)
    if any(int(s) != s for s in a.scales):  # by a fraction: each output pixel's source pixel
        for i, s in enumerate(a.scales):
            size = x.shape[2 + i]
            picks = [interpolation_source(nearest_steps(a.transform, a.nearest, size, s), size, o)[0]
                     for o in range(int(size * s))]
            x = np.take(x, picks, axis=2 + i)
        return x
    for i, s in enumerate(a.scales):
        x = np.repeat(x, s, axis=2 + i)
    if a.pads:
        n = len(a.scales)
        x = np.pad(x, [(0, 0), (0, 0)] + [(a.pads[i], a.pads[n + i]) for i in range(n)], mode="edge")
    return x


def resize_edge_pads(a: ResizeAttrs) -> tuple[int, int]:
    """The edge rows and columns a Resize of a map (rank 4) or of a 1-D signal (rank 3: columns) repeats before
    it: (0, 0) for none."""
    if not a.pads:
        return 0, 0
    return (a.pads[0], a.pads[1]) if len(a.scales) == 2 else (0, a.pads[0])


def first_row_repeat(a: ResizeAttrs, first_row: int) -> int:
    """Where the row repeat counter of output row `first_row` starts (a band may start inside a source row): its
    repeats of its source row so far, or minus the edge rows still to come before the map's first row."""
    first = first_row - resize_edge_pads(a)[0]
    up = a.scales[0] if len(a.scales) == 2 else 1
    return first % up if first >= 0 else first


def linear_weights(transform: str, size: int, scale: int | Fraction) -> np.ndarray:
    """[out, size]: the weight of input pixel j in output pixel o along one axis (ONNX's linear mode: the
    source coordinate clamped to [0, size - 1], between its floor and the next pixel)."""
    out = int(size * scale)
    orig = np.clip(_source_coordinate(transform, size, out, float(scale)), 0, size - 1)
    low = np.floor(orig).astype(np.int64)
    frac = orig - low
    weights = np.zeros((out, size))
    weights[np.arange(out), low] += 1 - frac
    weights[np.arange(out), np.minimum(low + 1, size - 1)] += frac
    return weights


def linear_steps(transform: str, size: int, scale: int | Fraction) -> tuple[int, int, int]:
    """(num, off, den): output pixel o of a linear Resize of `size` pixels by `scale` = p / q (out / in)
    interpolates at source coordinate (o * num + off) / den, exactly (before ONNX's clamp to the map)."""
    out = int(size * scale)
    p, q = Fraction(scale).numerator, Fraction(scale).denominator
    if transform == "align_corners":
        return (size - 1, 0, out - 1) if out > 1 else (0, 0, 1)
    if transform == "asymmetric":
        return q, 0, p
    if transform == "pytorch_half_pixel" and out == 1:
        return 0, 0, 1
    if transform in ("half_pixel", "pytorch_half_pixel", "half_pixel_symmetric"):  # symmetric = half_pixel here
        return 2 * q, q - p, 2 * p
    raise UnsupportedAttribute(f"coordinate_transformation_mode {transform!r} is not supported")


def nearest_steps(transform: str, nearest: str, size: int, scale: int | Fraction) -> tuple[int, int, int]:
    """(num, off, den) whose floor((o * num + off) / den), clamped to [0, size - 1], is the source pixel ONNX's
    nearest Resize picks for output pixel o (nearest_mode of the exact source coordinate)."""
    p, q = Fraction(scale).numerator, Fraction(scale).denominator
    num, off, den = (2 * q, q, 2 * p) if transform == "tf_half_pixel_for_nn" else linear_steps(transform, size, scale)
    if nearest == "floor":
        return num, off, den
    if nearest == "ceil":
        return num, off + den - 1, den
    if nearest == "round_prefer_ceil":  # floor(v + 1/2)
        return 2 * num, 2 * off + den, 2 * den
    if nearest == "round_prefer_floor":  # ceil(v - 1/2)
        return 2 * num, 2 * off + den - 1, 2 * den
    raise UnsupportedAttribute(f"nearest_mode {nearest!r} is not supported")


def interpolation_source(steps: tuple[int, int, int], size: int, o: int) -> tuple[int, int]:
    """(i, r): output pixel o reads source pixels i and i + 1 with weights den - r and r (the source coordinate
    clamped to [0, size - 1]: then r = 0)."""
    num, off, den = steps
    i, r = divmod(o * num + off, den)
    if i < 0:
        return 0, 0
    if i >= size - 1:
        return size - 1, 0
    return i, r


def interpolation_fields(a) -> dict[str, int]:
    """The interpolation counters' program fields of QResampleAttrs `a` (a 1-D map is one row: its row
    counter stays at row 0, weight den): per axis, source pixels per output pixel (num / den) and the first
    output pixel's offset off = i0 * den + r0 in [-den, den) (i0 = -1: before the map)."""
    steps = a.steps if len(a.steps) == 2 else ((0, 0, 1), *a.steps)
    fields = {}
    for axis, (num, off, den) in zip("yx", steps):
        if num > den or not -den <= off < den:
            raise UnsupportedAttribute(f"an interpolation that steps {num}/{den} source pixels per output pixel "
                                       "(only upsampling runs on the accelerator)")
        fields.update({f"l{axis}_num": num, f"l{axis}_den": den, f"l{axis}_off": off})
    return fields


def interpolation_matrix(steps: tuple[int, int, int], size: int, out: int, pick: bool = False) -> np.ndarray:
    """[out, size] integers: den times the weight of input pixel j in output pixel o (linear_weights, exact);
    `pick`: 1 for the source pixel i alone (a nearest Resize by nearest_steps)."""
    den = steps[2]
    weights = np.zeros((out, size), np.int64)
    for o in range(out):
        i, r = interpolation_source(steps, size, o)
        if pick:
            weights[o, i] = 1
            continue
        weights[o, i] += den - r
        if r:
            weights[o, i + 1] += r
    return weights


@onnx_importer("Upsample")
def import_upsample(node, ctx) -> list[Node]:
    attrs = ctx.attrs(node)
    scales = attrs.get("scales") if ctx.opset < 9 else ctx.require_constant(node, 1, "scales")
    return _import(node, ctx, attrs.get("mode", "nearest"), scales, None, "asymmetric", "floor")


@onnx_importer("Resize")
def import_resize(node, ctx) -> list[Node]:
    attrs = ctx.attrs(node)
    if ctx.opset < 11:  # Resize-10 is Upsample-9 under a new name
        return _import(node, ctx, attrs.get("mode", "nearest"), ctx.require_constant(node, 1, "scales"), None,
                       "asymmetric", "floor")
    scales = ctx.require_constant(node, 2, "scales")
    sizes = ctx.require_constant(node, 3, "sizes")
    rank = len(ctx.shape(node.input[0]))
    axes = [a % rank for a in attrs.get("axes", range(rank))]
    given = scales if scales is not None and scales.size else sizes
    if given is None:
        raise UnsupportedAttribute("neither scales nor sizes is given")
    full = np.ones(rank) if given is scales else np.array(ctx.shape(node.input[0]), np.float64)
    full[axes] = given
    if given is sizes:
        policy = attrs.get("keep_aspect_ratio_policy", "stretch")
        full = _keep_aspect_ratio(ctx.shape(node.input[0]), full, axes, policy)
    return _import(node, ctx, attrs.get("mode", "nearest"), full if given is scales else None,
                   full if given is sizes else None, attrs.get("coordinate_transformation_mode", "half_pixel"),
                   attrs.get("nearest_mode", "round_prefer_floor"))


def _keep_aspect_ratio(shape, sizes: np.ndarray, axes: list[int], policy: str) -> np.ndarray:
    """The output sizes of Resize-18's keep_aspect_ratio_policy: one scale for every listed axis."""
    if policy == "stretch":
        return sizes
    ratios = [sizes[a] / shape[a] for a in axes]
    scale = min(ratios) if policy == "not_larger" else max(ratios)
    out = np.array(shape, np.float64)
    for a in axes:
        out[a] = math.floor(shape[a] * scale + 0.5)
    return out


def _import(node, ctx, mode: str, scales, sizes, transform: str, nearest: str) -> list[Node]:
    mode = {"bilinear": "linear", "trilinear": "linear"}.get(mode, mode)  # Upsample-7's names
    if mode not in ("nearest", "linear"):
        raise UnsupportedAttribute(f"mode {mode!r} is not supported (only 'nearest' and 'linear' upsampling by "
                                   "integer factors)")
    if mode == "linear" and transform not in LINEAR_TRANSFORMS:
        raise UnsupportedAttribute(f"coordinate_transformation_mode {transform!r} of a linear Resize is not "
                                   f"supported (only {', '.join(LINEAR_TRANSFORMS)})")
    shape = ctx.shape(node.input[0])
    if len(shape) < 3:
        raise UnsupportedAttribute(f"a rank-{len(shape)} input has no spatial axes to upsample")
    if scales is not None:
        scales = np.asarray(scales, np.float64).reshape(-1)
        out = [math.floor(n * s) for n, s in zip(shape, scales)]
    else:
        out = [int(v) for v in np.asarray(sizes).reshape(-1)]
        scales = np.array([o / n for o, n in zip(out, shape)])
    if len(out) != len(shape):
        raise UnsupportedAttribute(f"{len(out)} scales or sizes for a rank-{len(shape)} input")
    if out[:2] != list(shape[:2]):
        raise UnsupportedAttribute("only the spatial axes may be resized, not the batch or channel axis")
    factors = []
    fractional = mode == "nearest" and any(o % n and o > n for o, n in zip(out[2:], shape[2:]))
    for axis in range(2, len(shape)):
        factor = out[axis] // shape[axis]
        if mode == "linear" and out[axis] >= shape[axis]:
            factors.append(_linear_factor(transform, shape[axis], out[axis], float(scales[axis]), axis - 2))
            continue
        if mode == "nearest" and out[axis] > shape[axis] and out[axis] % shape[axis]:  # by a fraction
            factors.append(_linear_factor(transform, shape[axis], out[axis], float(scales[axis]), axis - 2))
            _check_picks(transform, nearest, shape[axis], out[axis], float(scales[axis]), factors[-1], axis - 2)
            continue
        if out[axis] != factor * shape[axis] or factor < 1:
            raise UnsupportedAttribute(f"output size {out[axis]} of spatial axis {axis - 2} is not an integer "
                                       f"multiple of the input's {shape[axis]} (only upscaling is supported, by "
                                       "integer factors for nearest)")
        picked = _nearest_source(transform, nearest, shape[axis], out[axis], float(scales[axis]))
        if not np.array_equal(picked, np.arange(out[axis]) // factor):
            raise UnsupportedAttribute(f"coordinate_transformation_mode {transform!r} with nearest_mode {nearest!r} "
                                       f"does not repeat pixels for a {factor}x upscale (only combinations that do "
                                       "are supported)")
        factors.append(factor)
    attrs = ResizeAttrs(tuple(factors), "linear", transform) if mode == "linear" else \
        ResizeAttrs(tuple(factors), transform=transform, nearest=nearest) if fractional else ResizeAttrs(tuple(factors))
    return [Node(ctx.node_name(node), "Resize", (node.input[0],), (node.output[0],), attrs)]


def _check_picks(transform: str, nearest: str, size: int, out: int, scale: float, factor, axis: int) -> None:
    """A nearest Resize by a fraction picks its source pixels by exact counters (nearest_steps): refused where
    onnxruntime's float32 or the spec's float64 coordinates pick otherwise (a rounding tie decided by the
    floating point)."""
    steps = nearest_steps(transform, nearest, size, factor)
    exact = np.array([interpolation_source(steps, size, o)[0] for o in range(out)])
    for dtype in (np.float64, np.float32):
        picked = _nearest_pick(_source_coordinate(transform, size, out, scale, dtype), nearest, size)
        if not np.array_equal(picked, exact):
            raise UnsupportedAttribute(f"the nearest pixels of spatial axis {axis} ({size} -> {out}, "
                                       f"{transform}, {nearest}) depend on {np.dtype(dtype).name} rounding")


def _linear_factor(transform: str, size: int, out: int, scale: float, axis: int) -> int | Fraction:
    """out / size, an int when it is one: the scale ONNX's coordinate transformation then uses, unless the
    node's scales differ from it (floor(size * scale) = out for a scale that is not out / size)."""
    factor = Fraction(out, size)
    if transform != "align_corners" and abs(scale - float(factor)) > 1e-6 * float(factor):
        raise UnsupportedAttribute(f"scale {scale:g} of spatial axis {axis} is not its output size over its input "
                                   f"size ({out} / {size}): the interpolation would not be exact")
    return int(factor) if factor.denominator == 1 else factor


def _nearest_source(transform: str, nearest: str, size: int, out: int, scale: float) -> np.ndarray:
    """The input index ONNX's Resize reads for every output index along one axis (the spec's formulas)."""
    return _nearest_pick(_source_coordinate(transform, size, out, scale), nearest, size)


def _source_coordinate(transform: str, size: int, out: int, scale: float, dtype=np.float64) -> np.ndarray:
    """The input coordinate of every output index along one axis (coordinate_transformation_mode), computed in
    `dtype` (onnxruntime's float32, or float64)."""
    x, s, half, n, m = np.arange(out, dtype=dtype), dtype(scale), dtype(0.5), dtype(size), dtype(out)
    if transform in ("half_pixel", "pytorch_half_pixel"):
        orig = (x + half) / s - half if out > 1 or transform == "half_pixel" else np.zeros(out, dtype)
    elif transform == "half_pixel_symmetric":
        adjustment = m / (s * n)
        orig = n / 2 * (1 - adjustment) + (x + half) / s - half
    elif transform == "align_corners":
        orig = x * (n - 1) / (m - 1) if out > 1 else np.zeros(out, dtype)
    elif transform == "asymmetric":
        orig = x / s
    elif transform == "tf_half_pixel_for_nn":
        orig = (x + half) / s
    else:
        raise UnsupportedAttribute(f"coordinate_transformation_mode {transform!r} is not supported")
    return orig


def _nearest_pick(orig: np.ndarray, nearest: str, size: int) -> np.ndarray:
    frac = orig - np.floor(orig)
    if nearest == "round_prefer_floor":
        picked = np.where(frac == 0.5, np.floor(orig), np.round(orig))
    elif nearest == "round_prefer_ceil":
        picked = np.where(frac == 0.5, np.ceil(orig), np.round(orig))
    elif nearest == "floor":
        picked = np.floor(orig)
    elif nearest == "ceil":
        picked = np.ceil(orig)
    else:
        raise UnsupportedAttribute(f"nearest_mode {nearest!r} is not supported")
    return np.clip(picked, 0, size - 1).astype(np.int64)
