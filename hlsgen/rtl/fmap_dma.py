"""Feature maps in external memory (`rtl/hg_fmap_dma.v`): the feature-map image a testbench (or a host) gives
the design. Its words are the activation memory's (hlsgen.hw.dram); when the mapping keeps the input there,
the host writes each input image at the input map's words before the design starts on it.
"""
from __future__ import annotations

import numpy as np

from ..hw.dram import pack_map
from .program import Program

# Cycles the testbench's AXI RAM (cocotbext-axi) takes from a write burst's last beat to its response; the
# testbench delays responses by the rest of the target's latency (the cycle model charges a store one
# read_latency for its last response).
B_LATENCY = 2


def image_bytes(program: Program) -> int:
    """The feature-map image's size in bytes."""
    return program.dram_words * program.rows


def input_offset(program: Program) -> int:
    """The byte offset of the input in the feature-map image, of a design whose input lives there."""
    return program.maps[program.input_map].dram_base * program.rows


def input_words(program: Program, images: np.ndarray) -> tuple[int, bytes]:
    """(byte offset in the image, the words of each image one after the other) of the inputs `images`
    [N, ...] of a design whose input lives in the feature-map image."""
    placement = program.maps[program.input_map]
    words = [pack_map(image, placement, program.rows).tobytes() for image in np.asarray(images, np.int64)]
    return input_offset(program), b"".join(words)
