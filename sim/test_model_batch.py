"""Throughput mode (--batch N) in the RTL: a run takes N images, the head (the convolutions) image by image,
the Dense tail once for all N, then the N outputs. Every output integer equals the integer reference, the
last run padded with zero images, and the RTL's cycles per run stay within the whole-model benches' 2% of the
performance model's N x (input + head) + tail + N x output + 3."""
import json

import pytest

from bench import build_root
from hlsgen.rtl.sim import simulate
from test_model import CYCLE_TOLERANCE

BATCH = 8
IMAGES = 12  # a whole run and one padded with 4 zero images


@pytest.mark.rtl
@pytest.mark.parametrize("target", ["systolic8x8", pytest.param("systolic16x16", marks=pytest.mark.slow)])
def test_digits_at_batch_8_is_bit_exact_in_the_models_cycles_per_run(build_folder, target):
    out, test = build_folder("digits", target, BATCH)
    result = simulate(out, test, IMAGES, build_root())
    assert not result.mismatches and result.compared == IMAGES * 10 and result.batch == BATCH
    assert len(result.cycles) == 2 and len(set(result.cycles)) == 1, "every run takes the same cycles"
    gap = abs(result.cycles_per_inference - result.model_cycles) / result.model_cycles
    assert gap <= CYCLE_TOLERANCE, f"{result.cycles_per_inference} RTL cycles per run vs {result.model_cycles} modelled"
    # the tail's rows ran once for the 8 images: their cycles are the batched rows' of the model
    layers = {row["name"]: row["cycles"] for row in json.loads((out / "report.json").read_text())["layers"]}
    assert result.layer_cycles["fc1"] == layers["fc1"]
    measured = json.loads((out / "report.json").read_text())["rtl_simulation"]["without_backpressure"]
    # report.json keeps cycles per image to 0.1
    assert measured["batch"] == BATCH and measured["cycles_per_image"] == round(result.cycles_per_inference / BATCH, 1)


@pytest.mark.rtl
def test_hlsgen_sim_of_a_batch_build_runs_the_batch(build_folder, capsys):
    from hlsgen.cli import main

    out, test = build_folder("digits", "systolic8x8", BATCH)
    assert main(["sim", str(out), "--inputs", str(test), "--images", "3"]) == 0
    printed = capsys.readouterr().out
    assert "bit-exact: 30 output integers of 3 image(s)" in printed and "cycles per run of 8 images" in printed
    assert main(["sim", str(out), "--inputs", str(test), "--images", "3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["batch"] == BATCH


@pytest.mark.slow
@pytest.mark.rtl
def test_a_dense_only_model_takes_each_input_into_its_place_of_the_batch(build_folder):
    """The autoencoder is all tail: the input stream writes image n n words into each of the stacked input's
    40 channel blocks, and the output stream reads each image's 640 values from as many blocks."""
    out, test = build_folder("autoencoder", "systolic16x16", 4)
    result = simulate(out, test, 6, build_root())
    assert not result.mismatches and result.compared == 6 * 640 and result.batch == 4
    gap = abs(result.cycles_per_inference - result.model_cycles) / result.model_cycles
    assert gap <= CYCLE_TOLERANCE, f"{result.cycles_per_inference} RTL cycles per run vs {result.model_cycles} modelled"


@pytest.mark.rtl
@pytest.mark.slow
@pytest.mark.parametrize("target", ["systolic8x8", "systolic16x16"])
def test_digits_at_batch_32_is_bit_exact_on_every_test_image(build_folder, target):
    out, test = build_folder("digits", target, 32)
    result = simulate(out, test, None, build_root())
    assert not result.mismatches and result.compared == result.images * 10 and result.batch == 32
    assert len(set(result.cycles)) == 1
    gap = abs(result.cycles_per_inference - result.model_cycles) / result.model_cycles
    assert gap <= CYCLE_TOLERANCE, f"{result.cycles_per_inference} RTL cycles per run vs {result.model_cycles} modelled"
