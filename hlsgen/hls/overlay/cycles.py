"""Cycles of the overlay C++ as written: the trip counts of its pipelined loops (II = 1) per program row,
before pipeline fill. The counterpart of hlsgen.hw.cycles (the layer program's model, which the RTL meets)
for the C++ design, so that report.json can put the two side by side."""
from __future__ import annotations

from .program import OP_COPY, OP_GAVG, OP_GMAX, OP_MAXPOOL, OP_AVGPOOL, ARRAY, ROW_FIELDS, OverlayProgram


def row_cycles(program: OverlayProgram, rows: int) -> list[int]:
    """Per program row, the iterations of its pipelined loops (R = `rows` array rows)."""
    names = [n for n, _ in ROW_FIELDS]
    result = []
    for row in program.rows:
        f = dict(zip(names, row.values))
        result.append(_array(f, rows) if f["unit"] == ARRAY else _vector(f, program))
    return result


def inference_cycles(program: OverlayProgram, rows: int) -> int:
    """Stream the inputs in, run every row, stream the outputs out."""
    ports = sum(p.count for p in (*program.inputs, *program.outputs))
    return ports + sum(row_cycles(program, rows))


def _array(f: dict, rows: int) -> int:
    cycles = rows  # the first tile's weights
    tiles = [s for s in range(f["ts"]) for _ in range(f["tc"] * f["tr"])]  # each tile's spatial tile
    for i, s in enumerate(tiles):
        pixels = min(f["pt"], f["pixels"] - s * f["pt"])
        cycles += pixels if i == len(tiles) - 1 else max(pixels, rows)  # the next weights load meanwhile
    return cycles


def _vector(f: dict, program: OverlayProgram) -> int:
    op = f["op"]
    if op in (OP_GAVG, OP_GMAX):
        return f["passes"] * (f["pixels"] + 1)
    if op in (OP_MAXPOOL, OP_AVGPOOL):
        return f["passes"] * f["pixels"] * f["kh"] * f["kw"]
    if op == OP_COPY:
        segments = program.segments[f["seg_base"]:f["seg_base"] + f["seg_count"]]
        fill = f["o_channels"] * f["o_h"] * f["o_w"] if f["fill"] else 0
        return fill + sum(s[3] * s[4] * s[5] for s in segments)
    return f["passes"] * f["pixels"]
