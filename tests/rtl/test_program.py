"""The RTL program of a model: feature-map placement, the bank rule of the line buffer, ROM contents,
and clear refusals of what the RTL does not implement."""
import numpy as np
import pytest

from hlsgen.errors import MappingError
from hlsgen.hw import load_target
from hlsgen.rtl.program import ARRAY
from tests.rtl.program_of import rtl_program
from tests.hw.models import integer_graph, target_with

MODELS = ["digits", "mnist-8", "residual", "mobilenet", "autoencoder"]


@pytest.fixture(scope="module", params=[(m, t) for m in MODELS for t in ("systolic16x16", "systolic8x8")],
                ids=lambda p: f"{p[0]}-{p[1]}")
def program(request):
    model, target = request.param
    return rtl_program(integer_graph(model), load_target(target))


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
    banks j = channel (mod G): bank r must be one of them, so the R reads of a cycle never collide. (Lanes
    past the reduction, k >= taps * C_in, read nothing.)"""
    R = program.rows
    for layer in program.layers:
        if layer.kind != ARRAY or layer.fields["dw"]:
            continue
        x = program.maps[layer.inputs[0]]
        w = program.graph.constants[layer.node.inputs[1]]
        reduction = w[0].size if layer.node.op == "QConv" else w.shape[0]
        assert all((k % x.channels) % x.banks == (k % R) % x.banks for k in range(reduction)), layer.name


def test_a_map_read_one_tap_at_a_time_takes_any_channel_count():
    """24 channels on 16 rows: a 1x1 Conv (like a Dense on a 1x1 map) reads lane r's channels r (mod 16), so
    the map keeps R banks; a 3x3 Conv's lanes wrap past channel 23 onto other banks, which is refused."""
    program = rtl_program(integer_graph("odd_channels_1x1"), load_target("systolic16x16"))
    assert program.maps["r1"].channels == 24 and program.maps["r1"].banks == 16
    with pytest.raises(MappingError, match="'r1' has 24 channels.*reads several taps of it"):
        rtl_program(integer_graph("odd_channels_3x3"), load_target("systolic16x16"))


def test_weight_rom_holds_the_weights_in_lane_order(program):
    """The first row tile of the first array layer: lane r, column c is weight (tap, c_in) = divmod(r, C_in)
    (a Dense on a 1x1 map, [C_in, M]: weight (r, c))."""
    layer = next(layer for layer in program.layers if layer.kind == ARRAY and not layer.fields["dw"])
    w = program.graph.constants[layer.node.inputs[1]].astype(np.int64)
    bits, C = program.target.widths.operand_bits, program.cols
    c_in = program.maps[layer.inputs[0]].channels
    if w.ndim == 2:  # only the autoencoder's Dense comes first, on its 1x1 input
        w = w.T.reshape(w.shape[1], w.shape[0], 1, 1)
    kw = w.shape[3] if w.ndim == 4 else 1
    for r in range(min(program.rows, w[0].size)):
        word = program.weights[layer.fields["w_base"] + r]
        tap, ci = divmod(r, c_in)
        for c in range(min(C, w.shape[0])):
            got = word >> (c * bits) & ((1 << bits) - 1)
            got -= (1 << bits) if got >> (bits - 1) else 0
            assert got == w[c, ci, tap // kw, tap % kw]


def test_what_the_rtl_cannot_do_is_refused_by_name():
    with pytest.raises(MappingError, match=r"layer '.+' \(.+\) has no RTL implementation"):
        rtl_program(integer_graph("vector_ops"), load_target("systolic16x16"))
    with pytest.raises(MappingError, match="weight-stationary"):
        rtl_program(integer_graph("digits"), target_with(array__dataflow="output_stationary"))


@pytest.mark.parametrize("target", ["systolic8x8", "systolic16x16", "systolic32x32"])
def test_a_dense_only_program_keeps_every_width_wide_enough(target):
    """Every map of the autoencoder is 1x1 and its addresses are short: a signed offset still holds a
    sign-extended window origin and a vector pixel index a column, so no replication is empty."""
    program = rtl_program(integer_graph("autoencoder"), load_target(target))
    assert {(m.height, m.width) for m in program.maps.values()} == {(1, 1)}
    assert all(layer.kind == ARRAY for layer in program.layers) and len(program.layers) == 10
    w = program.widths
    assert w["OFF_W"] >= w["DIM_W"] + 2 and w["OFF_W"] > w["ADDR_W"] and w["VPIX_W"] > w["DIM_W"]
    assert min(w.values()) >= 1


def test_resize_reads_each_output_pixel_from_its_source_pixel():
    from hlsgen.rtl.program import OP_REQ
    from tests.hls.helpers import quantize_model
    from tests.real_exports import images, real_ops_net

    program = rtl_program(quantize_model(real_ops_net(), {"x": images(8, 0)}).graph, load_target("systolic8x8"))
    vector = [layer.fields for layer in program.layers if layer.kind != ARRAY]
    resize = next(layer.fields for layer in program.layers if layer.node.op == "Resize")
    assert resize["op"] == OP_REQ and (resize["ma"], resize["shift"], resize["a_zp"], resize["zp"]) == (1, 0, 0, 0)
    assert (resize["up_x"], resize["up_y"], resize["src_w"], resize["stride"]) == (2, 1, 6, 36)
    assert (resize["vw"], resize["pixels"], resize["out_width"], resize["passes"]) == (18, 216, 18, 2)
    others = [f for f in vector if f is not resize]
    assert others and all(f.get("up_x", 0) == f.get("up_y", 0) == 0 and f["src_w"] == f["vw"] for f in others)
