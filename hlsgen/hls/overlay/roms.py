"""The overlay's read-only memories as plain data: the bit-addressed weight ROM (each layer's weights
contiguous at the width quantization chose for it) and the sizes of on-chip memories in 18 Kib blocks."""
from __future__ import annotations

import math

import numpy as np

from ...hw.resources import bram18

__all__ = ["BitStream", "WORD_BITS", "bram18"]

WORD_BITS = 64  # a weight ROM word (uint64_t in the C++)


class BitStream:
    """Values appended at chosen widths (two's complement), least significant bit first."""

    def __init__(self):
        self._chunks: list[np.ndarray] = []
        self.bits = 0

    def append(self, values: np.ndarray, width: int) -> int:
        """Append `values` (int64) at `width` bits each; returns the bit offset of the first one."""
        start = self.bits
        v = np.asarray(values, np.int64).reshape(-1)
        lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
        if v.size and (v.min() < lo or v.max() > hi):
            raise ValueError(f"a weight is outside the {width}-bit range quantization declared")
        bits = (v[:, None] >> np.arange(width, dtype=np.int64)) & 1
        self._chunks.append(bits.astype(np.uint8).reshape(-1))
        self.bits += v.size * width
        return start

    def words(self, spare: int) -> list[int]:
        """The stream as 64-bit words, plus `spare` zero words (a load reads a few words past its own)."""
        bits = np.concatenate(self._chunks) if self._chunks else np.zeros(0, np.uint8)
        padded = np.zeros(math.ceil(bits.size / WORD_BITS) * WORD_BITS + spare * WORD_BITS, np.uint8)
        padded[:bits.size] = bits
        packed = np.packbits(padded, bitorder="little").view("<u8")
        return [int(w) for w in packed]
