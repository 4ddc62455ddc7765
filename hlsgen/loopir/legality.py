"""Legality: per pipelined iteration, the unrolled accesses to each banked memory fit its ports.

For every loop with Pipeline(ii): every loop inside it (and inside the nests it invokes) is unrolled
completely (as Vitis HLS unrolls it; a partial Unroll there is an error); then for each banked memory the
words any one bank serves, summed over the accesses that may reach it, must be at most ports x ii. Reads and writes count separately; an update (`+=`) counts as both;
both bodies of an `If` count. Partitions must not ask for more banks than the memory has.

This is a proof for every iteration, not a sample. An index splits into a part from the unrolled loops
and an offset from everything else (outer loops, row fields: fixed for one iteration). On a partitioned
dimension an access's bank is exact when the offset cannot move it, relative (`(offset, bank)`: two
accesses of one offset meet only at the same bank; of different offsets, anywhere) when it can, and
unknown when the offset itself changes within the iteration (it mentions an unrolled variable). Word
counts only change with the offset modulo the partition's period (factor x word for cyclic, the block size
for block, the word otherwise), so every residue the offset can take is tried and the worst kept. Buffers
of one memory share its banks in an unknown way: another buffer's access may meet any bank.
"""
from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass

from .directives import Partition, Pipeline, Unroll
from .ir import Access, Buffer, If, Invoke, Let, Loop, LoopNest

OFFSET = 1 << 20  # added to indices so that negative offsets map like their residues
UNKNOWN = None  # a bank nothing relates to other banks
MAX_CHOICES = 4096
ANYTHING = "*"  # in the names that vary: every name does


@dataclass(frozen=True)
class PortUse:
    loop: str
    ii: int
    memory: str
    accesses: int  # worst case per bank per pipelined iteration
    capacity: int  # ports x ii
    buffers: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return self.accesses <= self.capacity


def partitions(nest: LoopNest, buffer: Buffer) -> dict[int, Partition]:
    """0-based dimension -> its partition (dim 0: every dimension)."""
    found = {}
    for d in nest.directives_on(buffer.name):
        if isinstance(d, Partition):
            found.update({dim: d for dim in range(len(buffer.shape))} if d.dim == 0 else {d.dim - 1: d})
    return found


def bank_count(nest: LoopNest, buffer: Buffer) -> int:
    count = 1
    for dim, p in partitions(nest, buffer).items():
        count *= buffer.shape[dim] if p.kind == "complete" else p.factor
    return count


def _locate_dim(i: int, buffer: Buffer, p: Partition | None, dim: int) -> tuple[int, int]:
    """(bank, word) of index i along one dimension."""
    if p is None:
        bank, local = 0, i
    elif p.kind == "complete":
        bank, local = i, 0
    elif p.kind == "cyclic":
        bank, local = i % p.factor, i // p.factor
    else:
        size = math.ceil(buffer.shape[dim] / p.factor)
        bank, local = i // size, i % size
    return bank, (local // buffer.word if dim == len(buffer.shape) - 1 else local)


def _locate(index: list[int], buffer: Buffer, parts: dict[int, Partition]) -> tuple[tuple, tuple]:
    """(bank, word) of one element."""
    pairs = [_locate_dim(i, buffer, parts.get(d), d) for d, i in enumerate(index)]
    return tuple(b for b, _ in pairs), tuple(w for _, w in pairs)


def _period(buffer: Buffer, parts: dict[int, Partition], dim: int) -> int:
    p = parts.get(dim)
    word = buffer.word if dim == len(buffer.shape) - 1 else 1
    if p is None:
        return word
    if p.kind == "complete":
        return 1
    if p.kind == "cyclic":
        return p.factor * word
    return math.ceil(buffer.shape[dim] / p.factor)


def _mentions(term: str, names: set[str]) -> bool:
    return ANYTHING in names or any(re.search(rf"\b{re.escape(n)}\b", term) for n in names if n in term)


@dataclass(frozen=True)
class _Use:
    """One access in one pipelined iteration: per residue of its offsets, its instances as (bank, word)."""

    buffer: Buffer
    combos: tuple[tuple[tuple[tuple, tuple], ...], ...]


def _use(access: Access, buffer: Buffer, parts: dict[int, Partition], unrolled: dict[str, int],
         varying: set[str], scope: str = "") -> _Use:
    """`scope`: the nest the access is in (an offset's names mean one value only within one nest)."""
    dims = []
    for d, e in enumerate(access.index):
        period = _period(buffer, parts, d)
        outer = tuple(((scope, n), c) for n, c in e.terms if n not in unrolled)
        wild = any(_mentions(n, varying) for (_, n), _ in outer)
        g = math.gcd(period, *(c for _, c in outer)) if outer else period
        dims.append((e, outer, wild, period, range(0, period, g) if period > 1 and not wild else (0,)))
    # the copies of the unrolled loops it depends on (all of them when an offset changes with each copy)
    names = [n for n in unrolled if any(e.coef(n) for e in access.index) or any(d[2] for d in dims)]
    combos = []
    for residues in itertools.product(*(d[-1] for d in dims)):
        instances = []
        for k, values in enumerate(itertools.product(*(range(unrolled[n]) for n in names))):
            env = dict(zip(names, values))
            bank, word = [], []
            for d, ((e, outer, wild, period, _), r) in enumerate(zip(dims, residues)):
                u = e.const + sum(e.coef(n) * env[n] for n in names)
                p = parts.get(d)
                b, w = _locate_dim(OFFSET * period + r + u, buffer, p, d)
                word.append(("varies", k) if wild else (outer, w))
                if p is None:
                    continue
                if wild:
                    bank.append(UNKNOWN)
                elif not outer or (p.kind == "cyclic" and all(c % p.factor == 0 for _, c in outer)):
                    bank.append(("exact", b))
                elif p.kind == "block":  # blocks after the offset's (each access's worst residue is tried)
                    bank.append((outer, b - OFFSET))
                else:
                    bank.append((outer, u % p.factor if p.kind == "cyclic" else u))
            instances.append((tuple(bank), tuple(word)))
        combos.append(tuple(instances))
    return _Use(buffer, tuple(combos))


def _meets(candidate, bank, identified: dict | None, dim: int) -> bool:
    """Whether `bank` may be the candidate bank, given which bank of each other group it is (`identified`)."""
    if candidate is UNKNOWN or bank is UNKNOWN:
        return True
    if candidate[0] == bank[0]:  # both exact, or relative to one offset
        return candidate == bank
    return identified is None or identified.get((dim, bank[0])) == bank


def _identifications(banks: list[tuple], candidate: tuple):
    """Every way the candidate may coincide with banks of other groups: at most one bank of each (the banks
    of one group are different banks); None when there are too many ways (then it may be any of them)."""
    choices = {}
    for d, c in enumerate(candidate):
        for b in banks:
            if c is not UNKNOWN and b[d] is not UNKNOWN and b[d][0] != c[0]:
                choices.setdefault((d, b[d][0]), set()).add(b[d])
    values = [sorted(v, key=repr) for v in choices.values()]
    if math.prod(len(v) for v in values) > MAX_CHOICES:
        yield None
        return
    for pick in itertools.product(*values):
        yield dict(zip(choices, pick))


def _worst(uses: list[_Use]) -> int:
    """The most words one bank of a memory serves for `uses`, over every bank they may reach."""
    by_buffer: dict[str, list[_Use]] = {}
    for u in uses:
        by_buffer.setdefault(u.buffer.name, []).append(u)

    def count(u: _Use, candidate, identified) -> int:
        return max(len({w for b, w in combo if all(_meets(c, k, identified, d) for d, (c, k) in
                                                  enumerate(zip(candidate, b)))}) for combo in u.combos)

    def most(group: list[_Use]) -> int:
        banks = [b for u in group for combo in u.combos for b, _ in combo]
        per_dim = [sorted({b[d] for b in banks if b[d] is not UNKNOWN}, key=repr) or [UNKNOWN]
                   for d in range(len(banks[0]) if banks else 0)]
        return max(sum(count(u, candidate, identified) for u in group)
                   for candidate in itertools.product(*per_dim) for identified in _identifications(banks, candidate))

    # another buffer of the memory may share any bank with this one's: its worst bank counts whole
    alone = {name: sum(most([u]) for u in group) for name, group in by_buffer.items()} if len(by_buffer) > 1 else {}
    return max(sum(v for other, v in alone.items() if other != name) + most(group) for name, group in by_buffer.items())


def worst_bank_words(access: Access, buffer: Buffer, parts: dict[int, Partition], unrolled: dict[str, int]) -> int:
    """The most distinct words one bank serves for `access` in one pipelined iteration, over all offsets."""
    return _worst([_use(access, buffer, parts, unrolled, set())])


def port_uses(nest: LoopNest) -> tuple[list[PortUse], list[str]]:
    """Port use of every pipelined loop, and the structural problems found on the way."""
    problems, uses = [], []
    for b in nest.buffers:
        if b.banked and bank_count(nest, b) > b.banks:
            problems.append(f"buffer {b.name!r} is partitioned into {bank_count(nest, b)} banks, its {b.memory} "
                            f"memory has {b.banks}")
    for loop in nest.loops():
        ii = next((d.ii for d in nest.directives_on(loop.name) if isinstance(d, Pipeline)), None)
        if ii is None:
            continue
        found: dict[str, list[_Use]] = {}
        ports: dict[str, int] = {}

        def visit(owner: LoopNest, nodes, unrolled: dict[str, int], varying: set[str]):
            for n in nodes:
                if isinstance(n, Loop):  # the pipeline unrolls it (Vitis HLS does), unless a partial Unroll says not to
                    if any(isinstance(d, Unroll) and d.factor is not None and d.factor < n.extent
                           for d in owner.directives_on(n.name)):
                        problems.append(f"loop {n.name!r} inside pipelined loop {loop.name!r} is not unrolled completely")
                    visit(owner, n.body, {**unrolled, n.variable: n.extent}, varying | {n.variable})
                elif isinstance(n, If):
                    visit(owner, n.then + n.orelse, unrolled, varying)
                elif isinstance(n, Invoke):  # inside an unrolled loop, its arguments may change with each copy
                    visit(n.nest, n.nest.body, unrolled, varying | ({ANYTHING} if unrolled else set()))
                else:
                    if unrolled and (isinstance(n, Let) or not n.target.index):
                        varying.add(n.name if isinstance(n, Let) else n.target.buffer)
                    for access in n.reads() + n.writes():
                        b = _buffer(owner, access.buffer)
                        if b is None or not b.banked or not access.index:
                            continue
                        found.setdefault(b.memory, []).append(_use(access, b, partitions(owner, b), unrolled, varying,
                                                                   owner.name))
                        ports[b.memory] = min(ports.get(b.memory, b.ports), b.ports)

        visit(nest, loop.body, {}, set())
        for memory, group in found.items():
            names = tuple(sorted({u.buffer.name for u in group}))
            uses.append(PortUse(loop.name, ii, memory, _worst(group), ports[memory] * ii, names))
    return uses, problems


def _buffer(nest: LoopNest, name: str) -> Buffer | None:
    return next((b for b in nest.buffers if b.name == name), None)


def check(nest: LoopNest) -> list[str]:
    """Every violation as one sentence; empty when the nest is legal."""
    uses, problems = port_uses(nest)
    for u in uses:
        if not u.ok:
            problems.append(f"pipelined loop {u.loop!r} (II={u.ii}) needs {u.accesses} accesses per bank of the "
                            f"{u.memory} memory ({', '.join(u.buffers)}) per iteration; it has {u.capacity // u.ii} "
                            f"port(s) per bank per cycle")
    return [f"{nest.name}: {p}" for p in problems]
