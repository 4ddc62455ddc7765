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
    to_dma: int  # tokens the engines send per inference (each read once): the stream ports' one, the signals'
    to_engines: int  # tokens the DMA queue sends
    to_dma_depth: int  # the most tokens either stream can hold at once, whatever the two processes' speeds
    to_engines_depth: int


def queues(rows: list[tuple[int, int, int]]) -> Queues:
    """Per C++ row, its wait and its signal, from the layer program's rows that run on a queue, in program
    order: (queue, wait in the other queue's layer rows, the C++ rows it becomes; a grouped conv becomes one
    per chunk of groups, each waiting as the layer row does); and the token streams' traffic and depths."""
    done = {ENGINES: [0], DMA_QUEUE: [0]}  # per queue: C++ rows of its first k layer rows
    for q, _, count in rows:
        done[q].append(done[q][-1] + count)
    expanded = [(q, done[1 - q][wait]) for q, wait, count in rows for _ in range(count)]
    awaited = {ENGINES: set(), DMA_QUEUE: {done[DMA_QUEUE][-1]}}  # the engines' last read: every dma row
    highest = {ENGINES: [0], DMA_QUEUE: [0]}  # per queue: the running maximum wait of its first m rows
    for q, wait in expanded:
        if wait > highest[q][-1]:
            awaited[1 - q].add(wait)
        highest[q].append(max(highest[q][-1], wait))
    position = {ENGINES: 0, DMA_QUEUE: 0}
    signals = []
    for q, _ in expanded:
        position[q] += 1
        signals.append(int(position[q] in awaited[q]))
    sent = {q: sorted(awaited[q] - {0}) for q in (ENGINES, DMA_QUEUE)}
    return Queues(tuple(w for _, w in expanded), tuple(signals), 1 + len(sent[ENGINES]), len(sent[DMA_QUEUE]),
                  _depth(ENGINES, sent, highest), _depth(DMA_QUEUE, sent, highest))


def _depth(sender: int, sent: dict[int, list[int]], highest: dict[int, list[int]]) -> int:
    """The most tokens `sender`'s stream holds at once. Right after the sender ends its row a, the receiver
    has finished at least the rows that row waited for, m = highest[sender][a], and each of its rows read
    exactly the tokens up to its running maximum wait: highest[receiver][m] (the engines' first token is read
    before the DMA queue's first row). So the stream holds at most the tokens sent up to a less those, and a
    depth of the largest such count lets every write go on at once: the only waits are the program's."""
    first = int(sender == ENGINES)  # the inputs-are-in token, sent before any row
    receiver = 1 - sender

    def read(m: int) -> int:  # tokens the receiver has read once it has started its first m rows
        return first + sum(s <= highest[receiver][m] for s in sent[sender]) if m else 0

    held = [first] + [first + k + 1 - read(highest[sender][a]) for k, a in enumerate(sent[sender])]
    return max(held + [1])
