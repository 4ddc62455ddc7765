"""The program in external memory (`--program external`, docs/rtl.md "The program in external memory"): the
generated top depends only on the target. Every width, memory depth and table capacity below comes from the
target (the tables' capacities: hlsgen.hw.overlay_tables); a model's program is encoded at these widths
(hlsgen.rtl.program) and loaded at run time from program.bin (hlsgen.rtl.program_image). A model that needs
more than the overlay holds is refused (exit 3), naming what overflowed.

The activation memory keeps its banks but splits them once for all models (hlsgen.hw.overlay_memory, which
the mapper plans for). Map sides and channel counts run up to MAX_SIDE and MAX_CHANNELS, strides to 31.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import MappingError
from ..hw.overlay_memory import memory_split
from ..hw.overlay_tables import Capacity, capacity
from ..hw.target import Target
from ..hw.tiling import accumulator_depth
from .words import MIN_DIM_W, STRIDE_W

AXI_ADDR_BITS = 32  # the AXI4 masters' byte addresses

MAX_SIDE = 4096  # map height and width
MAX_CHANNELS = 4096
MAX_POOLED_ROW = 1024  # the writer's pooling row buffer (a fused MaxPool's widest input row)
MAX_STRIDE_BITS = STRIDE_W + 1  # strides up to 31
MAX_INPUTS = 4  # input maps the program image's header describes (streamed, or read through memory, in turn)
MAX_OUTPUTS = 12  # output maps likewise (a detector's heads: 3 levels x 3 heads fit; a segment's several outputs)
MIN_WEIGHT_BITS = 2  # the narrowest weights quantization gives (the weight DMA's lookahead is sized by them)


class OverlayFitError(MappingError):
    """The model's program needs more than the target's top holds (still exit 3: it does not fit)."""


@dataclass(frozen=True)
class Overlay:
    """The target's top: the widths of the layer table's fields and of the modules (as Program.widths), the
    activation memory's split, the PEs' weight width and the tables' capacities."""

    widths: tuple[tuple[str, int], ...]
    plane_depth: tuple[int, int]
    dw_copies: int
    dw_depth: int
    weight_bits: int  # W_W: the PEs hold any weight up to the operand width
    capacity: Capacity
    pool_depth: int
    weight_words: int  # the weight RAM (buffers.weight): words a program's weights are loaded into when they fit

    @property
    def width(self) -> dict[str, int]:
        return dict(self.widths)


def overlay(target: Target, weight_word_slices: int) -> Overlay:
    """The overlay of `target`, whose weight image has words of `weight_word_slices` slices."""
    R, C = target.array.rows, target.array.cols
    split = memory_split(target)
    planes, copies, dw_depth = split.planes, split.copies, split.copy_depth
    addr_w = max(*planes, copies * dw_depth).bit_length()
    dim_w = max(MIN_DIM_W, MAX_SIDE.bit_length())
    cnt_w = max(MAX_CHANNELS, *planes, target.buffers.accumulator.banks).bit_length() + 1
    weight_bits = target.widths.operand_bits
    # slice addresses over a weight image as large as the AXI4 master addresses
    word_bytes = C * weight_word_slices // 8
    wsa_w = AXI_ADDR_BITS - (word_bytes - 1).bit_length() + (weight_word_slices - 1).bit_length()
    widths = {
        "ADDR_W": addr_w, "DIM_W": dim_w, "OFF_W": max(addr_w, dim_w + MAX_STRIDE_BITS) + 2, "CNT_W": cnt_w,
        "ST_W": MAX_STRIDE_BITS,
        "PIX_W": max(accumulator_depth(target), R).bit_length() + 1, "VPIX_W": max(addr_w, dim_w) + 1,
        "W_W": weight_bits, "WB_W": weight_bits.bit_length(),
        "WORD_W": AXI_ADDR_BITS - (R - 1).bit_length() + 1, "SEG_W": cnt_w, "WSA_W": wsa_w,
    }
    return Overlay(tuple(widths.items()), planes, copies, dw_depth, weight_bits, capacity(target),
                   min(MAX_POOLED_ROW, 1 << max(planes[0] - 1, 1).bit_length()),
                   target.buffers.weight.bytes // word_bytes)


def check_fits(shape: Overlay, target: Target, needs: dict[str, int], what: dict[str, str]) -> None:
    """Refuse (exit 3) a model whose program needs more than the overlay: `needs` maps a width or capacity name
    (a key of shape.width, or "plane0", "plane1", "dw_copies", "dw_depth", "pool_depth", or a Capacity field)
    to what the model needs; `what` says in words what each is."""
    have = shape.width | {"plane0": shape.plane_depth[0], "plane1": shape.plane_depth[1],
                          "dw_copies": shape.dw_copies, "dw_depth": shape.dw_depth, "pool_depth": shape.pool_depth,
                          "weight_words": shape.weight_words,
                          **vars(shape.capacity)}
    for name, need in needs.items():
        if need > have[name]:
            raise OverlayFitError(f"--program external: the model needs {need:,} {what.get(name, name)}, the "
                                  f"overlay of target {target.name!r} holds {have[name]:,} (docs/rtl.md, \"The "
                                  "program in external memory\"); build with --program rom")

