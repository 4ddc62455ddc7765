"""How a row of the layer program splits into bands: which input rows a band of output rows reads (with
the kernel's halo and the top padding in the band buffer's coordinates), and whether a row may also run in
blocks of channels (hlsgen.hw.banding decides the bands)."""
from __future__ import annotations

from dataclasses import dataclass, replace

from .placement import map_shape
from .rows import ARRAY, LayerMap
from ..ops.resize import resize_edge_pads

CHANNEL_KINDS = ("depthwise", "elementwise", "pool", "resize", "global_pool")
SPLIT_KINDS = ("conv", "grouped_conv", "depthwise", "pool", "elementwise", "resize")


@dataclass(frozen=True)
class RowGeometry:
    """How a row's output rows read its input rows along the height."""

    height_in: int
    height_out: int  # after a fused MaxPool
    kernel: int = 1
    stride: int = 1
    dilation: int = 1
    pad: int = 0
    pool: int = 1  # a fused MaxPool's window (= stride) along the height
    up: int = 1  # a Resize's upsampling along the height
    pre: int = 0  # the edge rows an edge-repeating Resize reads above the map
    splits: bool = True
    reduces: bool = False  # a global pool: a band of input rows adds to the one output pixel (the engine's total)
    align: int = 1  # band heights are a multiple of it (an Interleave's bands start at a row of every phase)

    def band(self, y0: int, y1: int) -> tuple[int, int, int, int]:
        """(a, b, pad_top, rows_computed): the input rows [a, b) output rows [y0, y1) read."""
        if not self.splits:
            return 0, self.height_in, self.pad, (y1 - y0) * self.pool
        if self.reduces:
            return y0, y1, 0, y1 - y0
        first, last = y0 * self.pool, y1 * self.pool
        if self.up > 1 or self.pre:
            a, b = ((y - self.pre) // self.up for y in (first, last - 1))
            return max(a, 0), min(max(b, 0), self.height_in - 1) + 1, 0, last - first
        a = min(max(0, first * self.stride - self.pad), self.height_in - 1)
        b = min(self.height_in, (last - 1) * self.stride - self.pad + (self.kernel - 1) * self.dilation + 1)
        return a, max(b, a + 1), self.pad + a - first * self.stride, last - first

    def bands(self, height: int) -> list[tuple[int, int]]:
        """Output rows [y0, y1) of bands of `height` rows (the last one shorter)."""
        if not self.splits:
            return [(0, self.height_out)]
        height = max(self.align, height - height % self.align)
        return [(y0, min(y0 + height, self.height_out)) for y0 in range(0, self.height_out, height)]


def row_geometry(graph, layer: LayerMap) -> RowGeometry:
    node = graph.nodes[layer.nodes[0]]
    x = map_shape(layer.input_shapes[0] if layer.input_shapes else layer.input_shape)
    out = map_shape(layer.output_shape)
    pool = layer.pool[0] if layer.pool else 1
    whole = RowGeometry(x[1], out[1], pool=pool, splits=False)
    if (layer.kind == "global_pool" and len(layer.output_shape) == 4 and int(layer.output_shape[0]) == 1
            and x[1] > 1):  # bands of input rows, every one adding to the same output pixel
        return RowGeometry(x[1], x[1], reduces=True)
    if layer.kind == "copy":
        return _copy_geometry(node, layer, x[1], out[1], whole)
    if (layer.kind not in SPLIT_KINDS or out[1] < 2 or int(layer.output_shape[0]) != 1
            or len(layer.output_shape) != 4 or any(tuple(s) != tuple(layer.input_shapes[0])
                                                   for s in layer.input_shapes[1:])):
        return replace(whole, pad=_pads(node)[0]) if layer.kind in SPLIT_KINDS and len(layer.input_shape) == 4 else whole
    if layer.kind == "resize":
        scales = node.attrs.scales
        return RowGeometry(x[1], out[1], pool=pool, up=int(scales[0]) if len(scales) == 2 else 1,
                           pre=resize_edge_pads(node.attrs)[0])
    if layer.kind == "elementwise":
        return RowGeometry(x[1], out[1], pool=pool)
    a = node.attrs.conv if layer.unit == ARRAY else (node.attrs if node.op == "MaxPool" else node.attrs.pool)
    return RowGeometry(x[1], out[1], int(a.kernel_shape[0]), int(a.strides[0]), int(a.dilations[0]), _pads(node)[0],
                       pool)


def _copy_geometry(node, layer: LayerMap, height_in: int, height_out: int, whole: RowGeometry) -> RowGeometry:
    """A Concat of channels or columns writes output row y from row y of every input, a constant Pad of pixels
    from input row y - top, an Interleave of phases of equal height rows s * u + d from row u of phase d: all
    split by rows (an Interleave's bands s rows apart). Other copies (a Transpose, a Concat of rows, a Pad of
    another mode or of channels) run whole."""
    if len(layer.output_shape) != 4 or int(layer.output_shape[0]) != 1 or height_out < 2:
        return whole
    a = node.attrs
    if node.op == "Concat" and a.axis in (1, 3):
        return RowGeometry(height_in, height_out)
    if node.op == "Interleave" and len(set(layer.input_shapes)) == 1 and height_out == a.strides[0] * height_in:
        return RowGeometry(height_in, height_out, up=a.strides[0], align=a.strides[0])
    if node.op == "Pad" and a.mode == "constant" and not any(a.pads[i] or a.pads[i + 4] for i in (0, 1)):
        return RowGeometry(height_in, height_out, pad=int(a.pads[2]))
    return whole


def channel_blocks(graph, layer: LayerMap, lanes: int) -> int:
    """Blocks of `lanes` channels a channel-separable row (depthwise, elementwise, pools, Resize: every
    output channel reads only its own input channel) may run in apart; 1 if it is not split by channels."""
    if layer.kind not in CHANNEL_KINDS or int(layer.output_shape[0]) != 1:
        return 1
    channels = map_shape(layer.output_shape)[0]
    shapes = layer.input_shapes or (layer.input_shape,)
    if any(map_shape(s)[0] != channels for s in shapes) or any(t in graph.inputs for t in layer.inputs):
        return 1
    return -(-channels // lanes) if channels > lanes else 1


def _pads(node) -> tuple[int, ...]:
    a = getattr(node.attrs, "conv", None) or getattr(node.attrs, "pool", None) or node.attrs
    return tuple(getattr(a, "pads", (0,))) or (0,)
