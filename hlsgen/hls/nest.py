"""A loop IR nest (`hlsgen.loopir.LoopNest`) as the tree a kernel template prints: loops with their
names, extents, guards and pragmas, and statements as C++ lines.

Statements are generic (accesses with affine indices, `*` products, accumulation); the nest's opaque
calls (line_buffer, requant, qadd, ...) are spelled by the kernel family, which passes `calls`. An
accumulating statement starts its sum (or running maximum) on the first iteration of its reduction loops:
the loops between it and the smallest loop that also holds a reader of its buffer, minus the loops its
target is indexed by.
"""
from __future__ import annotations

from typing import Callable

from ..loopir import Access, Call, Expr, Loop, LoopNest, Partition, Pipeline, Stmt, Stream, Unroll
from .pragmas import pragma

# fn(stmt, call, c) -> C text: an expression, or a whole statement when the target is an entire buffer
CallRenderer = Callable[[Stmt, Call, "CNames"], str]
LOOP_DIRECTIVES = (Pipeline, Unroll)
BUFFER_DIRECTIVES = (Partition, Stream)


class CNames:
    """Buffer names as the C code spells them (a ROM is a global array, the rest are locals)."""

    def __init__(self, mapping: dict[str, str]):
        self.mapping = mapping

    def expr(self, e: Expr) -> str:
        parts = [n if c == 1 else f"{c} * {n}" for n, c in e.terms]
        if e.const or not parts:
            parts.append(str(e.const))
        return " + ".join(parts).replace("+ -", "- ")

    def access(self, a: Access) -> str:
        return self.mapping.get(a.buffer, a.buffer) + "".join(f"[{self.expr(e)}]" for e in a.index)

    def name(self, buffer: str) -> str:
        return self.mapping.get(buffer, buffer)

    def arg(self, a) -> str:
        """A call argument: an access, an index expression or a buffer name."""
        if isinstance(a, Access):
            return self.access(a)
        if isinstance(a, Expr):
            return self.expr(a)
        return self.name(a)


def render(nest: LoopNest, calls: dict[str, CallRenderer], c: CNames) -> list[dict]:
    """The nest body as template nodes: {"loop": True, name, extent, guard, pragmas, body} or
    {"loop": False, "lines": [...]}."""
    readers = _reader_paths(nest)

    def nodes(items, path: tuple[Loop, ...]) -> list[dict]:
        out = []
        for n in items:
            if isinstance(n, Loop):
                guard = " && ".join(f"{c.expr(e)} < {bound}" for e, bound in n.guards)
                out.append({"loop": True, "name": n.name, "extent": n.extent, "guard": guard,
                            "pragmas": [pragma(d) for d in nest.directives_on(n.name) if isinstance(d, LOOP_DIRECTIVES)],
                            "body": nodes(n.body, path + (n,))})
            else:
                out.append({"loop": False, "lines": _statement(n, path, readers, calls, c)})
        return out

    return nodes(nest.body, ())


def buffer_pragmas(nest: LoopNest, buffer: str, c: CNames) -> list[str]:
    return [pragma(d, c.name(buffer)) for d in nest.directives_on(buffer) if isinstance(d, BUFFER_DIRECTIVES)]


def function_pragmas(nest: LoopNest) -> list[str]:
    """Directives placed on the nest itself (Dataflow): they go at the top of the kernel function."""
    return [pragma(d) for d in nest.directives_on(nest.name) if not isinstance(d, LOOP_DIRECTIVES + BUFFER_DIRECTIVES)]


def value(v, stmt: Stmt, calls: dict[str, CallRenderer], c: CNames) -> str:
    if isinstance(v, Access):
        return c.access(v)
    if isinstance(v, Expr):
        return c.expr(v)
    if isinstance(v, str):
        return c.name(v)
    if v.fn == "*":
        return " * ".join(value(a, stmt, calls, c) for a in v.args)
    if v.fn not in calls:
        raise ValueError(f"no C spelling for loop IR call {v.fn!r}")
    return calls[v.fn](stmt, v, c)


def _statement(stmt: Stmt, path, readers, calls, c: CNames) -> list[str]:
    if not stmt.target.index:  # a producer of a whole buffer (window, copy): the call is the statement
        return [value(stmt.value, stmt, calls, c) + ";"]
    target, rhs = c.access(stmt.target), value(stmt.value, stmt, calls, c)
    if not stmt.accumulate:
        return [f"{target} = {rhs};"]
    first = _first_iteration(stmt, path, readers, c)
    running_max = isinstance(stmt.value, Call) and stmt.value.fn.startswith("max")
    if not first:
        return [f"{target} = {rhs};"]
    if running_max:
        return [f"if (({first}) || {rhs} > {target}) {{", f"    {target} = {rhs};", "}"]
    return [f"if ({first}) {{", f"    {target} = {rhs};", "} else {", f"    {target} += {rhs};", "}"]


def _first_iteration(stmt: Stmt, path: tuple[Loop, ...], readers: dict[str, list], c: CNames) -> str:
    """'r1 == 0 && r2 == 0' over the statement's reduction loops ('' if it has none)."""
    buffer = stmt.target.buffer
    scope = 0  # depth of the smallest loop holding both this statement and a reader of its buffer
    for reader in readers.get(buffer, []):
        common = 0
        while common < min(len(reader), len(path)) and reader[common] is path[common]:
            common += 1
        scope = max(scope, common)
    indexed = {v for e in stmt.target.index for v in e.vars()}
    return " && ".join(f"{loop.name} == 0" for loop in path[scope:] if loop.name not in indexed)


def _reader_paths(nest: LoopNest) -> dict[str, list[tuple[Loop, ...]]]:
    """Per buffer, the loop paths of the statements that read it without accumulating into it."""
    found: dict[str, list] = {}

    def walk(items, path):
        for n in items:
            if isinstance(n, Loop):
                walk(n.body, path + (n,))
            else:
                for a in _reads(n.value):
                    if not (n.accumulate and a.buffer == n.target.buffer):
                        found.setdefault(a.buffer, []).append(path)

    walk(nest.body, ())
    return found


def _reads(v):
    if isinstance(v, Access):
        yield v
    elif isinstance(v, Call):
        for a in v.args:
            yield from _reads(a)
