"""A simple, documented resource estimate for a target, and its fit against the device budget.

Per processing element (R x C of them): 1 DSP (an 8x8-bit multiply-accumulate), 80 LUT, 64 FF (activation,
weight, shadow weight and 32-bit partial-sum registers plus control). Per array column (the C requantizer
lanes and the C vector-unit lanes): 4 DSP (the 32x16-bit requantizer multiply takes 2, the vector unit's
two operand multipliers 2), 300 LUT, 200 FF. Fixed: sequencer, AXI-Stream ports and address generators,
5,000 LUT and 4,000 FF. BRAM (18 Kib blocks of 2,304 bytes): each bank of the activation, weight and
accumulator memories rounds up to whole blocks (the window generator reads the activation memory
directly: there is no line buffer to store); the target's own top (`--program external`) adds its program
tables, each a block RAM of its capacity's depth and its widest entry's width, in the cheapest aspect ratio
(hlsgen.hw.overlay_tables). The same blocks count on Lattice ECP5 targets: a DP16KD is 18 Kib with the
RAMB18's aspect ratios, so `device.bram_18k` is the part's DP16KD count (LUT and FF stay in the units above;
an ECP5 LUT4 holds less logic than a 6-input LUT). docs/mapping.md repeats this table.
"""
from __future__ import annotations

import math

from .overlay_tables import capacity, entry_bits
from .target import Target

DSP_PER_PE, LUT_PER_PE, FF_PER_PE = 1, 80, 64
DSP_PER_COLUMN, LUT_PER_COLUMN, FF_PER_COLUMN = 4, 300, 200
LUT_FIXED, FF_FIXED = 5000, 4000
BRAM_BYTES = 2304  # one 18 Kib block
RESOURCES = ("dsp", "lut", "ff", "bram_18k")
# Block RAM aspect ratios of an 18 Kib block (depth x width), as Vitis maps an array onto them.
BRAM18_SHAPES = ((16384, 1), (8192, 2), (4096, 4), (2048, 9), (1024, 18), (512, 36))


def _blocks(nbytes: int) -> int:
    return max(1, math.ceil(nbytes / BRAM_BYTES))


def bram_blocks(target: Target, program_external: bool = False) -> dict[str, int]:
    """18 Kib blocks per on-chip memory; with `program_external`, also per program table ("program_<table>")."""
    out = {}
    for name in ("input", "weight", "accumulator"):
        buffer = getattr(target.buffers, name)
        out[name] = buffer.banks * _blocks(math.ceil(buffer.bytes / buffer.banks))
    if program_external:
        bits = entry_bits(target)
        out |= {f"program_{name}": bram18(depth, bits[name]) for name, depth in vars(capacity(target)).items()}
    return out


def estimate(target: Target, program_external: bool = False) -> dict[str, int]:
    pes, cols = target.array.rows * target.array.cols, target.array.cols
    return {
        "dsp": DSP_PER_PE * pes + DSP_PER_COLUMN * cols,
        "lut": LUT_PER_PE * pes + LUT_PER_COLUMN * cols + LUT_FIXED,
        "ff": FF_PER_PE * pes + FF_PER_COLUMN * cols + FF_FIXED,
        "bram_18k": sum(bram_blocks(target, program_external).values()),
    }


def fit(target: Target, used: dict[str, int]) -> dict:
    """{"ok": every resource fits, "budget": the device's, "fraction": used / budget} per resource."""
    budget = {name: getattr(target.device, name) for name in RESOURCES}
    return {"ok": all(used[n] <= budget[n] for n in RESOURCES), "budget": budget,
            "fraction": {n: round(used[n] / budget[n], 4) for n in RESOURCES}}


def bram18(depth: int, width: int) -> int:
    """18 Kib blocks holding a depth x width memory (the cheapest aspect ratio)."""
    if depth <= 0 or width <= 0:
        return 0
    return min(math.ceil(depth / d) * math.ceil(width / w) for d, w in BRAM18_SHAPES)
