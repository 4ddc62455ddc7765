"""Weights in external memory (`rtl/hg_weight_dma.v`): the weight image the testbench (or a host) loads into
DRAM, and the sizes of the DMA's tile slots.

The image is the weight ROM's words (hlsgen.rtl.weight_rom), each one AXI4 beat or a power of two of them:
the program compiler sets the slices per word to the larger of the ROM's (a power of two at or above the
widest weights) and data_bits / C, so a row still straddles at most two words, every weight tile is a few
whole words, and a port narrower than a row (systolic32x32's 128 bits, 32 weights of 8 bits) takes a word in
several beats. Words are little-endian, as an AXI4 slave puts byte k of a beat on bits [8k, 8k + 8): beat j
of a word holds its bits [j * data_bits, (j + 1) * data_bits).
"""
from __future__ import annotations

from .overlay import MIN_WEIGHT_BITS
from .program import ARRAY, Program


def word_bytes(program: Program) -> int:
    return program.cols * program.weight_word_slices // 8


def word_beats(program: Program) -> int:
    """AXI4 beats per word of the weight image."""
    return word_bytes(program) * 8 // program.target.external_memory.data_bits


def weight_image(program: Program) -> bytes:
    size = word_bytes(program)
    return b"".join(word.to_bytes(size, "little") for word in program.weights)


def tile_words(program: Program) -> int:
    """Words one slot holds: the most any weight tile spans (from the slice it starts at), rounded up to a
    power of two. The overlay's: any tile of weights up to W_W bits, from any slice."""
    s, words = program.weight_word_slices, 1
    if program.overlay is not None:
        return 1 << ((program.rows * program.widths["W_W"] - 1) // s + 1).bit_length()
    for layer in program.layers:
        if layer.kind == ARRAY:
            f = layer.fields
            span = program.rows * f["w_bits"]
            for k in range(f["tr"] * f["tc"]):
                first = f["w_base"] + k * span
                words = max(words, (first + span - 1) // s - first // s + 1)
    return 1 << (words - 1).bit_length()


def weight_depth(program: Program) -> int:
    """Words the weight slice addresses cover: the ROM's, or in external memory at least two slots' worth, so
    that a word address relative to a slot is never wider than an absolute one."""
    words = max(len(program.weights), 1)
    return max(words, 2 * tile_words(program)) if program.weights_external else words


# Cycles the testbench's AXI RAM (cocotbext-axi) takes from a read request to its first beat; the testbench
# delays requests by the rest of the target's read_latency.
RAM_LATENCY = 2


def tiles_ahead(program: Program) -> int:
    """Tiles the DMA may request before their data arrives: the bytes the port moves in one read latency, in
    tiles of the narrowest layer (in the overlay: of the narrowest weights, 2 bits), plus the two the slots hold,
    so the latency never starves the array."""
    memory = program.target.external_memory
    if memory is None:  # a target without DRAM: every weight is on chip, no read latency to cover
        return 2
    narrowest = min([layer.row.weight_bits for layer in program.layers if layer.kind == ARRAY] or [8])
    if program.overlay is not None:
        narrowest = MIN_WEIGHT_BITS
    tile_bytes = program.rows * program.cols * narrowest // 8
    return -(-memory.read_latency * round(memory.bytes_per_cycle * 1000) // (tile_bytes * 1000)) + 2
