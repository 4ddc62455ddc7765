"""Whole-model benches: build a model with `hlsgen build`, stream its images through the generated
top (Verilator, through cocotb's runner) and require every output integer to equal the integer
reference; the RTL's cycles must stay within 2% of the performance model.

The default suite runs the example on systolic16x16, mnist-8 on systolic8x8 and the dense-only
autoencoder (every map 1x1) on systolic16x16, a few images each; `make test-slow` runs the five test
models on both targets, with every test image, and the autoencoder with hidden layers of 24 on systolic16x16.
"""
import pytest

from bench import build_root
from hlsgen.rtl.sim import simulate
from models import NAMES

CYCLE_TOLERANCE = 0.02
# output integers per image
OUTPUTS = {name: 10 for name in NAMES} | {"autoencoder": 640, "autoencoder24": 640, "odd_cnn": 10, "pools": 10, "grouped": 10,
                                                 "strided": 10, "copies": 10, "spatial_concat": 10,
                                                 "depthwise_multiplier": 10}


def check(build_folder, name: str, target: str, images: int | None):
    out, test = build_folder(name, target)
    result = simulate(out, test, images, build_root())
    assert not result.mismatches and result.compared == result.images * OUTPUTS[name]
    gap = abs(result.cycles_per_inference - result.model_cycles) / result.model_cycles
    assert gap <= CYCLE_TOLERANCE, f"{result.cycles_per_inference} RTL cycles vs {result.model_cycles} modelled"
    assert len(set(result.cycles)) == 1, "every image takes the same number of cycles"
    return result


@pytest.mark.rtl
@pytest.mark.parametrize("name, target", [pytest.param("digits", "systolic16x16", marks=pytest.mark.slow),  # make demo
                                          ("mnist", "systolic8x8"),
                                          pytest.param("autoencoder", "systolic16x16", marks=pytest.mark.slow)])
def test_model_is_bit_exact_on_a_few_images(build_folder, name, target):
    check(build_folder, name, target, 3)


@pytest.mark.rtl
@pytest.mark.slow
@pytest.mark.parametrize("target", ["systolic16x16", "systolic8x8"])
@pytest.mark.parametrize("name", NAMES)
def test_model_is_bit_exact_on_every_test_image(build_folder, name, target):
    check(build_folder, name, target, None)


@pytest.mark.rtl
@pytest.mark.slow
def test_hidden_widths_that_do_not_divide_the_rows_are_bit_exact(build_folder):
    """Hidden layers of 24 on 16 rows: every Dense reads its 1x1 input at one tap (lane r: channels r mod 16)."""
    check(build_folder, "autoencoder24", "systolic16x16", None)


@pytest.mark.rtl
@pytest.mark.parametrize("target", [pytest.param("systolic16x16", marks=pytest.mark.slow), "systolic8x8"])
def test_channel_counts_that_do_not_divide_the_rows_are_bit_exact(build_folder, target):
    """3x3 Convs reading 24 and 40 channels on 16 rows (and a Dense reading 12 channels per pixel on both
    targets): the layer program pads each tap to a multiple of R lanes, and the RTL takes exactly the
    cycles the program counts."""
    result = check(build_folder, "odd_cnn", target, 4)
    assert result.cycles_per_inference == result.model_cycles


@pytest.mark.rtl
@pytest.mark.parametrize("target", [pytest.param("systolic16x16", marks=pytest.mark.slow), "systolic8x8"])  # the same pools, a build each
def test_windowed_pools_are_bit_exact(build_folder, target):
    """Pools no writer fuses run on the vector unit a window tap per cycle: a 3x3/2 pad-1 MaxPool, a dilated
    padded MaxPool whose input a QAdd also reads, a 2x2/2 ceil-mode AveragePool and a 3x2 one counting its
    padding (the divisor table indexed by each window's count); the RTL takes exactly the program's cycles."""
    result = check(build_folder, "pools", target, 4)
    assert result.cycles_per_inference == result.model_cycles


@pytest.mark.rtl
def test_grouped_convolutions_are_bit_exact(build_folder):
    """On 8 rows: 2 groups of 8 channels run a pass each (a table row per group, no MAC on a zero block), and
    8 groups of 2 -> 4 channels run 4 to a pass with block-diagonal weights; the RTL takes exactly the
    program's cycles."""
    result = check(build_folder, "grouped", "systolic8x8", 4)
    assert result.cycles_per_inference == result.model_cycles
    assert result.layer_cycles["group2"] == 1236 and result.layer_cycles["group8"] == 660


@pytest.mark.rtl
@pytest.mark.slow  # its block-diagonal pass: test_grouped_convolutions_are_bit_exact; its C-sim: tests/hls/test_shapes
def test_a_depthwise_conv_with_a_channel_multiplier_is_bit_exact(build_folder):
    """8 groups of 1 -> 2 channels on 16 rows: one block-diagonal pass (16 columns, 8 lanes per tap), not the
    depthwise mode, whose column m reads channel m; exactly the program's cycles."""
    result = check(build_folder, "depthwise_multiplier", "systolic16x16", 4)
    assert result.cycles_per_inference == result.model_cycles and result.layer_cycles["dw2"] == 386


@pytest.mark.rtl
def test_strides_above_15_are_bit_exact(build_folder):
    """A 3x3 Conv and a 3x3 MaxPool of stride 16 (the program widens the stride field to 5 bits): exactly the
    program's cycles."""
    result = check(build_folder, "strided", "systolic8x8", 4)
    assert result.cycles_per_inference == result.model_cycles
    assert result.layer_cycles["conv16"] == 123 and result.layer_cycles["pool16"] == 96


@pytest.mark.rtl
def test_concat_pad_and_transpose_are_bit_exact(build_folder):
    """A channel Concat (a vector pass per input into its channels of the output; on 16 rows the second
    input, channels 8..15, starts inside a block: replicated, written first from the block's first channel,
    the first input then overwriting channels 0..7), a constant Pad of rows and columns with a value other
    than the zero point (a 1x1 average pool over the padded map) and a Transpose of rows and columns (a 1x1
    max pool walking the input column-wise): exactly the program's cycles."""
    result = check(build_folder, "copies", "systolic16x16", 4)
    assert result.cycles_per_inference == result.model_cycles
    assert result.layer_cycles["cat"] == 2 * (81 + 15) and result.layer_cycles["pad"] == 120 + 15
    assert result.layer_cycles["swap"] == 30 + 15


@pytest.mark.slow  # test_concat_pad_and_transpose_are_bit_exact runs the concat copies in make test
@pytest.mark.rtl
def test_concats_along_rows_and_columns_are_bit_exact(build_folder):
    """Each input of a Concat along rows or columns is a vector pass written from its first row or column of
    the output (the writer's base moved there, its row stride the output's width), on 16 rows: exactly the
    program's cycles."""
    result = check(build_folder, "spatial_concat", "systolic16x16", 4)
    assert result.cycles_per_inference == result.model_cycles
    assert result.layer_cycles["cat_rows"] == (30 + 15) + (18 + 15)


@pytest.mark.slow
@pytest.mark.rtl
def test_ds_cnn_verifies_in_csim_and_rtl_with_the_models_cycles(tmp_path):
    """MLPerf Tiny's DS-CNN (hlsgen.architectures) ends in a 24x5 AveragePool over its 25x5 map, a window
    the vector unit reads tap by tap: `hlsgen build --verify csim,rtl` is bit-exact on systolic16x16 and the
    RTL's cycles are the model's (12,844, its first conv under the input stream; the pool 4 passes x 120 taps
    + 15)."""
    import json

    import numpy as np
    import onnx

    from hlsgen.architectures import calibration_data, ds_cnn
    from hlsgen.cli import main

    model = ds_cnn()
    onnx.save(model, str(tmp_path / "ds_cnn.onnx"))
    np.savez(tmp_path / "calib.npz", **{model.graph.input[0].name: calibration_data(model, n=8)})
    out = tmp_path / "build"
    assert main(["build", str(tmp_path / "ds_cnn.onnx"), "--target", "systolic16x16", "--calib",
                 str(tmp_path / "calib.npz"), "-o", str(out), "-q", "--verify", "csim,rtl"]) == 0
    report = json.loads((out / "report.json").read_text())
    measured = report["rtl_simulation"]["without_backpressure"]
    assert measured["cycles"] == report["total"]["cycles"] == 12844
    pool = next(layer for layer in report["layers"] if layer["name"] == "pool")
    assert measured["layers"]["pool"]["cycles"] == pool["cycles"] == 4 * 120 + 15
