"""Find the first layer whose RTL result differs from the integer reference, from a simulation that
logged every activation-memory write (the testbench's +trace=1)."""
from __future__ import annotations

import numpy as np

from ..reference import run_graph
from .program import Program


def first_difference(program: Program, log_lines: list[str], feeds: dict[str, np.ndarray], image: int = 0) -> str | None:
    """'image i, layer L: channel c, pixel (y, x): rtl v, reference w' for the first wrong value, or None."""
    reference = run_graph(program.graph, {k: v[image:image + 1] for k, v in feeds.items()}, keep_all=True)
    bits = program.target.widths.operand_bits
    planes: dict[tuple[int, int, int], dict[int, int]] = {}  # (layer, plane, bank) -> {address: value}
    for line in log_lines:
        kind, *values = line.split()
        if kind != "w" or int(values[0]) != image:
            continue
        layer, plane, banks, address, data = int(values[1]), int(values[2]), int(values[3], 16), int(values[4]), \
            int(values[5], 16)
        for bank in range(program.rows):
            if banks >> bank & 1:
                planes.setdefault((layer, plane, bank), {})[address] = data >> (bank * bits) & ((1 << bits) - 1)
    for index, layer in enumerate(program.compute):  # the layer table's rows (the moves write no traced word)
        fmap = program.maps[layer.output]
        whole = np.asarray(reference[fmap.tensor]).reshape(fmap.channels, -1, fmap.width)
        y0 = layer.row.band.out_rows[0] if fmap.holds else 0  # a band's output buffer holds some of its rows
        want = whole[:, y0:y0 + fmap.height]
        rows, cols = range(fmap.height), range(fmap.width)
        if layer.row.band is not None and not fmap.holds:  # a band writing its rows of a model output on chip
            rows = range(*layer.row.band.out_rows)
        if layer.node.op in ("Concat", "Interleave"):  # an input's rows and columns of the output
            source, (top, left), (sy, sx) = program.maps[layer.inputs[0]], layer.origin, layer.step
            rows, cols = range(top, top + source.height * sy, sy), range(left, left + source.width * sx, sx)
        for c in range(*(layer.channels or (0, fmap.channels))):  # a grouped conv's chunk writes its own
            bank = c % fmap.banks
            written = planes.get((index, fmap.plane, bank), {})
            for y in rows:
                for x in cols:
                    address = fmap.base + (c >> fmap.lg) * fmap.pixels + y * fmap.width + x
                    raw = written.get(address)
                    value = None if raw is None else (raw - (1 << bits) if fmap.quant.signed and raw >> (bits - 1) else raw)
                    if value != int(want[c, y, x]):
                        return (f"image {image}, layer {layer.name}: channel {c}, pixel ({y}, {x}): rtl {value}, "
                                f"reference {int(want[c, y, x])}")
    return None
