"""program.bin: a layer program as the overlay's top loads it (`--program external`; rtl/hg_program_loader.v,
docs/rtl.md "The program in external memory").

The image is a header, then the tables one after the other: the layer table (its rows packed at the
overlay's field widths, the first field in the lowest bits), the tap words, the parameter words, the
lookup-table entries, the divisor words and the move table (the dma rows, at their own fields' widths). An entry takes a power of two of AXI4 beats (the fewest that
hold it; beat 0 holds its lowest bits, little-endian as an AXI4 slave puts byte k on bits [8k, 8k + 8)) and
sits at an offset that is a multiple of its size, so every entry is one burst that never crosses a 4 KiB
page once the image's base is aligned to `slot_bytes`. The header is HEADER_BITS of 32-bit words: MAGIC and
VERSION, each table's entry count, then the input and the output map's geometry (HEADER_WORDS).
"""
from __future__ import annotations

from dataclasses import dataclass

from .program import Program
from .words import divisor_word

MAGIC = 0x4850  # "HP"
VERSION = 3  # 2: the move table; 3: the input's and the outputs' elements (inputs and outputs through memory)
HEADER_BITS = 1024
# after word 0 (MAGIC << 16 | VERSION) and one count per table: the maps' geometry, as the top slices it
HEADER_WORDS = ("in_base", "in_lg", "in_pixels", "in_channels", "in_plane", "in_dram", "out_base", "out_lg",
                "out_pixels", "out_channels", "out_plane", "in_elements", "out_elements")


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
            Table("moves", sum(w for _, w in moves), _rows(program.moves, moves)))


def header_beats(data_bits: int) -> int:
    return HEADER_BITS // data_bits


def slot_bytes(tables_: tuple[Table, ...], data_bits: int) -> int:
    """The image's alignment: its largest entry (or the header), in bytes."""
    beats = max([header_beats(data_bits)] + [1 << table.beats_lg(data_bits) for table in tables_])
    return beats * data_bits // 8


def header(program: Program) -> dict[str, int]:
    """The maps' geometry words (HEADER_WORDS)."""
    inp, out = program.maps[program.input_map], program.outputs[0]
    return {"in_base": inp.base, "in_lg": inp.lg, "in_pixels": inp.pixels, "in_channels": inp.channels,
            "in_plane": inp.plane, "in_dram": int(program.input_in_dram), "out_base": out.base, "out_lg": out.lg,
            "out_pixels": out.pixels, "out_channels": out.channels, "out_plane": out.plane,
            "in_elements": inp.pixels * inp.channels, "out_elements": out.pixels * out.channels}


def program_image(program: Program, fields: list[tuple[str, int]], moves: list[tuple[str, int]]) -> bytes:
    data_bits = program.target.external_memory.data_bits
    tables_ = tables(program, fields, moves)
    geometry = header(program)
    words = [MAGIC << 16 | VERSION] + [len(table.entries) for table in tables_] + [geometry[k] for k in HEADER_WORDS]
    image = bytearray(b"".join(w.to_bytes(4, "little") for w in words).ljust(HEADER_BITS // 8, b"\0"))
    for table in tables_:
        size = (data_bits << table.beats_lg(data_bits)) // 8
        image.extend(b"\0" * (-len(image) % size))
        for entry in table.entries:
            image.extend(entry.to_bytes(size, "little"))
    return bytes(image)
