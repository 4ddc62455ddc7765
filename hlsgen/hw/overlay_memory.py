"""The activation memory of a target's own top (`--program external`, hlsgen.rtl.overlay): its banks
(buffers.input / R words each) split once for every model, three eighths to plane 0, one eighth to plane 1
and half to min(R, 9) depthwise window copies (a 3x3 kernel's taps). The mapper places a model's maps within
this split when the model's program is to be loaded (hlsgen.hw.banding.fit_activation_memory)."""
from __future__ import annotations

from dataclasses import dataclass

from .target import Target

DW_COPIES = 9


@dataclass(frozen=True)
class MemorySplit:
    planes: tuple[int, int]  # words per bank of plane 0 and plane 1
    copies: int  # depthwise window copies
    copy_depth: int  # words per copy

    def fits(self, plane_depth: tuple[int, int], copies: int, copy_depth: int) -> bool:
        return (all(d <= p for d, p in zip(plane_depth, self.planes)) and copies <= self.copies
                and copy_depth <= self.copy_depth)


def memory_split(target: Target) -> MemorySplit:
    words = target.buffers.input.bytes // target.array.rows
    copies = min(target.array.rows, DW_COPIES)
    return MemorySplit((words * 3 // 8, words // 8), copies, words // 2 // copies)
