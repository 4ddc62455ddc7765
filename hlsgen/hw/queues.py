"""The two queues a layer program runs on (docs/program.md, "Two queues"): the DMA unit runs the `dma` rows,
the engines every other row, each queue in program order. A row waits for the rows of the other queue it
depends on, VTA-style: `wait` counts the other queue's rows that must have finished before it starts (they
finish in order, so one counter per queue is the whole token).

Row j of one queue depends on the last earlier row i of the other queue that it conflicts with: one writes
words of the activation memory (a plane, or the depthwise window memory) the other reads or writes, or both
need the same port of it (a plane's write port or read port, the copies' write port: the DMA and the
engines share them, and the RTL gives each port to one of them at a time). Program order is a correct
sequential order, so honouring these waits computes the same values. The external memory needs no wait:
only the DMA queue touches it, in order.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from . import cycles as cyc
from .placement import Memory
from .rows import DMA, NONE, LayerMap

DMA_QUEUE, COMPUTE_QUEUE = "dma", "compute"


def queue(row: LayerMap) -> str | None:
    """The queue that runs `row`, or None for a Reshape (it only renames a map)."""
    return None if row.unit == NONE else DMA_QUEUE if row.unit == DMA else COMPUTE_QUEUE


@dataclass(frozen=True)
class Footprint:
    """What a row touches: (space, first, end) word ranges it reads and writes; a space is ("plane", p),
    ("copies", 0), or a port ("read", p), ("write", p), ("write", "copies")."""

    reads: tuple[tuple[tuple, int, int], ...]
    writes: tuple[tuple[tuple, int, int], ...]

    def conflicts(self, other: Footprint) -> bool:
        return (_overlap(self.writes, other.reads + other.writes) or _overlap(self.reads, other.writes))


def _overlap(a, b) -> bool:
    return any(sa == sb and lo < hb and lb < hi for sa, lo, hi in a for sb, lb, hb in b)


def footprint(row: LayerMap, memory: Memory) -> Footprint:
    reads, writes = [], []
    for t in row.inputs:
        m = memory.placement(t)
        if m.dram_base is not None:
            continue  # the external memory: a load's source
        reads.append((("plane", m.plane), m.base, m.base + m.words))
        writes.append((("read", m.plane), 0, 1))  # a port: two users conflict, as two writers do
        if row.kind == "depthwise":
            reads.append((("copies", 0), m.dw_base, m.dw_base + m.dw_words))
    m = memory.placement(row.output)
    if m.dram_base is None:
        writes += [(("plane", m.plane), m.base, m.base + m.words), (("write", m.plane), 0, 1)]
        if m.dw_read:  # the writer (or a load) also fills the depthwise window memory
            writes += [(("copies", 0), m.dw_base, m.dw_base + m.dw_words), (("write", "copies"), 0, 1)]
    return Footprint(tuple(reads), tuple(writes))


def waits(rows: list[LayerMap], memory: Memory) -> list[int]:
    """Per row: how many rows of the other queue must have finished before it starts (0 for a Reshape)."""
    marks = {DMA_QUEUE: [], COMPUTE_QUEUE: []}  # per queue: (footprint, rows of that queue up to it)
    result = []
    for row in rows:
        q = queue(row)
        if q is None:
            result.append(0)
            continue
        mine = footprint(row, memory)
        other = COMPUTE_QUEUE if q == DMA_QUEUE else DMA_QUEUE
        result.append(next((count for fp, count in reversed(marks[other]) if mine.conflicts(fp)), 0))
        marks[q].append((mine, len(marks[q]) + 1))
    return result


def with_waits(rows: list[LayerMap], memory: Memory) -> list[LayerMap]:
    return [replace(row, wait=w) for row, w in zip(rows, waits(rows, memory))]


def schedule(rows: list[LayerMap]) -> list[tuple[int, int]]:
    """(start, end) cycle of every row on the two queues, honouring its `wait` (cycles.two_queue_cycles)."""
    return cyc.two_queue_cycles([(None if queue(r) is None else int(queue(r) == DMA_QUEUE), r.cycles, r.wait)
                                 for r in rows])


def queue_cycles(rows: list[LayerMap], memory: Memory) -> int:
    """The cycles of the rows on the two queues: the end of the last one, with their waits."""
    return max((end for _, end in schedule(with_waits(rows, memory))), default=0)


def attributed(rows: list[LayerMap]) -> list[int]:
    """Each row's share of the program's cycles: an engine row's from the end of the engine row before it to
    its own end (its cycles and the engines' wait for its copies), a dma row's its own cycles (spent beside
    the engines). The RTL's testbench measures the same (templates/rtl/tb.v.j2)."""
    times, last, shares = schedule(rows), 0, []
    for row, (start, end) in zip(rows, times):
        q = queue(row)
        shares.append(end - last if q == COMPUTE_QUEUE else row.cycles if q == DMA_QUEUE else 0)
        last = end if q == COMPUTE_QUEUE else last
    return shares
