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
