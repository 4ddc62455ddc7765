"""Transformations of a LoopNest; each returns a new nest (nests are immutable).

split / tile / reorder restructure loops (index expressions follow by substitution), unroll / pipeline /
partition / stream / dataflow place directives, localize shrinks a buffer to one tile, insert adds a
statement or loop. Errors in use (unknown loop, a reorder of loops that are not perfectly nested) raise
ValueError: they are bugs in a nest builder, never user errors.
"""
from __future__ import annotations

import math
from dataclasses import replace

from .directives import Dataflow, Partition, Pipeline, Stream, Unroll
from .ir import Access, Buffer, E, Loop, LoopNest, Node, Stmt


def _replace_loop(nodes: tuple[Node, ...], name: str, fn) -> tuple[tuple[Node, ...], bool]:
    out, found = [], False
    for n in nodes:
        if isinstance(n, Loop):
            if n.name == name:
                new = fn(n)
                out.extend(new if isinstance(new, tuple) else (new,))
                found = True
                continue
            body, hit = _replace_loop(n.body, name, fn)
            found |= hit
            n = replace(n, body=body)
        out.append(n)
    return tuple(out), found


def _edit(nest: LoopNest, name: str, fn) -> LoopNest:
    body, found = _replace_loop(nest.body, name, fn)
    if not found:
        raise ValueError(f"nest {nest.name!r} has no loop {name!r}")
    return replace(nest, body=body)


def split(nest: LoopNest, loop: str, factor: int, outer: str | None = None, inner: str | None = None) -> LoopNest:
    """loop -> outer (ceil(extent / factor)) x inner (factor); loop = outer * factor + inner, guarded
    by loop < extent when factor does not divide the extent."""
    outer, inner = outer or f"{loop}_o", inner or f"{loop}_i"

    def fn(l: Loop) -> Loop:
        f = min(factor, l.extent)
        value = E(outer) * f + E(inner)
        sub = lambda e: e.substitute(l.name, value)  # noqa: E731
        body = tuple(n.map(sub) for n in l.body)
        guards = tuple((sub(e), b) for e, b in l.guards)
        if l.extent % f:
            guards += ((value, l.extent),)
        return Loop(outer, math.ceil(l.extent / f), (Loop(inner, f, body, guards),))

    return _edit(nest, loop, fn)


def reorder(nest: LoopNest, order: list[str]) -> LoopNest:
    """Permute a perfectly nested chain of loops (each but the innermost has exactly that one child)."""
    chain, names = [], set(order)
    current = next((l for l in nest.loops() if l.name in names), None)
    while current is not None and current.name in names:
        chain.append(current)
        inner = current.body[0] if len(current.body) == 1 and isinstance(current.body[0], Loop) else None
        current = inner if inner is not None and inner.name in names else None
    if {l.name for l in chain} != names:
        raise ValueError(f"loops {order} are not one perfectly nested chain in {nest.name!r}")
    by_name = {l.name: l for l in chain}
    body, guards = chain[-1].body, tuple(g for l in chain for g in l.guards)
    for i, name in enumerate(reversed(order)):
        body = (Loop(name, by_name[name].extent, body, guards if i == 0 else ()),)
    return _edit(nest, chain[0].name, lambda _: body[0])


def tile(nest: LoopNest, sizes: dict[str, int], names: dict[str, tuple[str, str]] | None = None) -> LoopNest:
    """Split each loop of a perfect chain by its size, then move every outer loop above every inner one."""
    names = names or {}
    chain = [l.name for l in nest.loops() if l.name in sizes]
    for loop in chain:
        nest = split(nest, loop, sizes[loop], *names.get(loop, (None, None)))
    outer = [names.get(l, (f"{l}_o", None))[0] or f"{l}_o" for l in chain]
    inner = [names.get(l, (None, f"{l}_i"))[1] or f"{l}_i" for l in chain]
    return reorder(nest, outer + inner)


def unroll(nest: LoopNest, loop: str, factor: int | None = None) -> LoopNest:
    """Unroll completely (factor None or >= extent), else split by factor and unroll the inner loop."""
    extent = nest.loop(loop).extent
    if factor is None or factor >= extent:
        return nest.place(loop, Unroll())
    nest = split(nest, loop, factor, f"{loop}_o", f"{loop}_u")
    return nest.place(f"{loop}_u", Unroll())


def pipeline(nest: LoopNest, loop: str, ii: int = 1) -> LoopNest:
    nest.loop(loop)
    return nest.place(loop, Pipeline(ii))


def partition(nest: LoopNest, buffer: str, dim: int, kind: str, factor: int = 0) -> LoopNest:
    b = nest.buffer(buffer)
    if dim > len(b.shape):
        raise ValueError(f"buffer {buffer!r} has {len(b.shape)} dims, not {dim}")
    return nest.place(buffer, Partition(buffer, dim, kind, factor))


def stream(nest: LoopNest, buffer: str, depth: int = 2) -> LoopNest:
    nest.buffer(buffer)
    return nest.place(buffer, Stream(depth))


def dataflow(nest: LoopNest) -> LoopNest:
    return nest.place(nest.name, Dataflow())


def localize(nest: LoopNest, buffer: str, keep: tuple[str, ...]) -> LoopNest:
    """Shrink `buffer` to one tile: every index keeps only the terms of the loops in `keep` (the buffer is
    refilled for each iteration of the loops outside them; the nest builder vouches for that)."""
    extents = {l.name: l.extent for l in nest.loops()}

    def fix(node):
        if isinstance(node, Loop):
            return replace(node, body=tuple(fix(n) for n in node.body))
        return _localize_stmt(node, buffer, keep)

    body = tuple(fix(n) for n in nest.body)
    sample = next((a for s in _stmts(body) for a in s.reads() + s.writes() if a.buffer == buffer and a.index), None)
    shape = nest.buffer(buffer).shape
    if sample is not None:
        shape = tuple(sum(c * (extents[n] - 1) for n, c in e.terms) + 1 for e in sample.index)
    buffers = tuple(replace(b, shape=shape) if b.name == buffer else b for b in nest.buffers)
    return replace(nest, body=body, buffers=buffers)


def _localize_stmt(stmt: Stmt, buffer: str, keep: tuple[str, ...]) -> Stmt:
    def access(a):
        return Access(a.buffer, tuple(e.keep(keep) for e in a.index)) if a.buffer == buffer else a

    def value(v):
        if isinstance(v, Access):
            return access(v)
        if hasattr(v, "args"):
            return replace(v, args=tuple(value(a) for a in v.args))
        return v

    return Stmt(access(stmt.target), value(stmt.value), stmt.accumulate)


def _stmts(nodes):
    for n in nodes:
        if isinstance(n, Loop):
            yield from _stmts(n.body)
        else:
            yield n


def insert(nest: LoopNest, at: str | None, node: Node, first: bool = False) -> LoopNest:
    """Add a statement or loop to the body of loop `at` (None: the top level), last unless `first`."""
    def add(body):
        return (node,) + body if first else body + (node,)

    if at is None:
        return replace(nest, body=add(nest.body))
    return _edit(nest, at, lambda l: replace(l, body=add(l.body)))


def add_buffer(nest: LoopNest, buffer: Buffer) -> LoopNest:
    return replace(nest, buffers=nest.buffers + (buffer,))


__all__ = ["split", "tile", "reorder", "unroll", "pipeline", "partition", "stream", "dataflow", "localize",
           "insert", "add_buffer"]
