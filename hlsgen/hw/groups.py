"""How a grouped convolution (groups > 1 with several input channels per group; depthwise has its own mode)
runs on the array: its groups in chunks of `s` consecutive groups, one after another, each chunk an
ordinary convolution over the chunk's input channels with the block-diagonal weights of its `s` groups.

The array's lane r only reads bank r (mod R) of the activation memory, and the writer writes whole blocks
of C channels, so a chunk's input and output channels must start at a multiple of R (= C in the RTL):
`s` is the fewest groups for which both do. Groups whose channel counts are multiples of R run one per
chunk (no MAC is spent on a zero block); tiny groups are packed (s groups share the array, and the zero
blocks between them cost cycles, not MACs); when no smaller chunk aligns, all groups form one chunk.
"""
from __future__ import annotations

import numpy as np


def groups_per_chunk(groups: int, in_per_group: int, out_per_group: int, rows: int) -> int:
    """s: the fewest groups (a divisor of `groups`) whose input and output channels fill whole R blocks."""
    return next(s for s in range(1, groups + 1)
                if groups % s == 0 and (s == groups or (s * in_per_group % rows == 0 and
                                                        s * out_per_group % rows == 0)))


def chunk_weights(w: np.ndarray, groups: int, per_chunk: int, chunk: int) -> np.ndarray:
    """The weights [M, C_in / groups, ...] of a grouped convolution as chunk `chunk`'s convolution:
    [s * M / groups, s * C_in / groups, ...], group g's block on the diagonal, zero elsewhere."""
    mg, cg = w.shape[0] // groups, w.shape[1]
    out = np.zeros((per_chunk * mg, per_chunk * cg, *w.shape[2:]), w.dtype)
    for i in range(per_chunk):
        g = chunk * per_chunk + i
        out[i * mg:(i + 1) * mg, i * cg:(i + 1) * cg] = w[g * mg:(g + 1) * mg]
    return out
