"""The loop IR as readable text (`hlsgen build --dump-ir` writes it to OUT/loop_ir.txt)."""
from __future__ import annotations

from .directives import Partition, Stream, describe
from .ir import If, Invoke, Loop, LoopNest
from .legality import check, port_uses

INDENT = "  "


def _type(b) -> str:
    return b.decl or (f"int{b.bits}" if b.bits else "argument")


def _buffer_line(nest: LoopNest, b) -> str:
    shape = "".join(f"[{n}]" for n in b.shape) or "[]"
    where = b.memory.replace("_", " ")
    if b.banked:
        where += f", {b.banks} banks x {b.ports} ports" + (f", {b.word} values/word" if b.word > 1 else "")
    extras = [describe(d) for d in nest.directives_on(b.name) if isinstance(d, (Partition, Stream))]
    if b.double_buffered:
        extras.append("double buffered")
    text = f"buffer {b.name:<10} {_type(b):<6} {shape:<14} {where}"
    if extras:
        text += "  {" + "; ".join(extras) + "}"
    if b.note:
        text += f"  # {b.note}"
    return text


def _body(nest: LoopNest, nodes, depth: int, lines: list[str]) -> None:
    pad = INDENT * depth
    for n in nodes:
        if isinstance(n, If):
            lines.append(f"{pad}if {n.cond}:")
            _body(nest, n.then, depth + 1, lines)
            if n.orelse:
                lines.append(f"{pad}else:")
                _body(nest, n.orelse, depth + 1, lines)
        elif isinstance(n, Invoke):
            lines.append(f"{pad}call {n}")
        elif isinstance(n, Loop):
            marks = [describe(d) for d in nest.directives_on(n.name)]
            label = f" ({n.name})" if n.var else ""
            extent = f"{n.bound} (at most {n.extent})" if n.bound and n.extent else n.bound or n.extent
            head = f"{pad}for {n.variable}{label} in 0..{extent}:"
            if marks:
                head = f"{head:<44} # {', '.join(marks)}"
            lines.append(head)
            inner = depth + 1
            if n.guards:
                lines.append(f"{INDENT * inner}if {' and '.join(f'{e} < {b}' for e, b in n.guards)}:")
                inner += 1
            _body(nest, n.body, inner, lines)
        else:
            lines.append(f"{pad}{n}")


def nest_text(nest: LoopNest, header: str = "", shared: frozenset[str] = frozenset()) -> str:
    """`shared`: buffers listed elsewhere (the memories every unit of the overlay reads)."""
    lines = [f"nest {nest.name}" + (f": {header}" if header else "")]
    for note in nest.notes:
        lines.append(f"{INDENT}# {note}")
    for b in nest.buffers:
        if b.name not in shared:
            lines.append(INDENT + _buffer_line(nest, b))
    if nest.directives_on(nest.name):
        lines.append(f"{INDENT}dataflow region: the top-level loops run concurrently, connected by the streams")
    if not nest.body:
        lines.append(f"{INDENT}(no loops)")
    _body(nest, nest.body, 1, lines)
    uses, _ = port_uses(nest)
    problems = check(nest)
    for u in uses:
        lines.append(f"{INDENT}ports: loop {u.loop} (II={u.ii}) {u.memory}: {u.accesses} of {u.capacity} "
                     f"accesses per bank per iteration ({', '.join(u.buffers)})")
    lines.append(f"{INDENT}legality: " + ("ok" if not problems else "; ".join(problems)))
    return "\n".join(lines)
