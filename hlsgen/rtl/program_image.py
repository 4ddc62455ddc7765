"""program.bin: a layer program as the overlay's top loads it (`--program external`; rtl/hg_program_loader.v,
docs/rtl.md "The program in external memory").

The image is a header, then the tables one after the other: the layer table (its rows packed at the
overlay's field widths, the first field in the lowest bits), the tap words, the parameter words, the
lookup-table entries, the divisor words, the move table (the dma rows, at their own fields' widths) and the
weight words when the weights fit the top's weight RAM (none when they stream from weights.bin). An entry takes a power of two of AXI4 beats (the fewest that
hold it; beat 0 holds its lowest bits, little-endian as an AXI4 slave puts byte k on bits [8k, 8k + 8)) and
sits at an offset that is a multiple of its size, so every entry is one burst that never crosses a 4 KiB
page once the image's base is aligned to `slot_bytes`. The header is HEADER_BITS of 32-bit words: MAGIC and
VERSION, each table's entry count, then the input and output maps' counts and geometry (HEADER_WORDS).
"""
from __future__ import annotations

from dataclasses import dataclass

from .overlay import MAX_INPUTS, MAX_OUTPUTS
from .program import Program
from .words import divisor_word

MAGIC = 0x4850  # "HP"
VERSION = 6  # 2: the move table; 3: the input's and outputs' elements; 4: up to MAX_INPUTS and MAX_OUTPUTS maps;
# 5: the weight table (weights loaded into the weight RAM); 6: the first row under the input stream (in_need)
HEADER_BITS = 2048
# after word 0 (MAGIC << 16 | VERSION) and one count per table: the maps' counts and totals, then each input
# map's and each output map's geometry in three words (`place`: base in [23:0], lg in [26:24], plane in bit 28;
# pixels; channels), as the top slices them
MAP_WORDS = ("place", "pixels", "channels")
HEADER_WORDS = ("in_maps", "out_maps", "in_dram", "in_elements", "out_elements", "in_need", "in_need_step",
                *(f"in{k}_{w}" for k in range(MAX_INPUTS) for w in MAP_WORDS),
                *(f"out{k}_{w}" for k in range(MAX_OUTPUTS) for w in MAP_WORDS))
PLACE_LG, PLACE_PLANE = 24, 28  # the bits of a `place` word past the base


@dataclass(frozen=True)
class Table:
    name: str
    width: int  # bits of an entry
    entries: tuple[int, ...]

    def beats_lg(self, data_bits: int) -> int:
        """log2 of the beats an entry takes."""
        return (max(-(-self.width // data_bits), 1) - 1).bit_length()


def _rows(layers, fields: list[tuple[str, int]]) -> tuple[int, ...]:
    """Table rows: each layer's fields packed, the first in the lowest bits."""
    rows = []
    for layer in layers:
        row, offset = 0, 0
        for name, width in fields:
            row |= (layer.fields.get(name, 0) & ((1 << width) - 1)) << offset
            offset += width
        rows.append(row)
    return tuple(rows)


def tables(program: Program, fields: list[tuple[str, int]], moves: list[tuple[str, int]]) -> tuple[Table, ...]:
    """The tables the overlay loads, in the image's order; `fields` are the layer table's (name, width),
    `moves` the move table's."""
    shared, t = program.word_parameters, program.target
    return (Table("layers", sum(w for _, w in fields), _rows(program.compute, fields)),
            Table("taps", program.rows * shared["TAP_W"], tuple(program.taps)),
            Table("params", program.cols * shared["PAR_W"], tuple(program.params)),
            Table("lut", t.widths.operand_bits, tuple(v & ((1 << t.widths.operand_bits) - 1) for v in program.lut)),
            Table("divisors", divisor_word().width, tuple(program.divisors)),
            Table("moves", sum(w for _, w in moves), _rows(program.moves, moves)),
            Table("weights", program.cols * program.weight_word_slices,
                  tuple(program.weights) if program.weights_loaded else ()))


def header_beats(data_bits: int) -> int:
    return HEADER_BITS // data_bits


def slot_bytes(tables_: tuple[Table, ...], data_bits: int) -> int:
    """The image's alignment: its largest entry (or the header), in bytes."""
    beats = max([header_beats(data_bits)] + [1 << table.beats_lg(data_bits) for table in tables_])
    return beats * data_bits // 8


def header(program: Program) -> dict[str, int]:
    """The maps' words (HEADER_WORDS; the maps a model lacks are 0)."""
    words = dict.fromkeys(HEADER_WORDS, 0)
    words |= {"in_maps": len(program.inputs), "out_maps": len(program.outputs),
              "in_dram": int(program.input_in_dram),
              "in_elements": sum(m.pixels * m.channels for m in program.inputs),
              "out_elements": sum(m.pixels * m.channels for m in program.outputs)}
    if program.stream_need is not None:  # the first row runs under the input stream (0: it waits for all of it)
        words |= {"in_need": program.stream_need[0], "in_need_step": program.stream_need[1]}
    for side, maps in (("in", program.inputs), ("out", program.outputs)):
        for k, m in enumerate(maps):
            words |= {f"{side}{k}_place": m.base | m.lg << PLACE_LG | m.plane << PLACE_PLANE,
                      f"{side}{k}_pixels": m.pixels, f"{side}{k}_channels": m.channels}
    return words


def program_image(program: Program, fields: list[tuple[str, int]], moves: list[tuple[str, int]]) -> bytes:
    data_bits = program.target.external_memory.data_bits
    tables_ = tables(program, fields, moves)
    geometry = header(program)
    words = [MAGIC << 16 | VERSION] + [len(table.entries) for table in tables_] + [geometry[k] for k in HEADER_WORDS]
    image = bytearray(b"".join(w.to_bytes(4, "little") for w in words).ljust(HEADER_BITS // 8, b"\0"))
    for table in tables_:
        size = (data_bits << table.beats_lg(data_bits)) // 8
        for entry in table.entries:  # each at a multiple of its size, as the loader reads it (an empty table: none)
            image.extend(b"\0" * (-len(image) % size))
            image.extend(entry.to_bytes(size, "little"))
    return bytes(image)
