"""A few words for writing C as loop IR: `at("x", "c", "ih * 8 + iw")` is an access whose index terms are
parsed from C (`k * name`, constants; anything else one opaque term), `let` / `var` a const / mutable local,
`put` an assignment, `when` an `If`, `loop` a loop with its label, variable and (symbolic) bound, `step` a
wrapping counter, `do` a call for its effect, `register` a buffer the function declares."""
from __future__ import annotations

import re

from .ir import Access, Buffer, C, E, Expr, If, Let, Loop, Stmt

WORD = re.compile(r"(\d+) \* ([\w.]+)|([\w.]+) \* (\d+)")


def ix(text: str | int) -> Expr:
    """An index: its top-level `a + k * b - 3` terms; anything else is one opaque term."""
    if isinstance(text, int):
        return E(text)
    parts, depth, start, signs = [], 0, 0, [1]
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0 and ch in "+-" and text[i - 1:i] == " " and text[i + 1:i + 2] == " ":
            parts.append(text[start:i].strip())
            signs.append(1 if ch == "+" else -1)
            start = i + 1
    parts.append(text[start:].strip())
    e = E(0)
    for sign, part in zip(signs, parts):
        m = WORD.fullmatch(part)
        if re.fullmatch(r"-?\d+", part):
            e = e + sign * int(part)
        elif m:
            e = e + E(m.group(2) or m.group(3)) * (sign * int(m.group(1) or m.group(4)))
        else:
            e = e + E(part) * sign
    return e


def at(buffer: str, *index) -> Access:
    return Access(buffer, tuple(ix(i) for i in index))


def _value(v):
    return C(v) if isinstance(v, str) else v


def let(ctype: str, name: str, value=None, mutable: bool = False) -> Let:
    return Let(name, ctype, _value(value), mutable)


def var(ctype: str, name: str, value=None) -> Let:
    return let(ctype, name, value, True)


def put(target: Access | str, value, op: str = "=") -> Stmt:
    return Stmt(target if isinstance(target, Access) else Access(target), _value(value), op=op)


def do(call: str) -> Stmt:
    """A call for its effect (`port.write(beat);`)."""
    return Stmt(Access(""), C(call))


def when(cond: str, *then, orelse=()) -> If:
    return If(C(cond), tuple(then), tuple(orelse) if isinstance(orelse, (tuple, list)) else (orelse,))


def loop(label: str, variable: str, extent: int, *body, bound: str = "") -> Loop:
    return Loop(label, extent, tuple(body), var="" if variable == label else variable, bound=bound)


def step(counter: str, limit: str, *then) -> If:
    """`if (++counter == limit) { counter = 0; then }`: a counter that wraps."""
    return when(f"++{counter} == {limit}", put(counter, "0"), *then)


def register(name: str, ctype: str, *shape: int) -> Buffer:
    return Buffer(name, shape, 0, "register", decl=ctype)
