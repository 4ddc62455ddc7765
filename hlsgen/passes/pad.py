"""Pad folding."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..ir import Graph, Node
from .pipeline import graph_pass
from .rewrite import sole_consumer


@graph_pass
def fold_pad(graph: Graph) -> bool:
    """Merge a constant Pad of the spatial axes into the Conv, AveragePool or MaxPool reading it.

    Conv and AveragePool pad with zeros (AveragePool then counts the padding), MaxPool with -inf.
    """
    changed = False
    for name in list(graph.nodes):
        pad = graph.nodes.get(name)
        if pad is None or pad.op != "Pad":
            continue
        reader = sole_consumer(graph, pad.outputs[0])
        if reader is None or reader.inputs[0] != pad.outputs[0] or pad.outputs[0] in reader.inputs[1:]:
            continue
        extra = _spatial_pads(pad, len(graph.shape(pad.inputs[0])))
        if extra is None:
            continue
        attrs = _merged_attrs(reader, extra, pad.attrs.value)
        if attrs is None:
            continue
        graph.remove_node(pad.name)
        graph.replace_node(reader.name, reader.with_(inputs=(pad.inputs[0],) + reader.inputs[1:], attrs=attrs))
        changed = True
    return changed


def _spatial_pads(pad: Node, rank: int) -> tuple[int, ...] | None:
    """The Pad's widths on the axes after N and C (begins, then ends), if it pads only those, outward."""
    if pad.attrs.mode != "constant":
        return None
    begins, ends = tuple(pad.attrs.pads[:rank]), tuple(pad.attrs.pads[rank:])
    if any(begins[:2]) or any(ends[:2]) or min(begins + ends) < 0:
        return None
    return begins[2:] + ends[2:]


def _merged_attrs(reader: Node, extra: tuple[int, ...], value: float):
    """The reader's attributes with `extra` added to its pads; None if that would change its result."""
    if reader.op not in ("Conv", "AveragePool", "MaxPool"):
        return None  # no padding of its own to take the Pad's
    attrs = reader.attrs
    pads = tuple(a + b for a, b in zip(attrs.pads, extra))
    if reader.op == "Conv":
        return replace(attrs, pads=pads) if value == 0 else None
    if attrs.ceil_mode:
        # With ceil_mode the pads decide whether a last, partial window exists: not a plain shift.
        return None
    n = len(attrs.kernel_shape)
    if any(p >= attrs.kernel_shape[i % n] for i, p in enumerate(pads)):
        return None  # ONNX requires pool pads to be smaller than the kernel
    if reader.op == "MaxPool":
        return replace(attrs, pads=pads) if value == -np.inf else None
    # The Pad's zeros count in the average; the pool's own pads can join them only if they count too.
    if value != 0 or (any(attrs.pads) and not attrs.count_include_pad):
        return None
    return replace(attrs, pads=pads, count_include_pad=True)
