"""The bit layouts and field widths the program compiler and the hand-written Verilog share, defined here
and nowhere else: `program.py` packs its ROM words with these `Word`s, `render.py` sizes the layer table with
these widths, and the generated top passes every one of them (`verilog_parameters`) to the modules, which
slice their words by these parameters, never by literal offsets. (A module's parameter defaults only let it
be linted and simulated on its own; the generated top sets them all.)
"""
from __future__ import annotations

from dataclasses import dataclass

# map coordinates: the program's DIM_W (hlsgen.rtl.program) holds every row and column an engine counts, and
# is never below this, so a small model's Verilog does not change with its map sides
MIN_DIM_W = 8
Z_W = 10  # signed zero points and clamp bounds
MULT_W = 16  # the array's requantizer multipliers (positive and LeakyRelu branches)
SHIFT_W = 6  # requantization and vector-unit right shifts
VEC_MULT_W = 17  # the vector unit's multipliers
STRIDE_W = 4  # convolution and pooling strides: the program's ST_W is never narrower (any stride widens it)
POOL_W = 4  # fused MaxPool window sizes and the writer's counters inside a window
UP_W = 4  # nearest-upsampling factors minus one, as the vector engine counts them

MAX_POOL = (1 << POOL_W) - 1
MAX_UPSAMPLING = 1 << UP_W


@dataclass(frozen=True)
class Field:
    name: str
    width: int
    offset: int  # its least significant bit in the word


@dataclass(frozen=True)
class Word:
    """Fields packed from the least significant bit up, in the order given."""
    fields: tuple[Field, ...]

    @classmethod
    def of(cls, *widths: tuple[str, int]) -> Word:
        fields, offset = [], 0
        for name, width in widths:
            fields.append(Field(name, width, offset))
            offset += width
        return cls(tuple(fields))

    @property
    def width(self) -> int:
        return sum(f.width for f in self.fields)

    def __getitem__(self, name: str) -> Field:
        return next(f for f in self.fields if f.name == name)

    def pack(self, **values: int) -> int:
        """Every field's value (two's complement: a signed value keeps its low bits); the rest stays 0."""
        word = 0
        for name, value in values.items():
            f = self[name]
            word |= (int(value) & ((1 << f.width) - 1)) << f.offset
        return word


def param_word(bias_bits: int) -> Word:
    """One lane of the per-channel parameter ROM: the requantizer's shift, LeakyRelu and positive
    multipliers, and the bias at accumulator width."""
    return Word.of(("shift", SHIFT_W), ("neg", MULT_W), ("mult", MULT_W), ("bias", bias_bits))


def tap_word(addr_bits: int, dim_bits: int = MIN_DIM_W) -> Word:
    """One lane of the tap table: the lane's offset in its bank, its kernel column and row (map coordinates
    of DIM_W bits), and whether it reads anything (lanes past a layer's reduction read nothing)."""
    return Word.of(("off", addr_bits), ("dx", dim_bits), ("dy", dim_bits), ("valid", 1))


def divisor_word() -> Word:
    """One entry of the vector unit's divisor table: a windowed average pool's multiplier and shift for one
    window count (hlsgen.quant.int_ops.QAveragePoolAttrs.divisors)."""
    return Word.of(("mult", VEC_MULT_W), ("shift", SHIFT_W))


def verilog_parameters(bias_bits: int, addr_bits: int, dim_bits: int = MIN_DIM_W,
                       stride_bits: int = STRIDE_W) -> dict[str, int]:
    """The module parameters the generated top sets from the words and widths above."""
    par, tap, div = param_word(bias_bits), tap_word(addr_bits, dim_bits), divisor_word()
    return {
        "M_W": MULT_W, "S_W": SHIFT_W, "VM_W": VEC_MULT_W, "ST_W": stride_bits, "PW_W": POOL_W, "UP_W": UP_W,
        "PAR_W": par.width, "PAR_SHIFT_LSB": par["shift"].offset, "PAR_NEG_LSB": par["neg"].offset,
        "PAR_MULT_LSB": par["mult"].offset, "PAR_BIAS_LSB": par["bias"].offset,
        "TAP_W": tap.width, "TAP_OFF_LSB": tap["off"].offset, "TAP_DX_LSB": tap["dx"].offset,
        "TAP_DY_LSB": tap["dy"].offset, "TAP_VALID_LSB": tap["valid"].offset,
        "DIV_W": div.width, "DIV_MULT_LSB": div["mult"].offset, "DIV_SHIFT_LSB": div["shift"].offset,
    }
