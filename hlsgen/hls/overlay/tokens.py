"""The layer program's two queues (hlsgen.hw.queues) as the overlay's two C++ processes (docs/hls.md, "Two
queues"): the engine process runs the array and vector rows, the DMA process the dma rows, and they hand
each other tokens on two hls::streams. A token is the count of rows its sender has finished; a row reads
tokens until the count reaches its `wait`. So a queue sends a token only after a row whose count some row
of the other queue waits for: the counts at which the other queue's running maximum wait rises, which is
every token the other queue reads (its running maximum only rises), and no more.

Two tokens stand for the stream ports, which run in the engine process before its rows and after them
(the model and the RTL stream the inputs in before the program and out after it): the engines send a first
token (count 0) once the inputs are in, which the DMA queue reads before its first row, and the engines
read the DMA queue's count of all its rows before they stream the outputs out.
"""
from __future__ import annotations

from dataclasses import dataclass

ENGINES, DMA_QUEUE = 0, 1


@dataclass(frozen=True)
class Queues:
    waits: tuple[int, ...]  # per C++ row: the other queue's C++ rows that finish before it starts
    signals: tuple[int, ...]  # per C++ row: 1 if it sends the other queue a token when it finishes
    to_dma: int  # tokens the engines send (each read once): the stream ports' one, then the signals
    to_engines: int  # tokens the DMA queue sends


def depth(tokens: int) -> int:
    """A token stream's depth: every token it ever carries, so that a write never blocks (a process may run
    ahead of the other by all its tokens) and the only blocking is a wait the program states."""
    return max(tokens, 1)


def queues(rows: list[tuple[int, int, int]]) -> Queues:
    """Per C++ row, its wait and its signal, from the layer program's rows that run on a queue, in program
    order: (queue, wait in the other queue's layer rows, the C++ rows it becomes; a grouped conv becomes one
    per chunk of groups, each waiting as the layer row does)."""
    done = {ENGINES: [0], DMA_QUEUE: [0]}  # per queue: C++ rows of its first k layer rows
    for q, _, count in rows:
        done[q].append(done[q][-1] + count)
    expanded = [(q, done[1 - q][wait]) for q, wait, count in rows for _ in range(count)]
    awaited = {ENGINES: set(), DMA_QUEUE: {done[DMA_QUEUE][-1]}}  # the engines' last read: every dma row
    highest = {ENGINES: 0, DMA_QUEUE: 0}
    for q, wait in expanded:
        if wait > highest[q]:
            highest[q] = wait
            awaited[1 - q].add(wait)
    position = {ENGINES: 0, DMA_QUEUE: 0}
    signals = []
    for q, _ in expanded:
        position[q] += 1
        signals.append(int(position[q] in awaited[q]))
    return Queues(tuple(w for _, w in expanded), tuple(signals), 1 + len(awaited[ENGINES] - {0}),
                  len(awaited[DMA_QUEUE] - {0}))
