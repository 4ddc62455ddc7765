"""Conv: N-d convolution with groups, strides, dilations and explicit pads; a fused activation."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import Node
from .common import Activation, apply_activation, pad_spatial, resolve_auto_pad, windows
from .registry import UnsupportedAttribute, kernel, onnx_importer


@dataclass(frozen=True)
class ConvAttrs:
    kernel_shape: tuple[int, ...]
    strides: tuple[int, ...]
    pads: tuple[int, ...]  # all begins, then all ends
    dilations: tuple[int, ...]
    group: int = 1
    activation: Activation | None = None


@kernel("Conv", ConvAttrs)
def conv(a: ConvAttrs, x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """y = act(conv(x, w) + b); x: N,C,*S; w: M,C/group,*K."""
    n_sp = len(a.kernel_shape)
    win = windows(pad_spatial(x, a.pads, 0.0), a.kernel_shape, a.strides, a.dilations)  # N, C, *O, *K
    n, c = x.shape[:2]
    m, g = w.shape[0], a.group
    out_sp = win.shape[2 : 2 + n_sp]
    positions, taps = int(np.prod(out_sp, dtype=np.int64)), (c // g) * int(np.prod(a.kernel_shape, dtype=np.int64))
    # im2col as a matrix product per group: (N, G, positions, taps) @ (G, taps, M/G)
    win = win.reshape((n, g, c // g) + out_sp + tuple(a.kernel_shape))
    order = (0, 1) + tuple(range(3, 3 + n_sp)) + (2,) + tuple(range(3 + n_sp, 3 + 2 * n_sp))
    cols = win.transpose(order).reshape(n, g, positions, taps)
    y = np.matmul(cols, w.reshape(g, m // g, taps).transpose(0, 2, 1))  # N, G, positions, M/G
    y = y.transpose(0, 1, 3, 2).reshape((n, m) + out_sp)
    if b is not None:
        y = y + b.reshape((1, m) + (1,) * n_sp)
    return apply_activation(a.activation, y.astype(x.dtype))


@onnx_importer("Conv")
def import_conv(node, ctx) -> list[Node]:
    attrs = ctx.attrs(node)
    kshape = tuple(attrs.get("kernel_shape", ctx.shape(node.input[1])[2:]))
    n = len(kshape)
    strides = tuple(attrs.get("strides", (1,) * n))
    dilations = tuple(attrs.get("dilations", (1,) * n))
    in_spatial = ctx.shape(node.input[0])[2:]
    pads = resolve_auto_pad(attrs.get("auto_pad", "NOTSET"), in_spatial, kshape, strides, dilations, attrs.get("pads"))
    group = int(attrs.get("group", 1))
    if group < 1:  # ONNX's checker lets it through; the channel split would divide by it
        raise UnsupportedAttribute(f"group {group} is not a positive number of groups")
    conv_attrs = ConvAttrs(kshape, strides, pads, dilations, group)
    return [Node(ctx.node_name(node), "Conv", tuple(node.input), (node.output[0],), conv_attrs)]


@dataclass(frozen=True)
class ConvTransposeAttrs:
    kernel_shape: tuple[int, ...]
    strides: tuple[int, ...]
    pads: tuple[int, ...]  # all begins, then all ends: cropped off the full output
    dilations: tuple[int, ...]
    output_padding: tuple[int, ...]  # rows and columns added at the end (bias only where no tap reaches)
    group: int = 1


@kernel("ConvTranspose", ConvTransposeAttrs)
def conv_transpose(a: ConvTransposeAttrs, x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """The gradient of a Conv: every input pixel scatters w times its value, strides apart; x: N,C,*S;
    w: C,M/group,*K; the full output cropped by `pads` (its end extended by `output_padding`)."""
    n_sp, g = len(a.kernel_shape), a.group
    n, c = x.shape[:2]
    m = w.shape[1] * g
    spatial = x.shape[2:]
    full = tuple((s - 1) * st + (k - 1) * d + 1 + op for s, st, k, d, op
                 in zip(spatial, a.strides, a.kernel_shape, a.dilations, a.output_padding))
    y = np.zeros((n, m) + full, np.float64)
    xg = x.astype(np.float64).reshape((n, g, c // g) + spatial)
    wg = w.astype(np.float64).reshape((g, c // g, m // g) + tuple(a.kernel_shape))
    for tap in np.ndindex(*a.kernel_shape):
        contrib = np.einsum("ngc...,gcm->ngm...", xg, wg[(slice(None),) * 3 + tap]).reshape((n, m) + spatial)
        at = tuple(slice(t * d, t * d + (s - 1) * st + 1, st)
                   for t, d, s, st in zip(tap, a.dilations, spatial, a.strides))
        y[(slice(None), slice(None)) + at] += contrib
    crop = tuple(slice(a.pads[i], full[i] - a.pads[i + n_sp]) for i in range(n_sp))
    y = y[(slice(None), slice(None)) + crop]
    if b is not None:
        y = y + b.astype(np.float64).reshape((1, m) + (1,) * n_sp)
    return y.astype(x.dtype)


@onnx_importer("ConvTranspose")
def import_conv_transpose(node, ctx) -> list[Node]:
    attrs = ctx.attrs(node)
    kshape = tuple(attrs.get("kernel_shape", ctx.shape(node.input[1])[2:]))
    n = len(kshape)
    if attrs.get("auto_pad", "NOTSET") not in ("", "NOTSET", "VALID") or "output_shape" in attrs:
        raise UnsupportedAttribute("an output_shape or a SAME auto_pad (ONNX and onnxruntime place their padding "
                                   "differently); export explicit pads and output_padding")
    strides = tuple(attrs.get("strides", (1,) * n))
    dilations = tuple(attrs.get("dilations", (1,) * n))
    pads = tuple(attrs.get("pads", (0,) * (2 * n))) if attrs.get("auto_pad", "NOTSET") != "VALID" else (0,) * (2 * n)
    output_padding = tuple(attrs.get("output_padding", (0,) * n))
    group = int(attrs.get("group", 1))
    sizes = {"strides": strides, "dilations": dilations, "output_padding": output_padding}
    if any(len(v) != n for v in sizes.values()) or len(pads) != 2 * n or min(strides + dilations) < 1 \
            or min(pads + output_padding, default=0) < 0 or group < 1:
        raise UnsupportedAttribute(f"strides {list(strides)}, dilations {list(dilations)}, pads {list(pads)}, "
                                   f"output_padding {list(output_padding)} or group {group} do not describe a "
                                   f"{n}-d window")
    if any(op >= max(s, d) for op, s, d in zip(output_padding, strides, dilations)):
        raise UnsupportedAttribute(f"output_padding {list(output_padding)} is not below the stride or dilation")
    return [Node(ctx.node_name(node), "ConvTranspose", tuple(node.input), (node.output[0],),
                 ConvTransposeAttrs(kshape, strides, pads, dilations, output_padding, group))]
