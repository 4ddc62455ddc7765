"""The runner's verdicts: ok, a clean rejection (with its message), a crash for a worker past its time limit,
the same results for any number of workers, and the `hlsgen fuzz` command's summary and exit code."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from hlsgen.cli import main
from hlsgen.fuzz.generator import random_spec
import json

import numpy as np

from hlsgen.fuzz.campaign import fuzz_models, specs
from hlsgen.fuzz.runner import RTL_CYCLES, float_error, rtl_images, run_all
from hlsgen.fuzz.spec import LayerSpec, ModelSpec, TargetSpec

CONV = {"k": [3, 3], "stride": [1, 1], "dil": [1, 1], "pads": [1, 1, 1, 1], "groups": 1, "bias": True, "bn": True,
        "act": "relu", "out": 8}


def tiny(**changes) -> ModelSpec:
    return replace(ModelSpec(seed=7, shape=(3, 8, 8), layers=(LayerSpec("conv", CONV),)), **changes)


def test_verdicts(tmp_path):
    small_memory = TargetSpec(builtin=None, side=4, input_kib=1, input_banks=4, weight_kib=1, weight_banks=4,
                              accumulator_kib=1, accumulator_banks=4)
    wide = tiny(seed=8, shape=(3, 64, 64), target=small_memory, program="rom")
    ok, rejected = run_all([(tiny(), False), (wide, False)], tmp_path, workers=2, timeout=120, portable=True)
    assert (ok.outcome, ok.seed, ok.message) == ("ok", 7, "")
    assert rejected.outcome == "rejected" and rejected.message.startswith("exit 3: "), rejected
    (slow,) = run_all([(tiny(seed=9), False)], tmp_path, timeout=0.2)
    assert (slow.outcome, slow.stage) == ("crash", "timeout")
    assert not list(tmp_path.glob("model-*"))  # every model's folder is removed once judged


def test_results_do_not_depend_on_workers(tmp_path):
    chosen = [(random_spec(seed), False) for seed in (9, 11, 13)]
    one = run_all(chosen, tmp_path / "one", workers=1, portable=True)
    two = run_all(chosen, tmp_path / "two", workers=2, portable=True)
    assert [(r.seed, r.outcome, r.message) for r in one] == [(r.seed, r.outcome, r.message) for r in two]


def test_float_reference_matches_onnxruntime():
    for seed in range(30):
        assert float_error(random_spec(seed)) <= 1e-4


def test_fuzz_command(tmp_path, capsys):
    assert main(["fuzz", "--seed", "9", "--count", "2", "--jobs", "2", "--portable", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "seeds 9..10" in printed and "mismatch" in printed
    assert not list(tmp_path.iterdir())  # no failure, no reproducer
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(tiny().to_json())
    assert main(["fuzz", "--replay", str(spec_file), "--portable"]) == 0
    assert "seed 7: ok" in capsys.readouterr().out


def test_a_cancelling_last_dense_is_within_tolerance():
    """Long seed 100330: a last Dense of 105 terms up to 66 sums to 0.04; float32 orders differ by 8e-6 there
    (2e-4 of the output, 1.3e-5 of 1% of the terms): no reference bug."""
    spec = random_spec(100330, "long")
    assert spec.layers[-1].kind == "dense" and spec.shapes()[-1] == (1,)
    assert float_error(spec) <= 1e-4


def test_the_rtl_check_simulates_the_images_that_fit_its_cycle_budget(tmp_path):
    """Long seed 100540: 15 images of 828k cycles each (a 2x299x39 input streamed through external memory on
    a 32x32 array) took over 600 s in Verilator, a timeout with no verdict; 3 of them prove as much."""
    (tmp_path / "verify").mkdir()
    np.savez(tmp_path / "verify" / "int_inputs.npz", x=np.zeros((15, 2, 299, 39), np.int8))
    for cycles, images in ((827_772, RTL_CYCLES // 827_772), (1_000, 15), (50_000_000, 1)):
        (tmp_path / "report.json").write_text(json.dumps({"total": {"cycles": cycles}}))
        assert rtl_images(tmp_path) == images
    assert RTL_CYCLES // 827_772 == 3


def test_a_timeout_is_kept_as_generated_not_shrunk(tmp_path):
    """Shrinking a model that gave no verdict in time would spend the timeout on every candidate."""
    summary = fuzz_models(9, 1, timeout=0.2, out=tmp_path / "failures")
    assert summary.counts()["crash"] == 1
    (failure,) = summary.failures
    assert failure.shrunk.stage == "timeout" and Path(failure.folder, "replay.sh").is_file()
    assert Path(failure.folder, "spec.json").read_text().strip() == specs(9, 1, "ci", None)[0].to_json().strip()
