"""The activation memory of a target's own top (`--program external`, hlsgen.rtl.overlay): its banks
(buffers.input / R words each) split once for every model, the target's `top_memory` fractions to plane 0
and plane 1 and the rest to the depthwise window memory (R banks: hlsgen.hw.window_banks). The mapper places a
model's maps within this split when the model's program is to be loaded, and tries it for the model's own top
too (hlsgen.hw.banding.fit_activation_memory)."""
from __future__ import annotations

from dataclasses import dataclass

from .target import Target


@dataclass(frozen=True)
class MemorySplit:
    planes: tuple[int, int]  # words per bank of plane 0 and plane 1
    copies: int  # banks of the depthwise window memory (R)
    copy_depth: int  # words per bank

    def fits(self, plane_depth: tuple[int, int], copies: int, copy_depth: int) -> bool:
        return (all(d <= p for d, p in zip(plane_depth, self.planes)) and copies <= self.copies
                and copy_depth <= self.copy_depth)


def memory_split(target: Target) -> MemorySplit:
    words = target.buffers.input.bytes // target.array.rows
    copies = target.array.rows
    planes = (int(words * target.top_memory.plane0), int(words * target.top_memory.plane1))
    return MemorySplit(planes, copies, (words - sum(planes)) // copies)
