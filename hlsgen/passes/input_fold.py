"""An input image of few channels folded by the host: its pixel blocks or a convolution's windows moved into
channels (hlsgen.ir.InputFold).

A first convolution over an image of C channels (RGB: 3) reads maps of C of the activation memory's R lanes,
and moves a padded R-byte word per pixel between external memory and the chip. The host can rearrange the
image so that the convolution reads more lanes per word:

- `blocks` (a stride-2 convolution): SpaceToDepth, block 2 (channel (dy * 2 + dx) * C + c of folded pixel
  (y, x) is channel c of pixel (2y + dy, 2x + dx)); the image has 4C channels and a quarter of the pixels,
  and the convolution is one of stride 1 over it, each original tap on the folded tap and channel its pixel
  moved to (_block_weights), the folded taps no original one lands on zero.
- `windows` (any stride): im2col, the convolution's kh x kw windows (its strides, its pads, the input's zero
  point off the image) moved into C kh kw channels; the convolution becomes a 1x1 one, its taps side by side
  on the lanes with no halo to read.

The same products, the same integers: the folded graph's input has the folded shape (`Graph.input_folds`
says how), the executor folds an array of the model's shape first, and the host folds the image as it packs
it (hlsgen.hw.dram.pack_map, the C driver, the C-sim's testbench).

`fold_input` returns the folded copy of a quantized graph, or None where no input qualifies; the mapping
keeps the fastest program where the input lives in external memory (hlsgen.build)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..ir import Graph, InputFold, Node, TensorInfo

BLOCK = 2
KINDS = ("blocks", "windows")


def fold_input(graph: Graph, lanes: int, kind: str = "blocks") -> Graph | None:
    """A copy of `graph` whose first convolutions over an input of fewer than `lanes` channels read that input
    folded as `kind` says (module docstring), or None when there is none."""
    folded = graph.copy()
    changed = False
    for t in graph.inputs:
        readers = folded.consumers(t)
        if len(readers) == 1 and _foldable(folded, readers[0], t, lanes, kind):
            (_fold_blocks if kind == "blocks" else _fold_windows)(folded, readers[0], t)
            changed = True
    return folded if changed else None


def _foldable(graph: Graph, node: Node, x: str, lanes: int, kind: str) -> bool:
    if node.op != "QConv" or node.inputs[0] != x or x in graph.outputs or not graph.is_constant(node.inputs[1]):
        return False
    conv = node.attrs.conv
    shape = graph.shape(x)
    if len(shape) != 4 or len(conv.kernel_shape) != 2 or conv.group != 1 or tuple(conv.dilations) != (1, 1):
        return False
    n, c, h, w = shape
    if n != 1 or c >= lanes:
        return False
    if kind == "windows":
        return tuple(conv.kernel_shape) != (1, 1) or tuple(conv.strides) != (1, 1)
    if tuple(conv.strides) != (BLOCK, BLOCK) or c * BLOCK * BLOCK > lanes or h % BLOCK or w % BLOCK:
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


def _block_weights(w: np.ndarray, conv) -> np.ndarray:
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


def _fold_blocks(graph: Graph, node: Node, x: str) -> None:
    _, c, h, w = graph.shape(x)
    conv = node.attrs.conv
    weight = _block_weights(graph.constants[node.inputs[1]], conv)
    _refold(graph, node, x, InputFold((c, h, w), (BLOCK, BLOCK), (BLOCK, BLOCK)), weight,
            replace(conv, kernel_shape=weight.shape[2:], strides=(1, 1), pads=_folded_pads(conv, (h, w))))


def _fold_windows(graph: Graph, node: Node, x: str) -> None:
    """im2col: weight [M, C, kh, kw] -> [M, (ky kw + kx) C + c, 1, 1], the taps in the fold's channel order."""
    _, c, h, w = graph.shape(x)
    conv = node.attrs.conv
    original = graph.constants[node.inputs[1]]
    weight = original.transpose(0, 2, 3, 1).reshape(original.shape[0], -1, 1, 1)
    pads = conv.pads[0], conv.pads[1], conv.pads[2], conv.pads[3]
    fold = InputFold((c, h, w), tuple(conv.kernel_shape), tuple(conv.strides), pads, node.attrs.input_zero_point)
    _refold(graph, node, x, fold, weight, replace(conv, kernel_shape=(1, 1), strides=(1, 1), pads=(0, 0, 0, 0)))


def _refold(graph: Graph, node: Node, x: str, fold: InputFold, weight: np.ndarray, conv) -> None:
    """Give input `x` its folded shape and `node` the convolution `conv` with `weight` over it."""
    graph.tensors[x] = TensorInfo(x, (graph.shape(x)[0], *fold.shape), graph.tensors[x].dtype)
    graph.input_folds[x] = fold
    name = graph.add_constant(graph.fresh_name(f"{node.inputs[1]}_folded"), weight)
    graph.replace_node(node.name, node.with_(inputs=(x, name, *node.inputs[2:]),
                                             attrs=replace(node.attrs, conv=conv)))
    graph.prune_tensors()
