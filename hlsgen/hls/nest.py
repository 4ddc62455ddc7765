"""The one lowering of a loop IR nest (`hlsgen.loopir.LoopNest`) to C++: the declarations of the buffers it
owns with their pragmas, then its body (loops with their labels, guards and pragmas, `If`s, locals and
statements), as lines the templates print inside the function they declare.

Statements are generic (accesses with affine indices, `*` products, literal assignments, accumulation);
a family's opaque calls (line_buffer, requant, qadd, ...) are spelled by `calls` (else `fn(args)`). An
accumulating statement starts its sum (or running maximum) on the first iteration of its reduction loops:
the loops between it and the smallest loop that also holds a reader of its buffer, minus the loops its
target is indexed by. Opaque C (`C`, index terms, conditions, bounds) may index only registers: every
access to a banked buffer is an `Access` the legality check sees, which `lower` verifies.
"""
from __future__ import annotations

import re
from typing import Callable

from ..loopir import Access, Call, Expr, Loop, LoopNest, Partition, Pipeline, Stmt, Stream, Unroll
from ..loopir.directives import Dependence
from ..loopir.ir import C, If, Invoke, Let
from .pragmas import pragma
from .render import guarded

# fn(stmt, call, c) -> C text: an expression, or a whole statement when the target is an entire buffer
CallRenderer = Callable[[Stmt, Call, "CNames"], str]
LOOP_DIRECTIVES = (Pipeline, Unroll)
BUFFER_DIRECTIVES = (Partition, Stream, Dependence)
INDENT = 4
SIMPLE = re.compile(r"[\w.]+(\(.*\))?")


class CNames:
    """Buffer names as the C code spells them (a ROM is a global array, the rest are locals)."""

    def __init__(self, mapping: dict[str, str] | None = None):
        self.mapping = mapping or {}

    def expr(self, e: Expr) -> str:
        parts = [n if c == 1 else f"{c} * {n if SIMPLE.fullmatch(n) else f'({n})'}" for n, c in e.terms]
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


def declarations(nest: LoopNest, indent: int = INDENT, c: CNames | None = None) -> list[str]:
    """The buffers `nest`'s function declares, then the pragmas placed on the nest and on them."""
    c = c or CNames()
    own = [b for b in nest.buffers if b.decl]
    lines = [f"{' ' * indent}{b.decl} {c.name(b.name)}{''.join(f'[{n}]' for n in b.shape)};" for b in own]
    pragmas = [p for b in own for p in buffer_pragmas(nest, b.name, c)]
    pragmas += [pragma(d, c.name(b.name)) for b in nest.buffers if not b.decl for d in nest.directives_on(b.name)
                if isinstance(d, Dependence)]  # on a memory the function shares (its partitions are the owner's)
    return lines + guarded(function_pragmas(nest) + pragmas, indent)


def lower(nest: LoopNest, indent: int = INDENT, calls: dict[str, CallRenderer] | None = None,
          c: CNames | None = None) -> list[str]:
    """The C++ lines of `nest`'s body."""
    calls, c = calls or {}, c or CNames()
    _verify(nest)
    readers = _reader_paths(nest)

    def nodes(items, path: tuple[Loop, ...], depth: int) -> list[str]:
        pad = " " * depth
        out = []
        for n in items:
            if isinstance(n, Loop):
                v = n.variable
                out.append(f"{pad}HLSGEN_LOOP({n.name}) for (int {v} = 0; {v} < {n.bound or n.extent}; {v}++) {{")
                marks = [f"#pragma HLS LOOP_TRIPCOUNT max={n.extent}"] if n.bound and n.extent else []
                out += guarded(marks + [pragma(d) for d in nest.directives_on(n.name) if isinstance(d, LOOP_DIRECTIVES)],
                               depth + INDENT)
                if n.guards:
                    guard = " && ".join(f"{c.expr(e)} < {bound}" for e, bound in n.guards)
                    out += [f"{pad}{' ' * INDENT}if ({guard}) {{", *nodes(n.body, path + (n,), depth + 2 * INDENT),
                            f"{pad}{' ' * INDENT}}}"]
                else:
                    out += nodes(n.body, path + (n,), depth + INDENT)
                out.append(f"{pad}}}")
            elif isinstance(n, If):
                out += [f"{pad}if ({n.cond}) {{", *nodes(n.then, path, depth + INDENT)]
                if n.orelse:
                    out += [f"{pad}}} else {{", *nodes(n.orelse, path, depth + INDENT)]
                out.append(f"{pad}}}")
            elif isinstance(n, Invoke):
                out.append(f"{pad}{n.nest.name}({', '.join(n.args)});")
            elif isinstance(n, Let):
                init = "" if n.value is None else f" = {value(n.value, None, calls, c)}"
                out.append(f"{pad}{'' if n.mutable else 'const '}{n.ctype} {n.name}{init};")
            else:
                out += [pad + line for line in _statement(n, path, readers, calls, c)]
        return out

    return nodes(nest.body, (), indent)


def buffer_pragmas(nest: LoopNest, buffer: str, c: CNames) -> list[str]:
    return [pragma(d, c.name(buffer)) for d in nest.directives_on(buffer) if isinstance(d, BUFFER_DIRECTIVES)]


def function_pragmas(nest: LoopNest) -> list[str]:
    """Directives placed on the nest itself (Dataflow, Inline): they go at the top of the function."""
    return [pragma(d) for d in nest.directives_on(nest.name) if not isinstance(d, LOOP_DIRECTIVES + BUFFER_DIRECTIVES)]


def value(v, stmt: Stmt | None, calls: dict[str, CallRenderer], c: CNames) -> str:
    if isinstance(v, Access):
        return c.access(v)
    if isinstance(v, Expr):
        return c.expr(v)
    if isinstance(v, C):
        return v.text
    if isinstance(v, str):
        return c.name(v)
    if v.fn == "*":
        return " * ".join(value(a, stmt, calls, c) for a in v.args)
    if v.fn in calls:
        return calls[v.fn](stmt, v, c)
    return f"{v.fn}({', '.join(value(a, stmt, calls, c) for a in v.args)})"


def _verify(nest: LoopNest) -> None:
    """Opaque C indexes registers only (a banked buffer's access hidden in text would escape the proof)."""
    banked = {b.name for b in nest.buffers if b.banked}

    def texts(items):
        for n in items:
            if isinstance(n, Loop):
                yield n.bound
                yield from texts(n.body)
            elif isinstance(n, If):
                yield n.cond.text
                yield from texts(n.then + n.orelse)
            elif isinstance(n, (Let, Stmt)):
                for a in (n.reads() + n.writes()):
                    yield from (t for e in a.index for t, _ in e.terms)
                yield from _opaque(n.value)

    for text in texts(nest.body):
        hidden = banked & set(re.findall(r"(\w+)\s*\[", text))
        if hidden:
            raise ValueError(f"nest {nest.name!r}: opaque C {text!r} reads banked buffer(s) {sorted(hidden)}")


def _opaque(v):
    if isinstance(v, C):
        yield v.text
    elif isinstance(v, Call):
        for a in v.args:
            yield from _opaque(a)


def _statement(stmt: Stmt, path, readers, calls, c: CNames) -> list[str]:
    rhs = value(stmt.value, stmt, calls, c)
    if stmt.op:
        return [f"{c.access(stmt.target)} {stmt.op} {rhs};"]
    if not stmt.target.index:  # a producer of a whole buffer (window, copy), or a call: the value is the statement
        return [rhs + ";"]
    target = c.access(stmt.target)
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
    return " && ".join(f"{loop.variable} == 0" for loop in path[scope:] if loop.variable not in indexed)


def _reader_paths(nest: LoopNest) -> dict[str, list[tuple[Loop, ...]]]:
    """Per buffer, the loop paths of the statements that read it without accumulating into it."""
    found: dict[str, list] = {}

    def walk(items, path):
        for n in items:
            if isinstance(n, Loop):
                walk(n.body, path + (n,))
            elif isinstance(n, If):
                walk(n.then + n.orelse, path)
            elif isinstance(n, Stmt):
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
