"""A linear Resize by integer factors as a nearest one and a depthwise Conv, both of which the accelerator runs.

Linear interpolation is nearest upsampling filtered by a short kernel: repeating every pixel s times and
averaging s + 1 neighbours with weights [1, 2, ..., 2, 1] / 2s (s even) or s neighbours equally (s odd, and
the asymmetric transform) gives ONNX's linear Resize on every pixel of the map, its edges included when the
repeated map is extended by its edge pixels (ONNX clamps the source coordinate to the map). So the Resize
becomes a nearest Resize that also repeats its edges (hlsgen.ops.resize), then a depthwise Conv of that one
kernel on every channel, whose weights are exact integers over 2s or s per axis. align_corners is not
periodic in the output pixel and stays a linear Resize (the host runs it)."""
from __future__ import annotations

import numpy as np

from ..ir import Graph, Node, TensorInfo
from ..ir.quant import WeightQuant
from ..ops.conv import ConvAttrs
from ..ops.resize import ResizeAttrs, linear_weights
from .pipeline import graph_pass


def axis_filter(transform: str, size: int, scale: int) -> tuple[np.ndarray, int, int] | None:
    """(integer taps, their denominator, edge pixels before) of one axis, or None if no kernel is exact."""
    if scale == 1:
        return np.ones(1, np.int64), 1, 0
    want = linear_weights(transform, size, scale)
    candidates = [(np.ones(scale, np.int64), scale), (np.array([1] + [2] * (scale - 1) + [1], np.int64), 2 * scale)]
    for taps, denominator in candidates:
        for before in range(len(taps)):
            if np.allclose(_filtered(taps / denominator, before, size, scale), want, rtol=0, atol=1e-12):
                return taps, denominator, before
    return None


def _filtered(kernel: np.ndarray, before: int, size: int, scale: int) -> np.ndarray:
    """[out, size]: the weights of nearest upsampling extended by its edges, then filtered by `kernel`."""
    out = size * scale
    source = np.clip((np.arange(out + len(kernel) - 1) - before) // scale, 0, size - 1)
    weights = np.zeros((out, size))
    for t, w in enumerate(kernel):
        np.add.at(weights, (np.arange(out), source[np.arange(out) + t]), w)
    return weights


@graph_pass
def linear_resize_as_conv(graph: Graph) -> bool:
    """Rewrite a linear Resize as a nearest Resize extended by its edge pixels and a depthwise Conv."""
    changed = False
    for node in [n for n in graph.nodes.values() if n.op == "Resize" and n.attrs.mode == "linear"]:
        a: ResizeAttrs = node.attrs
        shape = graph.shape(node.inputs[0])
        if any(int(s) != s for s in a.scales):  # a fractional factor: the vector unit interpolates
            continue
        axes = [axis_filter(a.transform, size, s) for size, s in zip(shape[2:], a.scales)]
        if any(f is None for f in axes) or len(shape) not in (3, 4):
            continue
        _rewrite(graph, node, axes)
        changed = True
    return changed


def _rewrite(graph: Graph, node: Node, axes: list[tuple[np.ndarray, int, int]]) -> None:
    channels = graph.shape(node.inputs[0])[1]
    before = tuple(b for _, _, b in axes)
    after = tuple(len(taps) - 1 - b for taps, _, b in axes)
    y = graph.tensors[node.outputs[0]]
    repeated = graph.fresh_name(f"{node.outputs[0]}_repeated")
    graph.tensors[repeated] = TensorInfo(repeated, y.shape[:2] + tuple(
        n + len(taps) - 1 for n, (taps, _, _) in zip(y.shape[2:], axes)), y.dtype)
    graph.add_node(Node(graph.fresh_name(f"{node.name}_nearest"), "Resize", (node.inputs[0],), (repeated,),
                        ResizeAttrs(node.attrs.scales, pads=before + after)))
    ints = np.array(1, np.int64)
    for taps, _, _ in axes:
        ints = np.multiply.outer(ints, taps)
    denominator = int(np.prod([d for _, d, _ in axes]))
    ints = np.broadcast_to(ints, (channels, 1) + ints.shape).astype(np.int64)
    weight = graph.add_constant(graph.fresh_name(f"{node.name}_weight"), (ints / denominator).astype(np.float32))
    bits = max(2, int(ints.max()).bit_length() + 1)
    graph.quant[weight] = (ints.copy(), WeightQuant((1.0 / denominator,) * channels, bits))
    rank = len(axes)
    geometry = ConvAttrs(tuple(len(t) for t, _, _ in axes), (1,) * rank, (0,) * 2 * rank, (1,) * rank, channels)
    graph.replace_node(node.name, Node(node.name, "Conv", (repeated, weight), node.outputs, geometry))
