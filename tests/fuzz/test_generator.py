"""The model generator: deterministic, valid ONNX (the checker with full shape inference), every layer kind,
activation, annotation and target form drawn, and targets the loader accepts."""
from __future__ import annotations

from collections import Counter

import onnx
import pytest

from hlsgen.frontend.fold import fold_shape_code
from hlsgen.fuzz.generator import random_spec
from hlsgen.fuzz.onnx_model import spec_to_onnx
from hlsgen.fuzz.spec import ACTIVATIONS, MAP_KINDS, ModelSpec
from hlsgen.hw import load_target

SEEDS = range(300)


def _checkable(spec: ModelSpec) -> onnx.ModelProto:
    """Quant in the default domain (as Brevitas exports it) is an op ONNX's checker does not know: check the
    same model with the QONNX domain declared."""
    if spec.annotation == "qonnx" and not spec.qonnx_domain:
        from dataclasses import replace
        spec = replace(spec, qonnx_domain="qonnx.custom_op.general")
    return spec_to_onnx(spec)


@pytest.mark.parametrize("profile", ["ci", "long"])
def test_same_seed_same_bytes(profile):
    for seed in (3, 17, 41, 99):
        first, second = random_spec(seed, profile), random_spec(seed, profile)
        assert first == second
        assert spec_to_onnx(first).SerializeToString() == spec_to_onnx(second).SerializeToString()
        assert ModelSpec.from_json(first.to_json()) == first
    assert spec_to_onnx(random_spec(1)).SerializeToString() != spec_to_onnx(random_spec(2)).SerializeToString()


@pytest.mark.parametrize("profile,seeds", [("ci", range(120)), ("long", range(12))])
def test_every_model_passes_the_checker(profile, seeds):
    for seed in seeds:
        spec = random_spec(seed, profile)
        model = _checkable(spec)
        onnx.checker.check_model(model, full_check=True)
        # exporter shape code and dynamic axes: the shapes are the spec's once the build's folding pins them
        inferred = onnx.shape_inference.infer_shapes(fold_shape_code(model, dict(spec.input_shapes())),
                                                     strict_mode=True)
        if spec.annotation == "qonnx" and spec.dynamic:
            continue  # ONNX's shape inference does not know QONNX's Quant: nothing fixes the outputs' dims
        dims = [[d.dim_value for d in out.type.tensor_type.shape.dim] for out in inferred.graph.output]
        assert dims == [[1, *shape] for shape in spec.output_shapes()], seed


def test_every_form_appears():
    kinds, acts, forms = Counter(), Counter(), Counter()
    for seed in SEEDS:
        spec = random_spec(seed)
        kinds.update(layer.kind for layer in spec.layers)
        forms[spec.annotation] += 1
        forms[f"program {spec.program}"] += 1
        forms["random target" if spec.target.builtin is None else spec.target.builtin] += 1
        if spec.annotation == "qonnx":
            forms[f"qonnx {spec.bits} bits"] += 1
        for layer in spec.layers:
            convs = {"conv": [layer.params], "residual": [layer.get("conv")],
                     "concat": [layer.get("a"), layer.get("b")]}.get(layer.kind, [])
            acts.update(p["act"] for p in convs)
            acts[layer.get("act")] += layer.kind in ("act", "dense")
            for p in convs:
                forms["depthwise" if p["groups"] == "depthwise" else "grouped" if p["groups"] > 1 else "dense conv"] += 1
                forms["strided"] += p["stride"] != [1, 1]
                forms["dilated"] += p["dil"] != [1, 1]
                forms["asymmetric pads"] += p["pads"][:2] != p["pads"][2:]
                forms["batchnorm"] += p["bn"]
            if layer.kind == "pool":
                forms[f"{layer['op']}pool"] += 1
                forms["ceil_mode"] += layer["ceil"]
            if layer.kind == "gpool":
                forms[f"global {layer['op']}pool"] += 1
            if layer.kind == "concat":
                forms[f"concat axis {layer['axis']}"] += 1
    assert set(MAP_KINDS) | {"dense"} <= set(kinds)
    assert set(ACTIVATIONS) <= {a for a, n in acts.items() if n}
    wanted = {"float", "qdq", "qonnx", "program rom", "program external", "random target", "systolic8x8",
              "systolic16x16", "systolic32x32", "depthwise", "grouped", "dense conv", "strided", "dilated",
              "asymmetric pads", "batchnorm", "maxpool", "avgpool", "ceil_mode", "global maxpool", "global avgpool",
              "concat axis 1", "concat axis 2", "concat axis 3", *(f"qonnx {b} bits" for b in range(2, 9))}
    assert not wanted - {f for f, n in forms.items() if n}


def test_long_profile_reaches_the_full_ranges():
    channels, sides, kernels, strides = set(), set(), set(), set()
    for seed in range(200):
        spec = random_spec(seed, "long")
        for shape in spec.shapes():
            if len(shape) == 3:
                channels.add(shape[0])
                sides.update(shape[1:])
        for layer in spec.layers:
            if layer.kind == "conv":
                kernels.update(layer["k"])
                strides.update(layer["stride"])
    assert max(channels) > 200 and max(sides) > 200 and 1 in sides
    assert {1, 11} <= kernels and {1, 2, 3} <= strides
    assert {c for c in channels if c > 2 and all(c % d for d in range(2, c))}  # primes


def test_random_targets_load(tmp_path):
    for seed in SEEDS:
        target = random_spec(seed).target
        if target.builtin is None:
            path = tmp_path / f"{seed}.yaml"
            path.write_text(target.to_yaml())
            loaded = load_target(str(path))
            assert (loaded.array.rows, loaded.array.cols) == (target.side, target.side)
