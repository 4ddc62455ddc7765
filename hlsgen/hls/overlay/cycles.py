"""Cycles of the overlay C++ as written: the trip counts of its pipelined loops (II = 1) per program row,
before pipeline fill. The counterpart of hlsgen.hw.cycles (the layer program's model, which the RTL meets)
for the C++ design, so that report.json can put the two side by side. The rows run on the two queues as
the model's do (hlsgen.hw.cycles.two_queue_cycles, under the C++ rows' own waits)."""
from __future__ import annotations

from ...hw.cycles import two_queue_cycles
from .program import (OP_COPY, OP_GAVG, OP_GMAX, OP_LERP, OP_MAXPOOL, OP_AVGPOOL, OP_PICK, ARRAY, DMA, ROW_FIELDS,
                      OverlayProgram)


def row_cycles(program: OverlayProgram, rows: int, external: bool = False) -> list[int]:
    """Per program row, the iterations of its pipelined loops (R = `rows` array rows; `external`: the
    weights come from external memory, a 64-bit word a cycle)."""
    names = [n for n, _ in ROW_FIELDS]
    result = []
    for row in program.rows:
        f = dict(zip(names, row.values))
        if f["unit"] == DMA:  # a feature-map image word per cycle
            result.append(f["d_segments"] * f["d_words"])
        else:
            result.append(_array(f, rows, external) if f["unit"] == ARRAY else _vector(f, program))
    return result


def inference_cycles(program: OverlayProgram, rows: int, external: bool = False) -> int:
    """Stream the inputs in, run the rows on the two queues (the engine process and the DMA process, each
    row after the other queue's rows it waits for), stream the outputs out: per call, of `images` images."""
    ports = sum(p.count for p in (*program.inputs, *program.outputs))
    if program.images > 1:  # the head once per image, the batched tail once (a batch's maps are all on chip)
        cycles = row_cycles(program, rows, external)
        return program.images * (ports + sum(cycles[:program.head])) + sum(cycles[program.head:])
    names = [n for n, _ in ROW_FIELDS]
    fields = [dict(zip(names, row.values)) for row in program.rows]
    times = two_queue_cycles([(int(f["unit"] == DMA), cycles, f["wait"])
                              for f, cycles in zip(fields, row_cycles(program, rows, external))])
    return ports + max((end for _, end in times), default=0)


def moved_words(program: OverlayProgram) -> int:
    """Feature-map image words the dma rows move per inference (loads and stores)."""
    names = [n for n, _ in ROW_FIELDS]
    fields = [dict(zip(names, row.values)) for row in program.rows]
    return sum(f["d_segments"] * f["d_words"] for f in fields if f["unit"] == DMA)


def fetched_words(program: OverlayProgram, rows: int) -> int:
    """64-bit words the array unit reads from external memory per inference (weights there)."""
    names = [n for n, _ in ROW_FIELDS]
    fields = [dict(zip(names, row.values)) for row in program.rows]
    return sum(sum(_fetches(f, rows)) for f in fields if f["unit"] == ARRAY)


def _array(f: dict, rows: int, external: bool = False) -> int:
    fetches = _fetches(f, rows) if external else []
    cycles = rows + sum(fetches[:2])  # the first tile's weights (from external memory: the first two tiles first)
    tiles = [s for s in range(f["ts"]) for _ in range(f["tc"] * f["tr"])]  # each tile's spatial tile
    for i, s in enumerate(tiles):
        pixels = min(f["pt"], f["pixels"] - s * f["pt"])
        steps = pixels if i == len(tiles) - 1 else max(pixels, rows)  # the next weights load meanwhile
        cycles += max([steps] + fetches[2 + i:3 + i])  # and tile i + 2 arrives
    return cycles


def _fetches(f: dict, rows: int) -> list[int]:
    """Words of each weight tile fetch of an array row, in order: tiles 0 and 1 (of a row of one tile, 0
    alone) before the first, then tile i + 2 while tile i computes (of two tiles or fewer, none)."""
    per_tile = rows * rows * f["wbits"]  # the overlay's array is square

    def words(k: int) -> int:
        return ((f["w_bit"] + k * per_tile) % 64 + per_tile + 63) // 64

    n = f["tc"] * f["tr"]
    return [words(k) for k in range(min(n, 2))] + ([words(i % n) for i in range(2, f["ts"] * n)] if n > 2 else [])


def _vector(f: dict, program: OverlayProgram) -> int:
    op = f["op"]
    if op in (OP_GAVG, OP_GMAX):
        return f["passes"] * (f["pixels"] + 1)
    if op in (OP_MAXPOOL, OP_AVGPOOL, OP_LERP, OP_PICK):
        return f["passes"] * f["pixels"] * f["kh"] * f["kw"]
    if op == OP_COPY:
        segments = program.segments[f["seg_base"]:f["seg_base"] + f["seg_count"]]
        fill = f["o_channels"] * f["o_h"] * f["o_w"] if f["fill"] else 0
        return fill + sum(s[3] * s[4] * s[5] for s in segments)
    return f["passes"] * f["pixels"]
