"""The RTL's weight ROM (`rtl/hg_weight_rom.v`): every array layer's weights at the width quantization chose
for that layer, with no gaps.

A tile row of C weights of w bits is stored as w slices of C bits, slice j holding bit j of every weight
(two's complement, lane c at bit c): sign-extending a row to the PEs' W_W bits is then a choice per slice
(slice j for j < w, else slice w - 1) instead of a shifter per lane. Rows follow one another slice after
slice; a ROM word holds `slices_per_word` slices, the power of two at or above W_W, so the slice address
splits into word and slice by bit selection, and a row (at most W_W slices) straddles at most two words,
which the ROM reads together: one row per cycle, as many ROM bits as the weights need (rounded up to a word
once, at the end).
"""
from __future__ import annotations

import numpy as np


def slices_per_word(widest_bits: int) -> int:
    return 1 << (widest_bits - 1).bit_length()


class WeightSlices:
    """The slice stream of a weight ROM whose rows hold `lanes` weights."""

    def __init__(self, lanes: int):
        self.lanes = lanes
        self.slices: list[int] = []

    def append(self, rows: np.ndarray, bits: int) -> int:
        """Append the rows [n, lanes] of one layer at `bits` each; returns the slice address of the first."""
        start = len(self.slices)
        rows = np.asarray(rows, np.int64).reshape(-1, self.lanes)
        if rows.size and (rows.min() < -(1 << (bits - 1)) or rows.max() >= 1 << (bits - 1)):
            raise ValueError(f"a weight is outside the {bits}-bit range quantization declared")
        planes = (rows[:, None, :] >> np.arange(bits, dtype=np.int64)[None, :, None]) & 1  # [row, bit, lane]
        packed = np.packbits(planes.astype(np.uint8), axis=2, bitorder="little")
        self.slices.extend(int.from_bytes(s.tobytes(), "little") for s in packed.reshape(-1, packed.shape[2]))
        return start

    def words(self, per_word: int) -> list[int]:
        """The ROM's words: slice i of word k is slice k * per_word + i, in bits [i * lanes, (i + 1) * lanes)."""
        words = []
        for k in range(0, len(self.slices), per_word):
            word = 0
            for i, s in enumerate(self.slices[k:k + per_word]):
                word |= s << (i * self.lanes)
            words.append(word)
        return words
