"""Weights in external memory (`rtl/hg_weight_dma.v`): the weight image the testbench (or a host) loads into
DRAM, and the sizes of the DMA's tile slots.

The image is the weight ROM's words (hlsgen.rtl.weight_rom) with one word per AXI4 beat: the program
compiler sets the slices per word to data_bits / C, so a row still straddles at most two words and every
weight tile is a few whole beats. Words are little-endian, as an AXI4 slave puts byte k of a beat on bits
[8k, 8k + 8).
"""
from __future__ import annotations

from .program import ARRAY, Program

AXI_ADDR_BITS = 32


def beat_bytes(program: Program) -> int:
    return program.cols * program.weight_word_slices // 8


def weight_image(program: Program) -> bytes:
    size = beat_bytes(program)
    return b"".join(word.to_bytes(size, "little") for word in program.weights)


def tile_words(program: Program) -> int:
    """Beats one slot holds: the most any weight tile spans (from the slice it starts at), rounded up to a
    power of two."""
    s, beats = program.weight_word_slices, 1
    for layer in program.layers:
        if layer.kind == ARRAY:
            f = layer.fields
            span = program.rows * f["w_bits"]
            for k in range(f["tr"] * f["tc"]):
                first = f["w_base"] + k * span
                beats = max(beats, (first + span - 1) // s - first // s + 1)
    return 1 << (beats - 1).bit_length()


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
    tiles of the narrowest layer, plus the two the slots hold, so the latency never starves the array."""
    memory = program.target.external_memory
    narrowest = min([layer.row.weight_bits for layer in program.layers if layer.kind == ARRAY] or [8])
    tile_bytes = program.rows * program.cols * narrowest // 8
    return -(-memory.read_latency * round(memory.bytes_per_cycle * 1000) // (tile_bytes * 1000)) + 2
