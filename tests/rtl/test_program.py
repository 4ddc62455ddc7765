"""The RTL program of a model: feature-map placement, the bank rule of the line buffer, ROM contents,
and clear refusals of what the RTL does not implement."""
import numpy as np
import pytest

from hlsgen.errors import UnsupportedModelError
from hlsgen.hw import load_target
from hlsgen.rtl.program import ARRAY, compile_program
from tests.hw.models import integer_graph, target_with

MODELS = ["digits", "mnist-8", "residual", "mobilenet"]


@pytest.fixture(scope="module", params=[(m, t) for m in MODELS for t in ("systolic16x16", "systolic8x8")],
                ids=lambda p: f"{p[0]}-{p[1]}")
def program(request):
    model, target = request.param
    return compile_program(integer_graph(model), load_target(target))


def overlap(a, b, base_a, base_b) -> bool:
    alive = a.birth <= b.death and b.birth <= a.death
    return alive and base_a < base_b + b.words and base_b < base_a + a.words


def test_maps_alive_together_never_share_words(program):
    maps = list(program.maps.values())
    for i, a in enumerate(maps):
        for b in maps[i + 1:]:
            assert not (a.plane == b.plane and overlap(a, b, a.base, b.base)), (a.name, b.name)
            assert not (a.dw_read and b.dw_read and overlap(a, b, a.dw_base, b.dw_base)), (a.name, b.name)
        assert a.base + a.words <= program.plane_depth[a.plane]


def test_a_qadd_reads_its_inputs_from_both_planes(program):
    for layer in program.layers:
        if len(layer.inputs) == 2:
            assert program.maps[layer.inputs[0]].plane != program.maps[layer.inputs[1]].plane


def test_every_array_lane_reads_its_own_bank(program):
    """Lane r of a row tile reads input channel k mod C_in (k = t * R + r), which the input keeps in the
    banks j = channel (mod G): bank r must be one of them, so the R reads of a cycle never collide."""
    R = program.rows
    for layer in program.layers:
        if layer.kind != ARRAY or layer.fields["dw"]:
            continue
        x = program.maps[layer.inputs[0]]
        reduction = layer.fields["tr"] * R
        assert all((k % x.channels) % x.banks == (k % R) % x.banks for k in range(reduction)), layer.name


def test_weight_rom_holds_the_weights_in_lane_order(program):
    """The first row tile of the first array layer: lane r, column c is weight (tap, c_in) = divmod(r, C_in)."""
    layer = next(layer for layer in program.layers if layer.kind == ARRAY and not layer.fields["dw"])
    w = program.graph.constants[layer.node.inputs[1]].astype(np.int64)
    bits, C = program.target.widths.operand_bits, program.cols
    c_in = program.maps[layer.inputs[0]].channels
    kw = w.shape[3] if w.ndim == 4 else 1
    for r in range(min(program.rows, w[0].size)):
        word = program.weights[layer.fields["w_base"] + r]
        tap, ci = divmod(r, c_in)
        for c in range(min(C, w.shape[0])):
            got = word >> (c * bits) & ((1 << bits) - 1)
            got -= (1 << bits) if got >> (bits - 1) else 0
            assert got == w[c, ci, tap // kw, tap % kw]


def test_what_the_rtl_cannot_do_is_refused_by_name():
    with pytest.raises(UnsupportedModelError, match=r"layer '.+' \(.+\) has no RTL implementation"):
        compile_program(integer_graph("vector_ops"), load_target("systolic16x16"))
    with pytest.raises(UnsupportedModelError, match="weight-stationary"):
        compile_program(integer_graph("digits"), target_with(array__dataflow="output_stationary"))
