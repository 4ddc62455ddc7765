"""Shrinking a failing spec: a real predicate on the generated ONNX (it holds a depthwise convolution) keeps
holding while the spec gets smaller; and a reproducer folder's one command replays the build."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

import hlsgen
from hlsgen.fuzz.generator import random_spec
from hlsgen.fuzz.onnx_model import spec_to_onnx
from hlsgen.fuzz.runner import Result
from hlsgen.fuzz.shrink import candidates_of, save_reproducer, shrink
from hlsgen.fuzz.spec import ModelSpec


def _has_depthwise(spec: ModelSpec) -> bool:
    model = spec_to_onnx(spec)
    inferred = onnx.shape_inference.infer_shapes(model)
    channels = {v.name: v.type.tensor_type.shape.dim[1].dim_value
                for v in list(inferred.graph.value_info) + list(inferred.graph.input)}
    for node in model.graph.node:
        group = next((a.i for a in node.attribute if a.name == "group"), 1)
        if node.op_type == "Conv" and group > 1 and group == channels[node.input[0]]:
            return True
    return False


def _first_depthwise_seed() -> ModelSpec:
    for seed in range(200):
        spec = random_spec(seed, "long")
        if len(spec.layers) >= 4 and _has_depthwise(spec):
            return spec
    raise AssertionError("no long-profile spec of 4+ layers holds a depthwise convolution")


def test_shrink_keeps_the_failure_and_cuts_the_rest():
    spec = _first_depthwise_seed()
    calls = []

    def still_fails(candidates):
        calls.append(len(candidates))
        return [_has_depthwise(c) for c in candidates]

    small = shrink(spec, still_fails, batch=3, budget=5000)
    assert _has_depthwise(small)
    assert len(small.layers) <= 2 < len(spec.layers)  # a grouped conv may need the layer that gives its channels
    assert small.macs() < spec.macs() and small.annotation == "float"
    assert max(calls) <= 3
    # a fixpoint: no candidate the shrinker would try still holds a depthwise convolution of fewer MACs
    assert not any(_has_depthwise(c) and c.macs() < small.macs() for c in candidates_of(small) if c.shapes())


def test_shrink_stops_at_its_budget():
    spec = _first_depthwise_seed()
    seen = []
    shrink(spec, lambda cs: (seen.extend(cs), [False] * len(cs))[1], batch=2, budget=5)
    assert len(seen) == 5


def test_candidates_are_valid_models():
    for seed in range(40):
        for candidate in candidates_of(random_spec(seed)):
            if candidate.shapes() is not None:
                onnx.checker.check_model(spec_to_onnx(candidate.float_twin()), full_check=True)


def test_reproducer_replays(tmp_path):
    spec = next(s for s in map(random_spec, range(100)) if s.target.builtin and s.annotation == "float"
                and len(s.layers) == 1)
    folder = save_reproducer(spec, Result(spec.seed, "mismatch", "build", "csim: 1 output integer differs"),
                             tmp_path / "repro")
    assert {p.name for p in folder.iterdir()} == {"model.onnx", "calib.npz", "spec.json", "replay.sh"}
    assert ModelSpec.from_json((folder / "spec.json").read_text()) == spec
    stored = np.load(folder / "calib.npz")["x"]
    assert np.array_equal(stored, spec.calibration())
    assert numpy_helper.to_array(onnx.load(folder / "model.onnx").graph.initializer[0]).size > 0
    command = (folder / "replay.sh").read_text().splitlines()[-1]
    assert command.startswith("hlsgen build model.onnx") and "--verify csim" in command
    # the replay's build, run as replay.sh runs it (this spec is one that builds: bit-exact)
    args = command.split()[1:]
    checkout = Path(hlsgen.__file__).resolve().parents[1]  # the code under test, not an installed copy
    done = subprocess.run([sys.executable, "-m", "hlsgen.cli", *args], cwd=folder, capture_output=True, text=True,
                          env={"HLSGEN_CSIM_PORTABLE": "1", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(checkout)})
    assert done.returncode == 0, done.stderr
    assert (folder / "out" / "report.json").is_file()
