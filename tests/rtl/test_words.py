"""One definition of the layouts shared by Python and Verilog (hlsgen/rtl/words.py): the hand-written modules
slice no word by a literal offset, the generated top hands every shared parameter down to every module that
declares it, and the words pack what the program compiler puts in them. (The whole-model sims check end to
end that the Verilog unpacks what Python packs.)"""
import re

import pytest

from hlsgen.hw import load_target
from hlsgen.rtl import rtl_sources
from hlsgen.rtl.render import write_rtl
from hlsgen.rtl.words import divisor_word, param_word, tap_word, verilog_parameters
from tests.hw.models import integer_graph
from tests.rtl.program_of import rtl_program

SHARED = tuple(verilog_parameters(32, 12))
# what the modules wrote before the layouts had one source: the parameter word's offsets (38, 22, 6), the
# tap word's slices, and the 4-bit (strides, pooling, upsampling), 6-bit (shifts) and 17-bit (vector
# multipliers) fields as literal ranges or constants
LITERALS = [r"\b38\b", r"\+\s*(22|6)\s*\+:", r"ADDR_W\s*\+\s*2\s*\*\s*DIM_W", r"ADDR_W\s*\+\s*DIM_W\s*-\s*1",
            r"\[(3|5|16):0\]", r"\b(4|6|17)'[dbh]", r"\.(" + "|".join(SHARED) + r")\(\d"]
INSTANCE = re.compile(r"^\s*(hg_\w+)\s*#\((.*?)\)\s*\w+\s*\(", re.S | re.M)  # not the declarations


def declared(module_text: str) -> set[str]:
    return set(re.findall(r"parameter\s+integer\s+(\w+)", module_text))


@pytest.mark.parametrize("source", rtl_sources(), ids=lambda p: p.stem)
def test_no_module_repeats_a_shared_layout_as_a_literal(source):
    code = "\n".join(line.split("//")[0] for line in source.read_text().splitlines())
    for pattern in LITERALS:
        assert not re.search(pattern, code), f"{source.name}: {re.search(pattern, code).group(0)!r}"


def test_the_generated_top_sets_every_shared_parameter_all_the_way_down(tmp_path):
    """The top defines each shared parameter from words.py, and every instance of a module declaring one
    (in the top and inside the hand-written modules) passes it on: no module default is ever used."""
    program = rtl_program(integer_graph("mobilenet"), load_target("systolic16x16"))
    files = write_rtl(program, tmp_path)
    top = (files.folder / f"{files.top}.v").read_text()
    for name, value in program.word_parameters.items():
        assert f"localparam integer {name} = {value};" in top
    params = {src.stem: declared(src.read_text()) & set(SHARED) for src in rtl_sources()}
    instances = 0
    for text in [top] + [src.read_text() for src in rtl_sources()]:
        for module, given in INSTANCE.findall(text):
            missing = {name for name in params[module] if f".{name}(" not in given}
            assert not missing, f"an instance of {module} leaves {sorted(missing)} at their defaults"
            instances += bool(params[module])
    assert instances >= 10


def test_the_words_pack_fields_from_the_least_significant_bit():
    par = param_word(32)
    assert [(f.name, f.offset, f.width) for f in par.fields] == [
        ("shift", 0, 6), ("neg", 6, 16), ("mult", 22, 16), ("bias", 38, 32)]
    word = par.pack(bias=-3, mult=40000, neg=7, shift=33)
    assert word >> 38 == (1 << 32) - 3 and (word >> 22) & 0xFFFF == 40000 and (word >> 6) & 0xFFFF == 7
    assert word & 63 == 33 and word < 1 << par.width
    tap = tap_word(10)
    assert tap.width == 1 + 8 + 8 + 10 and tap.pack(valid=1) == 1 << 26
    assert tap.pack(dy=2, dx=1) == (2 << 18) | (1 << 10)
    div = divisor_word()
    assert [(f.name, f.offset, f.width) for f in div.fields] == [("mult", 0, 17), ("shift", 17, 6)]
    assert div.pack(mult=50859, shift=18) == (18 << 17) | 50859 and div.width == 23
    assert {"DIV_W": 23, "DIV_MULT_LSB": 0, "DIV_SHIFT_LSB": 17}.items() <= verilog_parameters(32, 12).items()
