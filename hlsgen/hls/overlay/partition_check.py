"""The bank-conflict proof of generated HLS C++, read from the C++ itself: the arrays as it declares and
partitions them (`#pragma HLS ARRAY_PARTITION`, Vitis's 1-based `dim`, 0 = every dimension) against the
accesses of each `PIPELINE`d loop's iteration.

Per pipelined loop, every access of its body (and of the functions it calls, which the design inlines)
is expanded over the loops inside it (Vitis unrolls every loop nested in a pipelined one); on each
partitioned dimension an access's bank is known when its index is a literal or an unrolled loop variable
(complete partitions), or `e + v` with the same `e` (cyclic partitions: v distinct below the factor means
distinct banks), and unknown otherwise.
An iteration fails when more accesses than a bank's ports (PORTS, true dual-port block RAM) may meet in
one bank. Arrays partitioned completely on every dimension are registers and never conflict.
An array is looked up from the access outwards: the function it is in, the functions whose pipelined
loop called it, then file scope; an array argument partitioned nowhere on that chain takes the partitions
its name has elsewhere when they agree (the generated C++ passes an array under its caller's name).
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from pathlib import Path

PORTS = 2
KEYWORDS = frozenset({"return", "else", "case", "do", "sizeof", "new", "delete", "throw"})
PARTITION = re.compile(r"#pragma HLS ARRAY_PARTITION variable=(\w+) type=(\w+)(?: factor=(\d+))? dim=(\d+)")
CONSTANT = re.compile(r"static const int (\w+) = (-?\d+);")
LOOP = re.compile(r"for \(int (\w+) = 0; \1 < ([^;]+); \1\+\+\) \{")
FUNCTION = re.compile(r"^(?:static |inline |template <[^>]*>\s*)*[\w:<>, ]+?[\s*&](\w+)\(([^;{]*)\)\s*\{", re.M)
UNKNOWN = None


class BankConflictError(Exception):
    """Generated C++ whose pipelined loops cannot reach II = 1: a bug in hlsgen, never a user error."""


@dataclass(frozen=True)
class Conflict:
    loop: str  # the pipelined loop's label (or its variable)
    array: str
    accesses: tuple[str, ...]  # the accesses that may meet in one bank

    def __str__(self) -> str:
        return f"loop {self.loop}: {len(self.accesses)} accesses may hit one bank of {self.array}: " \
               + "; ".join(self.accesses[:4])


@dataclass(frozen=True)
class _Array:
    dims: tuple[int | None, ...]
    parts: dict  # 1-based dim -> ("complete", 0) or ("cyclic", factor)

    @property
    def registers(self) -> bool:
        dims = range(1, len(self.dims) + 1)
        return bool(self.dims) and all(self.parts.get(d, ("", 0))[0] == "complete" for d in dims)


def prove_folder(hls_dir: Path) -> None:
    """Raise BankConflictError naming the first conflict of the C++ in `hls_dir`, if any."""
    conflicts = check_folder(hls_dir)
    if conflicts:
        raise BankConflictError(f"the HLS C++ in {hls_dir} has {len(conflicts)} bank conflict(s) (a bug in hlsgen, "
                                f"please report it): {conflicts[0]}")


def check_folder(hls_dir: Path) -> list[Conflict]:
    """Conflicts of the C++ in `hls_dir` (its headers and sources, the testbench excepted)."""
    files = sorted(p for p in Path(hls_dir).rglob("*") if p.suffix in (".h", ".cpp") and not p.name.endswith("_tb.cpp")
                   and p.parent.name != "portable")
    return check_sources("\n".join(p.read_text() for p in files))


def check_sources(text: str) -> list[Conflict]:
    text = re.sub(r"//[^\n]*", "", text)
    constants = {m.group(1): int(m.group(2)) for m in CONSTANT.finditer(text)}
    functions = _functions(text)
    arrays = _Arrays(text, constants, functions)
    conflicts = []
    for loop in LOOP.finditer(text):
        body_start = loop.end()
        body_end = _closing(text, body_start - 1)
        if "PIPELINE" not in _pragmas(text, body_start):
            continue
        chain = (_function_at(functions, loop.start()),)
        accesses = _accesses(text, body_start, body_end, constants, functions, chain)
        conflicts += _conflicts(_label(text, loop.start()) or loop.group(1), accesses, arrays)
    return conflicts


def _label(text: str, at: int) -> str | None:
    m = re.search(r"HLSGEN_LOOP\((\w+)\)\s*$", text[max(0, at - 80):at])
    return m.group(1) if m else None


def _pragmas(text: str, at: int) -> str:
    """The guarded pragma block that opens a loop body at `at`, if any."""
    rest = text[at:at + 2000].lstrip()
    if not rest.startswith("#ifdef __SYNTHESIS__"):
        return ""
    return rest[:rest.index("#endif")]


def _closing(text: str, open_at: int) -> int:
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    return len(text)


def _value(expr: str, constants: dict) -> int | None:
    expr = expr.strip()
    if re.fullmatch(r"-?\d+", expr):
        return int(expr)
    return constants.get(expr)


class _Arrays:
    """Declarations and partitions by scope (a function's name, or None for file scope)."""

    def __init__(self, text: str, constants: dict, functions: dict):
        self.parts: dict[tuple, dict] = {}
        for m in PARTITION.finditer(text):
            name, kind, factor, dim = m.group(1), m.group(2), int(m.group(3) or 0), int(m.group(4))
            self.parts.setdefault((_function_at(functions, m.start()), name), {})[dim] = (kind, factor)
        self.dims: dict[tuple, tuple] = {}
        for m in re.finditer(r"([\w>])\s+(\w+)((?:\[[^\[\]]+\])+)", text):
            prev_word = re.search(r"(\w+)\s*$", text[max(0, m.start() - 40):m.start() + 1])
            if m.group(1) != ">" and (prev_word is None or prev_word.group(1) in KEYWORDS) or m.group(2) in KEYWORDS:
                continue
            key = (_function_at(functions, m.start(2)), m.group(2))
            self.dims.setdefault(key, tuple(_value(d, constants) for d in re.findall(r"\[([^\[\]]+)\]", m.group(3))))

    def find(self, name: str, chain: tuple) -> _Array | None:
        dims = next((self.dims[(f, name)] for f in (*chain, None) if (f, name) in self.dims), None)
        if dims is None:
            return None
        parts = next((self.parts[(f, name)] for f in (*chain, None) if (f, name) in self.parts), None)
        if parts is None:
            elsewhere = [p for (f, n), p in self.parts.items() if n == name]
            parts = elsewhere[0] if elsewhere and all(p == elsewhere[0] for p in elsewhere) else {}
        if 0 in parts:  # dim=0: every dimension
            parts = {d: parts[0] for d in range(1, len(dims) + 1)}
        return _Array(dims, parts)


def _functions(text: str) -> dict[str, tuple[int, int, int]]:
    """name -> (start of its signature, start and end of its body)."""
    spans = {}
    for m in FUNCTION.finditer(text):
        spans.setdefault(m.group(1), (m.start(), m.end(), _closing(text, m.end() - 1)))
    return spans


def _function_at(functions: dict, at: int) -> str | None:
    inside = [(end - start, name) for name, (start, _, end) in functions.items() if start <= at <= end]
    return min(inside)[1] if inside else None


def _accesses(text: str, start: int, end: int, constants: dict, functions: dict, chain: tuple) -> list[tuple]:
    """(array, index expressions, {unrolled variable: extent}, text, scope chain) of every access in
    text[start:end], and in the bodies of the functions called there."""
    unrolled = [(loop.group(1), _value(loop.group(2), constants), loop.end(), _closing(text, loop.end() - 1))
                for loop in LOOP.finditer(text, start, end)]  # PIPELINE unrolls every loop inside it
    found = []
    for m in re.finditer(r"(?<![\w.>])(\w+)\[", text[start:end]):
        at = start + m.start()
        name, indices, stop = m.group(1), [], at + len(m.group(1))
        while stop < end and text[stop] == "[":
            close = _bracket(text, stop)
            indices.append(text[stop + 1:close].strip())
            stop = close + 1
        before = text[max(0, at - 40):at]
        if re.search(r"(?:[\w>]\s+)$", before) and not re.search(r"(?:return|else|#endif)\s+$", before):
            continue  # a declaration (a statement after a pragma block's #endif is not one)
        loops = {v: n for v, n, s, e in unrolled if s <= at < e}
        found.append((name, tuple(indices), loops, text[at:stop], chain))
    if len(chain) < 4:
        for m in re.finditer(r"(?<![\w.])(\w+)\(", text[start:end]):
            span = functions.get(m.group(1))
            if span is not None and m.group(1) not in chain:
                found += _accesses(text, span[1], span[2], constants, functions, (m.group(1), *chain))
    return found


def _bracket(text: str, open_at: int) -> int:
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == "[":
            depth += 1
        elif text[i] == "]":
            depth -= 1
            if depth == 0:
                return i
    return len(text)


def _conflicts(loop: str, accesses: list[tuple], arrays: _Arrays) -> list[Conflict]:
    by_array: dict[str, list[tuple]] = {}
    for name, indices, loops, where, chain in accesses:
        array = arrays.find(name, chain)
        if array is None or array.registers or len(indices) != len(array.dims):
            continue
        for instance in _instances(indices, loops, array):
            by_array.setdefault(name, []).append((instance, where))
    conflicts = []
    for name, banks in by_array.items():
        for bank in _candidates([b for b, _ in banks]):
            meeting = [w for other, w in banks if _may_meet(bank, other)]
            if len(meeting) > PORTS:
                conflicts.append(Conflict(loop, name, tuple(meeting)))
                break
    return conflicts


def _candidates(banks: list[tuple]) -> list[tuple]:
    """Every bank the accesses may name: per dimension the banks some access names (an access of an
    unknown bank lands in one of them, or in one no other access names, where it meets only unknowns)."""
    per_dim = []
    for d in range(len(banks[0])):
        known = sorted({b[d] for b in banks if b[d] is not UNKNOWN}, key=repr)
        per_dim.append(known or [UNKNOWN])
    return list(itertools.product(*per_dim))


def _instances(indices: tuple[str, ...], loops: dict, array: _Array) -> list[tuple]:
    """The banks an access touches, one tuple per assignment of its unrolled loop variables."""
    names = [v for v in loops if loops[v] is not None]  # an unrolled copy per value, named in the index or not
    result = []
    for values in itertools.product(*(range(loops[v]) for v in names)):
        env = dict(zip(names, values))
        bank = []
        for d, index in enumerate(indices, start=1):
            kind, factor = array.parts.get(d, ("none", 0))
            if kind == "complete":
                bank.append(_known(index, env))
            elif kind == "cyclic":
                m = re.fullmatch(r"(.+?)\s*\+\s*(\w+)", index)
                if m and m.group(2) in env:
                    bank.append(("cyclic", m.group(1).strip(), env[m.group(2)] % factor))
                elif index in env:
                    bank.append(("cyclic", "", env[index] % factor))
                else:
                    bank.append(UNKNOWN)
        result.append(tuple(bank))
    return result


def _known(index: str, env: dict):
    if re.fullmatch(r"-?\d+", index):
        return int(index)
    return env.get(index, UNKNOWN)


def _may_meet(a: tuple, b: tuple) -> bool:
    """Whether two banks may be the same one: unknown meets anything; cyclic banks of one base expression
    meet only at the same offset."""
    for x, y in zip(a, b):
        if x is UNKNOWN or y is UNKNOWN:
            continue
        if isinstance(x, tuple) and isinstance(y, tuple) and x[1] != y[1]:
            continue
        if x != y:
            return False
    return True
