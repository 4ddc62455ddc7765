"""The Jinja environment: strict, trimmed, and errors that name the template; C spelling helpers."""
from __future__ import annotations

import numpy as np
import pytest

from hlsgen.hls.cnames import Names, initializer, literal, storage_type
from hlsgen.hls.render import TemplateError, environment, guarded, render


def test_the_environment_is_strict_and_trims_blocks():
    env = environment()
    assert env.trim_blocks and env.lstrip_blocks
    assert env.undefined.__name__ == "StrictUndefined"


def test_an_undefined_variable_fails_naming_the_template():
    with pytest.raises(TemplateError, match=r"run_hls\.tcl\.j2.*'top' is undefined"):
        render("run_hls.tcl.j2")


def test_an_error_in_an_included_template_names_that_template():
    k = {"name": "conv1", "helpers": "array.j2"}  # the family template needs `h`, which is missing
    with pytest.raises(TemplateError, match=r"array\.j2, line \d+"):
        render("layer.j2", k=k)


def test_pragmas_are_hidden_from_plain_compilers():
    assert guarded([], 4) == []
    assert guarded(["#pragma HLS PIPELINE II=1"], 2) == ["  #ifdef __SYNTHESIS__", "  #pragma HLS PIPELINE II=1", "  #endif"]


def test_names_are_unique_c_identifiers():
    names = Names()
    assert names.take("conv1.weight") == "conv1_weight"
    assert names.take("conv1/weight") == "conv1_weight_2"
    assert names.take("8bit") == "n8bit"
    assert names.take("int") == "int_"
    assert names.take("main") == "main_"


def test_literals_and_storage_types_cover_int64():
    assert literal(5) == "5" and literal(-(1 << 31) + 1) == str(-(1 << 31) + 1)
    assert literal(1 << 40) == f"{1 << 40}LL" and literal(-(1 << 63)) == "(-9223372036854775807LL - 1)"
    assert storage_type([-128, 127]) == "int8_t" and storage_type([0, 255]) == "uint8_t"
    assert storage_type([-129]) == "int16_t" and storage_type([1 << 40]) == "int64_t"


def test_initializers_nest_and_never_print_double_braces():
    text = initializer(np.arange(2 * 3 * 20).reshape(2, 3, 20) - 50)
    assert "{{" not in text and "}}" not in text
    values = [int(v) for v in text.replace("{", " ").replace("}", " ").replace(",", " ").split()]
    assert values == list(range(-50, 70))
    assert initializer(np.array([1, -2, 3])) == "{1, -2, 3}"
