"""Legality: per pipelined iteration, the unrolled accesses to each banked memory fit its ports.

For every loop with Pipeline(ii): every loop inside it must be unrolled completely; then, for each
banked memory (activation, weight, accumulator; buffers of one memory share its banks), the sum over
accesses of the most distinct words any one bank serves must be at most ports x ii. Reads and writes
count separately; an accumulation counts as both. Partitions must not ask for more banks than the memory
has. This is a proof for every iteration, not a sample: an index splits into a part from the unrolled
loops and an offset from the loops outside; bank and word counts only change with the offset modulo the
partition's period (factor x word for cyclic, the block size for block, the word otherwise), so the
check enumerates the residues the offset can take (from the gcd of its coefficients) and the unrolled
instances, and keeps the worst case.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from .directives import Partition, Pipeline, Unroll
from .ir import Access, Buffer, Loop, LoopNest

OFFSET = 1 << 20  # added to indices so that negative offsets map like their residues


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
    return {d.dim - 1: d for d in nest.directives_on(buffer.name) if isinstance(d, Partition)}


def bank_count(nest: LoopNest, buffer: Buffer) -> int:
    count = 1
    for dim, p in partitions(nest, buffer).items():
        count *= buffer.shape[dim] if p.kind == "complete" else p.factor
    return count


def _locate(index: list[int], buffer: Buffer, parts: dict[int, Partition]) -> tuple[tuple, tuple]:
    """(bank, word) of one element."""
    bank, local = [], []
    for dim, i in enumerate(index):
        p = parts.get(dim)
        if p is None:
            bank.append(0), local.append(i)
        elif p.kind == "complete":
            bank.append(i), local.append(0)
        elif p.kind == "cyclic":
            bank.append(i % p.factor), local.append(i // p.factor)
        else:
            size = math.ceil(buffer.shape[dim] / p.factor)
            bank.append(i // size), local.append(i % size)
    if local:
        local[-1] //= buffer.word
    return tuple(bank), tuple(local)


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


def worst_bank_words(access: Access, buffer: Buffer, parts: dict[int, Partition], unrolled: dict[str, int]) -> int:
    """The most distinct words one bank serves for `access` in one pipelined iteration, over all offsets."""
    residues = []
    for dim, e in enumerate(access.index):
        period = _period(buffer, parts, dim)
        outer = [c for n, c in e.terms if n not in unrolled]
        g = math.gcd(period, *outer) if outer else period
        residues.append(sorted({(e.const + j * g) % period for j in range(period // g)}) if period > 1 else [0])
    names = [n for n in unrolled if any(e.coef(n) for e in access.index)]
    worst = 0
    for offsets in itertools.product(*residues):
        per_bank: dict[tuple, set] = {}
        for values in itertools.product(*(range(unrolled[n]) for n in names)):
            env = dict(zip(names, values))
            index = [OFFSET * _period(buffer, parts, d) + r + sum(e.coef(n) * env[n] for n in names)
                     for d, (e, r) in enumerate(zip(access.index, offsets))]
            bank, word = _locate(index, buffer, parts)
            per_bank.setdefault(bank, set()).add(word)
        worst = max(worst, max((len(w) for w in per_bank.values()), default=0))
    return worst


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
        unrolled: dict[str, int] = {}
        counts: dict[str, int] = {}
        touched: dict[str, set] = {}

        def visit(nodes, active):
            for n in nodes:
                if isinstance(n, Loop):
                    if not any(isinstance(d, Unroll) and (d.factor is None or d.factor >= n.extent)
                               for d in nest.directives_on(n.name)):
                        problems.append(f"loop {n.name!r} inside pipelined loop {loop.name!r} is not unrolled completely")
                    visit(n.body, {**active, n.name: n.extent})
                    continue
                for access in n.reads() + n.writes():
                    b = nest.buffer(access.buffer)
                    if not b.banked or not access.index:
                        continue
                    words = worst_bank_words(access, b, partitions(nest, b), active)
                    counts[b.memory] = counts.get(b.memory, 0) + words
                    touched.setdefault(b.memory, set()).add(b.name)

        visit(loop.body, unrolled)
        for memory, count in counts.items():
            ports = min(nest.buffer(name).ports for name in touched[memory])
            uses.append(PortUse(loop.name, ii, memory, count, ports * ii, tuple(sorted(touched[memory]))))
    return uses, problems


def check(nest: LoopNest) -> list[str]:
    """Every violation as one sentence; empty when the nest is legal."""
    uses, problems = port_uses(nest)
    for u in uses:
        if not u.ok:
            problems.append(f"pipelined loop {u.loop!r} (II={u.ii}) needs {u.accesses} accesses per bank of the "
                            f"{u.memory} memory ({', '.join(u.buffers)}) per iteration; it has {u.capacity // u.ii} "
                            f"port(s) per bank per cycle")
    return [f"{nest.name}: {p}" for p in problems]
