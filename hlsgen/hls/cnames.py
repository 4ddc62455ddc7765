"""C++ spelling: identifiers, ap types, integer literals and array initializers."""
from __future__ import annotations

import re

import numpy as np

from ..quant.arith import signed_bits_for
from ..quant.params import TensorQuant

# C++ keywords, plus names the generated sources or their headers already use.
RESERVED = frozenset("""
alignas alignof and and_eq asm auto bitand bitor bool break case catch char char16_t char32_t class compl
const constexpr const_cast continue decltype default delete do double dynamic_cast else enum explicit
export extern false float for friend goto if inline int long mutable namespace new noexcept not not_eq
nullptr operator or or_eq private protected public register reinterpret_cast return short signed sizeof
static static_assert static_cast struct switch template this thread_local throw true try typedef typeid
typename union unsigned using virtual void volatile wchar_t while xor xor_eq
main hls std ap_int ap_uint ap_int_base hlsgen_requant
""".split()) | frozenset(  # locals beside the ports in the top and testbench: a port `n` would shadow a loop's `n`
    "n i j k b c row count argc per_sample amem dwmem wmem fmem program run_row".split())

VALUES_PER_LINE = 16


class Names:
    """Unique C identifiers for one design: every global name goes through `take`."""

    def __init__(self):
        self.taken: set[str] = set()

    def take(self, wanted: str) -> str:
        base = re.sub(r"[^0-9A-Za-z_]", "_", wanted) or "x"
        base = re.sub(r"__+", "_", base)
        if base[0].isdigit() or base.startswith("_"):
            base = "n" + base if base[0].isdigit() else "n" + base
        if base in RESERVED:
            base += "_"
        name, i = base, 2
        while name in self.taken:
            name, i = f"{base}_{i}", i + 1
        self.taken.add(name)
        return name


def ap_type(bits: int, signed: bool) -> str:
    return f"ap_int<{bits}>" if signed else f"ap_uint<{bits}>"


def tensor_type(quant: TensorQuant) -> str:
    return ap_type(quant.bits, quant.signed)


def signed_type_for(values) -> str:
    """The narrowest ap_int holding every value (at least 2 bits)."""
    values = np.asarray(values, np.int64)
    return ap_type(signed_bits_for(int(np.abs(values).max(initial=0))), True)


def unsigned_type_for(values) -> str:
    values = np.asarray(values, np.int64)
    if values.size and values.min() < 0:
        raise ValueError("negative value for an unsigned type")
    return ap_type(max(int(values.max(initial=0)).bit_length(), 1), False)


def storage_type(values) -> str:
    """The narrowest C fixed-width integer type holding every value: how constant arrays are stored.

    Plain integers, not ap types: an array of ap types needs a constructor call per element at start-up,
    which makes g++ spend minutes on a large weights header; the kernels convert at the point of use."""
    values = np.asarray(values, np.int64)
    lo, hi = int(values.min(initial=0)), int(values.max(initial=0))
    for bits in (8, 16, 32):
        if -(1 << (bits - 1)) <= lo and hi < (1 << (bits - 1)):
            return f"int{bits}_t"
        if lo >= 0 and hi < (1 << bits):
            return f"uint{bits}_t"
    return "int64_t"


def literal(value: int) -> str:
    """An integer literal of any int64 value; LL beyond 32 bits."""
    value = int(value)
    if -(1 << 31) < value < (1 << 31):
        return str(value)
    if value == -(1 << 63):
        return "(-9223372036854775807LL - 1)"
    return f"{value}LL"


def initializer(values: np.ndarray, indent: int = 0) -> str:
    """A nested brace initializer of an N-d integer array, one innermost row (wrapped) per line.

    Braces never touch ("{ {" is written as "{" newline "{"), so no "{{" ever appears in a source."""
    values = np.asarray(values)
    pad = "    " * (indent + 1)
    if values.ndim <= 1:
        flat = [literal(v) for v in values.reshape(-1)]
        if len(flat) <= VALUES_PER_LINE:
            return "{" + ", ".join(flat) + "}"
        rows = [", ".join(flat[i : i + VALUES_PER_LINE]) for i in range(0, len(flat), VALUES_PER_LINE)]
        return "{\n" + ",\n".join(pad + r for r in rows) + "\n" + "    " * indent + "}"
    inner = [pad + initializer(sub, indent + 1) for sub in values]
    return "{\n" + ",\n".join(inner) + "\n" + "    " * indent + "}"
