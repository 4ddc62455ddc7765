"""The loop IR: affine index expressions, buffer accesses, statements, loops and nests (all frozen).

A statement writes one access from a value: an access, or a call (`fn(args)`; `*` shows infix) whose
arguments may be accesses, expressions, names or opaque scalar C (`C`: a row field, a helper's result).
An access with an empty index stands for the whole buffer (an opaque port, e.g. the line buffer's window
generator), or, to a name that is no buffer of the nest, for a scalar local. A loop's variable is its name
unless it names one (`var`); its trip count is `extent`, or the C text `bound` (a program row's field) with
`extent` its largest value. `Let` declares a scalar local, `If` runs one of two bodies on a C condition,
`Invoke` calls another nest (a unit's inline helper, e.g. the writer) whose accesses count where it is called.
An index term need not be a loop variable: any other name is an offset fixed for one pipelined iteration
(C text such as `row.o_base`), unless it mentions a variable that changes within it.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterator, Union


@dataclass(frozen=True)
class Expr:
    """sum(coef * var) + const."""

    terms: tuple[tuple[str, int], ...] = ()
    const: int = 0

    @staticmethod
    def of(value: "Expr | int | str") -> "Expr":
        if isinstance(value, Expr):
            return value
        if isinstance(value, str):
            return Expr(((value, 1),))
        return Expr((), int(value))

    def __add__(self, other: "Expr | int | str") -> "Expr":
        other = Expr.of(other)
        terms = dict(self.terms)
        for name, coef in other.terms:
            terms[name] = terms.get(name, 0) + coef
        return Expr(tuple((n, c) for n, c in terms.items() if c), self.const + other.const)

    __radd__ = __add__

    def __mul__(self, k: int) -> "Expr":
        return Expr(tuple((n, c * k) for n, c in self.terms if c * k), self.const * k)

    __rmul__ = __mul__

    def coef(self, name: str) -> int:
        return dict(self.terms).get(name, 0)

    def vars(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self.terms)

    def substitute(self, name: str, value: "Expr") -> "Expr":
        k = self.coef(name)
        if not k:
            return self
        rest = Expr(tuple((n, c) for n, c in self.terms if n != name), self.const)
        return rest + value * k

    def keep(self, names: tuple[str, ...]) -> "Expr":
        """Only the terms of `names` (no constant): the index within a tile."""
        return Expr(tuple((n, c) for n, c in self.terms if n in names))

    def evaluate(self, env: dict[str, int]) -> int:
        return self.const + sum(c * env[n] for n, c in self.terms)

    def __str__(self) -> str:
        parts = [n if c == 1 else f"{c}*{n}" for n, c in self.terms]
        if self.const or not parts:
            parts.append(str(self.const))
        return " + ".join(parts).replace("+ -", "- ")


def E(value: Expr | int | str) -> Expr:
    return Expr.of(value)


@dataclass(frozen=True)
class C:
    """Opaque scalar C (a row field, a local, a helper's result); it reads no banked buffer."""

    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Access:
    buffer: str
    index: tuple[Expr, ...] = ()  # empty: the whole buffer, through an opaque port

    def map(self, fn) -> "Access":
        return replace(self, index=tuple(fn(e) for e in self.index))

    def __str__(self) -> str:
        return self.buffer + "".join(f"[{e}]" for e in self.index)


@dataclass(frozen=True)
class Call:
    fn: str
    args: tuple = ()  # Access | Expr | str

    def map(self, fn) -> "Call":
        return replace(self, args=tuple(_map_value(a, fn) for a in self.args))

    def __str__(self) -> str:
        if self.fn == "*":
            return " * ".join(str(a) for a in self.args)
        return f"{self.fn}({', '.join(str(a) for a in self.args)})"


def _map_value(value, fn):
    if isinstance(value, (Access, Call)):
        return value.map(fn)
    if isinstance(value, Expr):
        return fn(value)
    return value


def _accesses(value) -> Iterator[Access]:
    if isinstance(value, Access):
        yield value
    elif isinstance(value, Call):
        for a in value.args:
            yield from _accesses(a)


@dataclass(frozen=True)
class Stmt:
    target: Access
    value: Access | Call | Expr | C
    accumulate: bool = False  # target += value, started on the first iteration of its reduction loops
    op: str = ""  # a literal C assignment ("=", "+=", "|=", ...): no first-iteration logic

    def map(self, fn) -> "Stmt":
        return replace(self, target=self.target.map(fn), value=_map_value(self.value, fn))

    def reads(self) -> list[Access]:
        updates = self.accumulate or self.op not in ("", "=")
        return list(_accesses(self.value)) + ([self.target] if updates else [])

    def writes(self) -> list[Access]:
        return [self.target]

    def __str__(self) -> str:
        return f"{self.target} {self.op or ('+=' if self.accumulate else '=')} {self.value}"


@dataclass(frozen=True)
class Let:
    """`ctype name = value;` (const unless `mutable`): a scalar local of the enclosing body."""

    name: str
    ctype: str
    value: Access | Call | Expr | C | None  # None: declared only
    mutable: bool = False

    def map(self, fn) -> "Let":
        return replace(self, value=_map_value(self.value, fn))

    def reads(self) -> list[Access]:
        return list(_accesses(self.value))

    def writes(self) -> list[Access]:
        return []

    def __str__(self) -> str:
        return f"let {self.name} = {self.value}"


@dataclass(frozen=True)
class If:
    cond: C
    then: tuple["Node", ...]
    orelse: tuple["Node", ...] = ()

    def map(self, fn) -> "If":
        return replace(self, then=tuple(n.map(fn) for n in self.then), orelse=tuple(n.map(fn) for n in self.orelse))


@dataclass(frozen=True)
class Invoke:
    """`nest.name(args);`: another nest's body runs here (an inline function of the unit)."""

    nest: "LoopNest"
    args: tuple[str, ...]

    def map(self, fn) -> "Invoke":
        return self

    def __str__(self) -> str:
        return f"{self.nest.name}({', '.join(self.args)})"


@dataclass(frozen=True)
class Loop:
    name: str  # its label, and its variable unless `var` names one
    extent: int  # the trip count, or its largest value when `bound` gives it
    body: tuple["Node", ...]
    guards: tuple[tuple[Expr, int], ...] = ()  # the body runs only where every expr < bound
    var: str = ""
    bound: str = ""  # C text of a trip count that a program row gives (the HLS tool is told `extent` at most)

    @property
    def variable(self) -> str:
        return self.var or self.name

    def map(self, fn) -> "Loop":
        return replace(self, body=tuple(n.map(fn) for n in self.body),
                       guards=tuple((fn(e), b) for e, b in self.guards))


Node = Union[Loop, Stmt, Let, If, Invoke]


@dataclass(frozen=True)
class Buffer:
    name: str
    shape: tuple[int, ...]
    bits: int
    memory: str  # activation, weight, accumulator (banked SRAM) | register, stream, line_buffer
    banks: int = 0  # physical banks of its memory (0: registers, unbounded)
    ports: int = 2  # per bank per cycle (dual-port block RAM)
    word: int = 1  # values per port access along the last dimension
    note: str = ""
    double_buffered: bool = False
    decl: str = ""  # C type (e.g. "static acc_t") when the nest's function declares it, else an argument or global

    @property
    def banked(self) -> bool:
        return self.banks > 0


@dataclass(frozen=True)
class LoopNest:
    name: str
    op: str = ""
    unit: str = ""
    buffers: tuple[Buffer, ...] = ()
    body: tuple[Node, ...] = ()
    placed: tuple[tuple[str, object], ...] = ()  # (loop, buffer or nest name, directive)
    notes: tuple[str, ...] = field(default=())

    def directives(self) -> list[tuple[str, object]]:
        """(name of the loop / buffer / nest it applies to, directive dataclass), in placement order."""
        return list(self.placed)

    def directives_on(self, name: str) -> list[object]:
        return [d for target, d in self.placed if target == name]

    def buffer(self, name: str) -> Buffer:
        for b in self.buffers:
            if b.name == name:
                return b
        raise KeyError(f"nest {self.name!r} has no buffer {name!r}")

    def loops(self) -> Iterator[Loop]:
        def walk(nodes):
            for n in nodes:
                if isinstance(n, Loop):
                    yield n
                    yield from walk(n.body)
                elif isinstance(n, If):
                    yield from walk(n.then + n.orelse)
        return walk(self.body)

    def loop(self, name: str) -> Loop:
        for loop in self.loops():
            if loop.name == name:
                return loop
        raise KeyError(f"nest {self.name!r} has no loop {name!r}")

    def place(self, target: str, directive) -> "LoopNest":
        return replace(self, placed=self.placed + ((target, directive),))
