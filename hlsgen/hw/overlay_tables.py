"""The program tables of a target's own top (`--program external`, hlsgen.rtl.overlay): how many entries each
holds, decided from the target alone, and the block RAM they take (hlsgen.hw.resources charges it).

Every table is a synchronous-read block RAM. The layer table holds LAYER_ROWS rows and the move table twice
as many (a banded layer moves its bands in and out); a tap word holds R lanes and a parameter word C, so
their tables hold a fixed number of lanes (TAP_LANES, PARAM_LANES): about the same block RAM on every
target, as many words as a model on that array needs (at most MAX_TAP_WORDS: the smallest array's device
has no more block RAM to give). The published architectures (hlsgen/architectures.py) need at most 651
layer rows, 1,279 moves and 1,284 parameter words (MobileNetV2-0.5 on 8x8) and 3,417 tap words (ResNet-18 on
8x8; 1,861 on 16x16); docs/rtl.md, "The program in external memory", lists them per target.

ENTRY_BITS bounds an entry's width (the RTL's exact widths are at most these: tests/rtl/test_overlay.py),
so that the charge needs nothing but the target.
"""
from __future__ import annotations

from dataclasses import dataclass

from .target import Target

LAYER_ROWS = 1024
TAP_LANES = 48 * 1024
MAX_TAP_WORDS = 4096
PARAM_LANES = 16 * 1024
LUT_ENTRIES = 4096  # 16 lookup tables of 8-bit inputs
DIVISOR_WORDS = 1024
# bits of an entry: a layer row, a move row, a tap lane, a parameter lane, a divisor word
ROW_BITS, MOVE_BITS, TAP_LANE_BITS, PARAM_LANE_BITS, DIVISOR_BITS = 828, 198, 40, 72, 24


@dataclass(frozen=True)
class Capacity:
    """Entries of the overlay's tables: layer-table rows, tap words (one per row tile of a layer), parameter
    words (one per column tile), lookup-table entries, divisor words and move-table rows."""

    layers: int
    taps: int
    params: int
    lut: int
    divisors: int
    moves: int


def capacity(target: Target) -> Capacity:
    return Capacity(layers=LAYER_ROWS, taps=min(TAP_LANES // target.array.rows, MAX_TAP_WORDS),
                    params=PARAM_LANES // target.array.cols, lut=LUT_ENTRIES, divisors=DIVISOR_WORDS,
                    moves=2 * LAYER_ROWS)


def entry_bits(target: Target) -> dict[str, int]:
    """The widest entry of each table (a Capacity field) on `target`."""
    return {"layers": ROW_BITS, "taps": target.array.rows * TAP_LANE_BITS,
            "params": target.array.cols * PARAM_LANE_BITS, "lut": target.widths.operand_bits,
            "divisors": DIVISOR_BITS, "moves": MOVE_BITS}
