"""The depthwise window memory (docs/hardware.md, "Depthwise mode"): in depthwise mode PE row r reads tap r of
the pixel, so a cycle needs up to R words (a word: the C channels of one pixel) at once. The maps a depthwise
row reads are kept, besides their plane, in R banks: word a of the window memory lives in bank a mod R at
address a div R, and a map is laid out there row by row with a pitch of its own (its `window pitch`, at least
its width), chosen so that the taps of every row tile fall in R different banks. A 3x3 kernel on 16 banks
takes a pitch of 3 (mod 16): the taps' offsets dy * pitch + dx are then 0..8. Each word is stored once.
"""
from __future__ import annotations

from collections.abc import Sequence

Taps = Sequence[tuple[int, int]]  # a depthwise kernel's taps (dy, dx) in lane order, dilation included


def banked(taps: Taps, pitch: int, banks: int) -> bool:
    """Whether every row tile (`banks` lanes) of `taps` reads `banks` different banks at `pitch`."""
    for t in range(0, len(taps), banks):
        offsets = {(dy * pitch + dx) % banks for dy, dx in taps[t:t + banks]}
        if len(offsets) < len(taps[t:t + banks]):
            return False
    return True


def window_pitch(width: int, readers: Sequence[Taps], banks: int) -> int | None:
    """The smallest pitch (>= width) at which every depthwise reader's tiles are banked, or None."""
    for pitch in range(width, width + banks):
        if all(banked(taps, pitch, banks) for taps in readers):
            return pitch
    return None


def kernel_taps(kernel: Sequence[int], dilations: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """The taps of a 1-D or 2-D kernel, lane order (row-major), as (dy, dx) offsets."""
    kh, kw = (1, *kernel) if len(kernel) == 1 else tuple(kernel)
    dh, dw = (1, *dilations) if len(dilations) == 1 else tuple(dilations)
    return tuple((ky * dh, kx * dw) for ky in range(kh) for kx in range(kw))
