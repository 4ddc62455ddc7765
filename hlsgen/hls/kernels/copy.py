"""Copies on the vector unit (Concat, Interleave, Transpose, constant Pad; templates/hls/copy.j2): output element e,
row-major over the output tensor, from its source element, as the loop IR's copy nests address them."""
from __future__ import annotations

import numpy as np

from ...errors import UnsupportedModelError
from ...hw.rows import LayerMap
from ...ir import Node
from ...loopir import Access, LoopNest
from ...loopir.words import at, let, put, when
from ..nest import lower
from ..cnames import literal
from ..layout import row_major_strides
from .common import Context, Kernel, nest_kernel


def build(node: Node, layer: LayerMap, nest: LoopNest, ctx: Context) -> Kernel:
    graph = ctx.graph
    out_shape = graph.shape(layer.output)
    prefix = ctx.names.take(node.name)
    fn = ctx.names.take(f"k_{prefix}")
    sources = [b for b in nest.buffers if b.memory == "activation" and b.name != "y"]
    y_pixels = nest.buffer("y").shape[1]
    store = at("y", f"e / {y_pixels}", f"e % {y_pixels}") if y_pixels > 1 else at("y", "e", 0)
    lines = [let("int", f"o{a}", f"e / {s} % {n}" if s > 1 else f"e % {n}")
             for a, (s, n) in enumerate(zip(row_major_strides(out_shape), out_shape)) if n > 1]
    coord = {a: f"o{a}" if n > 1 else "0" for a, n in enumerate(out_shape)}
    if node.op == "Transpose":
        in_shape = graph.shape(layer.inputs[0])
        strides = row_major_strides(in_shape)
        terms = [(coord[a], strides[p]) for a, p in enumerate(node.attrs.perm)]
        lines.append(put(store, _load(sources[0], _sum(terms))))
    elif node.op == "Pad":
        if node.attrs.mode != "constant":
            raise UnsupportedModelError(f"{node.name}: Pad mode {node.attrs.mode!r}; the HLS kernels support "
                                        "constant padding (a Pad before a Conv folds into it)")
        in_shape = graph.shape(layer.inputs[0])
        begins = node.attrs.pads[: len(in_shape)]
        inside = [f"{coord[a]} >= {b} && {coord[a]} < {b + n}" for a, (b, n) in enumerate(zip(begins, in_shape))
                  if out_shape[a] != n]
        terms = [(f"({coord[a]} - {b})" if b else coord[a], s)
                 for a, (b, s) in enumerate(zip(begins, row_major_strides(in_shape)))]
        lines += [put(store, literal(int(node.attrs.value))),
                  when(" && ".join(inside) or "true", put(store, _load(sources[0], _sum(terms))))]
    elif node.op == "Concat":
        axis, offset = node.attrs.axis, 0
        for b, t in zip(sources, layer.inputs):
            shape = graph.shape(t)
            terms = [(f"({coord[a]} - {offset})" if a == axis and offset else coord[a], s)
                     for a, s in enumerate(row_major_strides(shape))]
            lines.append(when(f"{coord[axis]} >= {offset} && {coord[axis]} < {offset + shape[axis]}",
                              put(store, _load(b, _sum(terms)))))
            offset += shape[axis]
    elif node.op == "Interleave":  # output pixel (s * u + d) of each spatial axis is pixel u of phase d
        first = len(out_shape) - len(node.attrs.strides)
        for b, t, offsets in zip(sources, layer.inputs, np.ndindex(*node.attrs.strides)):
            axes = list(zip(range(first, len(out_shape)), node.attrs.strides, offsets))
            inside = [f"{coord[a]} % {s} == {d}" for a, s, d in axes if s > 1]
            source = dict(coord) | {a: f"{coord[a]} / {s}" if s > 1 else coord[a] for a, s, _ in axes}
            terms = [(f"({source[a]})" if "/" in source[a] else source[a], stride)
                     for a, stride in enumerate(row_major_strides(graph.shape(t)))]
            lines.append(when(" && ".join(inside) or "true", put(store, _load(b, _sum(terms)))))
    else:
        raise UnsupportedModelError(f"{node.name}: no copy kernel for {node.op}")
    helper = LoopNest(ctx.helper(fn, "copy"), buffers=tuple(sources) + (nest.buffer("y"),), body=tuple(lines),
                      placed=tuple((b, d) for b, d in nest.placed if b in {x.name for x in sources} | {"y"}))
    h = {"copy_fn": helper.name, "y_t": ctx.types[layer.output], "out_shape": list(out_shape),
         "y_dims": list(nest.buffer("y").shape), "body": "\n".join(lower(helper)),
         "sources": [{"name": b.name, "t": ctx.types[t], "dims": list(b.shape)} for b, t in zip(sources, layer.inputs)]}
    call = lambda s, c_, c: f"{h['copy_fn']}({c.name(s.target.buffer)}, {', '.join(c.arg(a) for a in c_.args)})"  # noqa: E731
    return nest_kernel(ctx, node, layer, nest, fn, "copy", h, {node.op.lower(): call}, {}, {}, [], None,
                       {node.op.lower(): helper})


def _sum(terms: list[tuple[str, int]]) -> str:
    parts = [v if s == 1 else f"{v} * {s}" for v, s in terms if v != "0"]
    return " + ".join(parts) or "0"


def _load(buffer, flat: str) -> Access:
    pixels = buffer.shape[1]
    return at(buffer.name, f"({flat}) / {pixels}", f"({flat}) % {pixels}") if pixels > 1 else at(buffer.name, flat, 0)
