"""The exporter-like features of the fuzzer (issue 25): shape code, dynamic input axes, host ops between layers,
several outputs with host post-processing heads. Their generators (valid, deterministic, drawn in both
profiles), the shrinker's steps on them, the whole-model oracle, and a fixed set of ci seeds covering every
feature through the runner's checks: float reference or fold equality, `build --verify csim` of every segment,
the whole model against onnxruntime."""
from __future__ import annotations

from collections import Counter
from dataclasses import replace

import numpy as np
import onnx
import pytest
from onnx import helper

from hlsgen.fuzz.generator import random_spec
from hlsgen.fuzz.onnx_model import spec_to_onnx
from hlsgen.hls.csim import PORTABLE_ENV
from hlsgen.fuzz.runner import _picks, build_command, check, float_error, fold_error, run_all, whole_error
from hlsgen.fuzz.shrink import candidates_of
from hlsgen.fuzz.spec import HEAD_OPS, HOST_OPS, LayerSpec, ModelSpec
from hlsgen.partition.whole import WholeModel

CONV = {"k": [3, 3], "stride": [1, 1], "dil": [1, 1], "pads": [1, 1, 1, 1], "groups": 1, "bias": True, "bn": False,
        "act": "relu", "out": 6}
# ci seeds whose models, together, draw every feature (test_the_fixed_seeds_cover_every_feature says which)
SEEDS = (11, 14, 17, 26, 56, 190, 246, 258, 261)


def features(spec: ModelSpec) -> set[str]:
    found = {f"dynamic {spec.dynamic}"} if spec.dynamic else set()
    for layer in spec.layers:
        if layer.kind == "host":
            found.add(f"host {layer['op']}")
        if layer.kind == "resize":
            found.add("resize shape code" if layer["shape_code"] else "resize scales")
        if layer.kind == "flatten" and layer.get("shape_code"):
            found.add("flatten shape code")
    if spec.outputs:
        found.add(f"{len(spec.output_shapes())} outputs")
    for head in spec.outputs:
        found.update(f"head {op['op']}" for op in head.get("ops", []))
        found.add({0: "tap" if head.get("at") is not None else "main", 1: "second head conv",
                   2: "concatenated head convs"}[len(head.get("convs", []))])
    return found


def head_model(ops, convs=(), dynamic="", annotation="float", extra=()) -> ModelSpec:
    layers = (LayerSpec("conv", CONV), LayerSpec("conv", {**CONV, "out": 5}))
    heads = (LayerSpec("head", {"at": None, "ops": list(ops)}),
             *(LayerSpec("head", {"at": 1, "convs": [dict(c) for c in convs]}) for _ in [0] if convs), *extra)
    return ModelSpec(seed=5, shape=(3, 8, 8), layers=layers, annotation=annotation, dynamic=dynamic, outputs=heads)


def test_every_feature_is_drawn_in_both_profiles_and_models_stay_deterministic():
    for profile, seeds in (("ci", range(400)), ("long", range(150))):
        found = Counter()
        for seed in seeds:
            spec = random_spec(seed, profile)
            found.update(features(spec))
        wanted = {"dynamic batch", "dynamic hw", "flatten shape code", "resize shape code", "resize scales",
                  "2 outputs", "3 outputs", "tap", "second head conv", "concatenated head convs",
                  *(f"host {op}" for op in HOST_OPS), *(f"head {op}" for op in HEAD_OPS)}
        if profile == "long":
            wanted -= {"resize scales", "3 outputs", "head nhwc"}  # 150 seeds are too few to be sure of these
        assert not wanted - set(found), (profile, wanted - set(found))
    extended = [random_spec(seed) for seed in range(200)]
    share = sum(s.extended for s in extended) / len(extended)
    assert 0.1 < share < 0.45, share  # the ci profile's runtime stays about what it was
    for spec in (random_spec(s) for s in SEEDS):
        again = random_spec(spec.seed)
        assert again == spec and ModelSpec.from_json(spec.to_json()) == spec
        assert spec_to_onnx(spec).SerializeToString() == spec_to_onnx(again).SerializeToString()


def test_the_shape_code_is_the_exporters():
    flatten = ModelSpec(seed=3, shape=(2, 4, 4), layers=(LayerSpec("flatten", {"reshape": True, "shape_code": True}),
                                                         LayerSpec("dense", {"out": 3, "bias": True, "bn": False,
                                                                             "act": "none", "matmul": False})),
                        dynamic="batch")
    ops = [n.op_type for n in spec_to_onnx(flatten).graph.node]
    assert ops[:5] == ["Shape", "Gather", "Unsqueeze", "Concat", "Reshape"], ops
    resize = ModelSpec(seed=3, shape=(2, 4, 5), layers=(LayerSpec("resize", {"scale": 3, "shape_code": True}),
                                                        LayerSpec("conv", CONV)), dynamic="hw")
    model = spec_to_onnx(resize)
    assert [n.op_type for n in model.graph.node][:8] == ["Shape", "Slice", "Cast", "Mul", "Cast", "Slice", "Concat",
                                                         "Resize"]
    dims = model.graph.input[0].type.tensor_type.shape.dim
    assert [d.dim_param or d.dim_value for d in dims] == ["N", 2, "H", "W"]
    assert resize.shapes()[1] == (2, 12, 15) and resize.input_shapes() == (("x", (1, 2, 4, 5)),)
    assert "--input-shape x:1x2x4x5" in build_command(resize, rtl=False)
    for spec in (flatten, resize):  # hlsgen imports both, folding the shape code for the pinned shape
        assert float_error(spec) <= 1e-4


def test_heads_give_the_outputs_the_spec_says():
    spec = head_model([{"op": "sigmoid"}, {"op": "topk", "k": 5}],
                      extra=(LayerSpec("head", {"at": 1, "convs": [dict(CONV, k=[1, 1], pads=[0] * 4, act="none"),
                                                                   dict(CONV, k=[1, 1], pads=[0] * 4, out=2)],
                                                "ops": [{"op": "argmax", "keepdims": 0}]}),))
    model = spec_to_onnx(spec)
    assert [o.name for o in model.graph.output] == ["y", "y_idx", "y1"]
    assert spec.output_shapes() == [(5,), (5,), (64,)]
    assert {"TopK", "ArgMax", "Transpose", "Concat", "Sigmoid"} <= {n.op_type for n in model.graph.node}
    assert fold_error(spec) == 0.0  # hlsgen cannot import TopK: onnxruntime folded vs as generated
    assert head_model([{"op": "argmax", "keepdims": 1}, {"op": "exp", "k": 0.1, "anchor": 1.0}]).shapes() is None
    assert head_model([{"op": "topk", "k": 1000}]).shapes() is None  # more than the map holds


def test_a_pick_is_judged_by_the_values_it_picks():
    node = helper.make_node("ArgMax", ["m"], ["i"], axis=1, keepdims=0)
    values = np.array([[[1.0, 5.0]], [[4.999, 0.0]], [[0.0, 1.0]]], np.float32).reshape(1, 3, 2)
    best, picked = _picks(node, {"m": values}, np.array([[0, 0]]))  # a near tie picked the other way
    assert np.allclose(best.ravel(), [4.999, 5.0]) and np.allclose(picked.ravel(), [1.0, 5.0])
    topk = helper.make_node("TopK", ["f", "k"], ["v", "vi"])
    flat = np.array([[3.0, 1.0, 2.0]], np.float32)
    best, picked = _picks(topk, {"f": flat, "v": np.array([[3.0, 2.0]])}, np.array([[0, 1]]))
    assert picked.tolist() == [[3.0, 1.0]] and best.tolist() == [[3.0, 2.0]]


def test_shrinking_keeps_heads_on_their_layers():
    spec = replace(head_model([{"op": "exp", "k": 0.2, "anchor": 4.0}],
                              convs=[dict(CONV, k=[1, 1], pads=[0] * 4, out=3)], dynamic="hw"),
                   layers=(LayerSpec("conv", CONV), LayerSpec("host", {"op": "Cos"}), LayerSpec("conv", CONV)))
    spec = replace(spec, outputs=(spec.outputs[0], spec.outputs[1].with_params(at=3)))
    candidates = list(candidates_of(spec))
    assert replace(spec, dynamic="") in candidates and replace(spec, outputs=()) in candidates
    without_host = [c for c in candidates if len(c.layers) == 2 and all(l.kind == "conv" for l in c.layers)]
    assert without_host and without_host[0].outputs[1]["at"] == 2  # the head still reads the last conv
    assert all(c.shapes() is not None for c in candidates if c.outputs == spec.outputs)
    first_only = [c for c in candidates if c.layers == spec.layers[1:]]
    assert first_only and first_only[0].shapes() is not None


def test_the_whole_model_oracle_sees_a_run_that_is_not_the_builds(tmp_path, monkeypatch):
    monkeypatch.setenv(PORTABLE_ENV, "1")
    spec = head_model([{"op": "softmax"}, {"op": "argmax", "keepdims": 1}], extra=(LayerSpec("head", {"at": 1}),),
                      dynamic="batch")
    spec = replace(spec, layers=(spec.layers[0], LayerSpec("host", {"op": "InstanceNormalization"}), spec.layers[1]))
    result = check(spec, tmp_path)
    assert result.outcome == "ok", result
    out = tmp_path / "out"
    assert (out / "partition.json").is_file() and len(list((out / "segments").iterdir())) == 2
    stored = dict(np.load(out / "verify" / "outputs.npz"))
    stored["y1"] = stored["y1"] * 1.5
    np.savez(out / "verify" / "outputs.npz", **stored)
    assert "differs from the build's verify/outputs.npz in ['y1']" in whole_error(spec, tmp_path / "model.onnx", out)
    host = onnx.load(str(out / "host" / "host0.onnx"))  # a host stage gone wrong, the build's run alike
    (norm,) = [n for n in host.graph.node if n.op_type == "InstanceNormalization"]
    scale = next(t for t in host.graph.initializer if t.name == norm.input[1])
    scale.CopyFrom(onnx.numpy_helper.from_array(-onnx.numpy_helper.to_array(scale), scale.name))
    onnx.save(host, str(out / "host" / "host0.onnx"))
    inputs = dict(np.load(out / "verify" / "inputs.npz"))
    np.savez(out / "verify" / "outputs.npz", **WholeModel(out).run(inputs))
    assert "y: SQNR" in whole_error(spec, tmp_path / "model.onnx", out)


def test_the_fixed_seeds_cover_every_feature_and_pass(tmp_path):
    """A fixed set of ci seeds through the runner's checks (about 20 s): every one ok."""
    chosen = [random_spec(seed) for seed in SEEDS]
    covered = set().union(*(features(s) for s in chosen))
    assert {"dynamic batch", "dynamic hw", "flatten shape code", "resize shape code", "2 outputs", "3 outputs",
            "tap", "second head conv", "concatenated head convs", *(f"host {op}" for op in HOST_OPS),
            *(f"head {op}" for op in HEAD_OPS)} <= covered, covered
    results = run_all([(s, False) for s in chosen], tmp_path, workers=2, timeout=300, portable=True)
    assert [(r.seed, r.outcome, r.message) for r in results] == [(s, "ok", "") for s in SEEDS]


@pytest.mark.slow
def test_segments_with_rtl_are_simulated(tmp_path):
    """A host op between two convs: two segments, each with RTL, both simulated bit-exact."""
    spec = ModelSpec(seed=4, shape=(3, 6, 6), layers=(LayerSpec("conv", CONV), LayerSpec("host", {"op": "Sin"}),
                                                      LayerSpec("conv", CONV)))
    (result,) = run_all([(spec, True)], tmp_path, timeout=900, keep=True)
    assert (result.outcome, result.rtl) == ("ok", True), result
    segments = sorted((tmp_path / "model-0" / "out" / "segments").iterdir())
    assert len(segments) == 2 and all((s / "rtl").is_dir() for s in segments)


# the lookup-table activations of issue 26, the gated ones as exporters write them (x times a gate of x)
TABLE_ACTIVATIONS = ("tanh", "softplus", "silu", "hardswish_mul", "mish", "gelu")


def test_every_lookup_table_activation_passes_the_runner(tmp_path):
    """Each drawn as the fuzzer draws it, after a Conv and in QDQ form, through the runner's checks."""
    specs = [ModelSpec(seed=i, shape=(3, 6, 6), annotation=("float", "qdq")[i % 2],
                       layers=(LayerSpec("conv", dict(CONV, act=kind)), LayerSpec("conv", CONV)))
             for i, kind in enumerate(TABLE_ACTIVATIONS)]
    results = run_all([(s, False) for s in specs], tmp_path, workers=2, timeout=300, portable=True)
    assert [(r.outcome, r.message) for r in results] == [("ok", "")] * len(specs)
