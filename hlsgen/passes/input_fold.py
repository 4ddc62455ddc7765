"""An input image of few channels folded by the host: its 2 x 2 pixel blocks moved into channels.

A first convolution of stride 2 over an image of C channels (RGB: 3) reads maps of C of the activation
memory's R lanes, and moves a padded R-byte word per pixel between external memory and the chip. Folded
(SpaceToDepth, block 2: channel (dy * 2 + dx) * C + c of folded pixel (y, x) is channel c of pixel
(2y + dy, 2x + dx)) the image has 4C channels and a quarter of the pixels, and the convolution is one of
stride 1 over it, each original tap on the folded tap and channel its pixel moved to (_folded_weights),
the folded taps no original one lands on zero. The same products, the same integers: the folded graph's
input has the folded shape (`Graph.input_folds` says by how much), the executor folds an array of the
model's shape first, and the host folds the image as it packs it (hlsgen.hw.dram.pack_map, the C driver,
the C-sim's testbench).

`fold_input` returns the folded copy of a quantized graph, or None where no input qualifies; the mapping
keeps it where the input lives in external memory and the program is faster (hlsgen.build)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..ir import Graph, Node, TensorInfo

BLOCK = 2


def fold_input(graph: Graph, lanes: int) -> Graph | None:
    """A copy of `graph` whose first convolutions of stride 2 over an input of at most lanes / 4 channels read
    that input folded (module docstring), or None when there is none."""
    folded = graph.copy()
    changed = False
    for t in graph.inputs:
        readers = folded.consumers(t)
        if len(readers) == 1 and _foldable(folded, readers[0], t, lanes):
            _fold(folded, readers[0], t)
            changed = True
    return folded if changed else None


def _foldable(graph: Graph, node: Node, x: str, lanes: int) -> bool:
    if node.op != "QConv" or node.inputs[0] != x or x in graph.outputs or not graph.is_constant(node.inputs[1]):
        return False
    conv = node.attrs.conv
    shape = graph.shape(x)
    if len(shape) != 4 or len(conv.kernel_shape) != 2 or conv.group != 1 or tuple(conv.strides) != (BLOCK, BLOCK) \
            or tuple(conv.dilations) != (1, 1):
        return False
    n, c, h, w = shape
    if n != 1 or c * BLOCK * BLOCK > lanes or h % BLOCK or w % BLOCK:
        return False
    return all(p >= 0 for p in _folded_pads(conv, (h, w)))


def _offsets(conv) -> list[tuple[int, int]]:
    """Per axis, the first and last folded offset (from an output pixel) that the kernel's taps land on: tap k
    of an output at o reads pixel 2o + k - pad_begin, in folded pixel o + floor((k - pad_begin) / 2)."""
    return [(-((p + 1) // 2), (k - 1 - p) // 2) for k, p in zip(conv.kernel_shape, conv.pads[:2])]


def _folded_pads(conv, size: tuple[int, int]) -> tuple[int, ...]:
    """The folded conv's pads (ONNX order: begins, then ends) over a map of `size` (unfolded): as many
    output pixels as the original's."""
    begins, ends = [], []
    for axis, ((lo, hi), n) in enumerate(zip(_offsets(conv), size)):
        out = (n + conv.pads[axis] + conv.pads[axis + 2] - conv.kernel_shape[axis]) // BLOCK + 1
        begins.append(-lo)
        ends.append(out - 1 + hi - n // BLOCK + 1)
    return (*begins, *ends)


def _folded_weights(w: np.ndarray, conv) -> np.ndarray:
    """Folded weight [M, 4C, KY, KX]: tap (KY, KX) of channel (dy * 2 + dx) * C + c is original tap
    (2 (KY + lo_y) + dy + pad_top, 2 (KX + lo_x) + dx + pad_left), zero where that is off the kernel."""
    m, c, kh, kw = w.shape
    (lo_y, hi_y), (lo_x, hi_x) = _offsets(conv)
    out = np.zeros((m, BLOCK * BLOCK * c, hi_y - lo_y + 1, hi_x - lo_x + 1), w.dtype)
    for KY, KX, dy, dx in np.ndindex(*out.shape[2:], BLOCK, BLOCK):
        ky = BLOCK * (KY + lo_y) + dy + conv.pads[0]
        kx = BLOCK * (KX + lo_x) + dx + conv.pads[1]
        if 0 <= ky < kh and 0 <= kx < kw:
            out[:, (dy * BLOCK + dx) * c:(dy * BLOCK + dx + 1) * c, KY, KX] = w[:, :, ky, kx]
    return out


def _fold(graph: Graph, node: Node, x: str) -> None:
    n, c, h, w = graph.shape(x)
    conv = node.attrs.conv
    weight = _folded_weights(graph.constants[node.inputs[1]], conv)
    graph.tensors[x] = TensorInfo(x, (n, c * BLOCK * BLOCK, h // BLOCK, w // BLOCK), graph.tensors[x].dtype)
    graph.input_folds[x] = BLOCK
    name = graph.add_constant(graph.fresh_name(f"{node.inputs[1]}_folded"), weight)
    attrs = replace(node.attrs, conv=replace(conv, kernel_shape=weight.shape[2:], strides=(1, 1),
                                             pads=_folded_pads(conv, (h, w))))
    graph.replace_node(node.name, node.with_(inputs=(x, name, *node.inputs[2:]), attrs=attrs))
    graph.prune_tensors()
