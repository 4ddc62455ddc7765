"""Greedy shrinking of a failing spec, and the reproducer folder it leaves.

Every candidate is a smaller spec (a layer dropped, a size halved, a kernel to 1, the annotation dropped, the
target back to a shipped one, ...); the first that still fails the same way replaces the spec, until none
does. Working on specs, never on ONNX, keeps every candidate a valid model."""
from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path
from typing import Callable, Iterator

from .runner import Result, build_command, write_inputs
from .spec import LayerSpec, ModelSpec, TargetSpec

Verdict = Callable[[list[ModelSpec]], list[bool]]  # for each candidate: does it still fail the same way?


def shrink(spec: ModelSpec, still_fails: Verdict, batch: int = 1, budget: int = 80) -> ModelSpec:
    """The smallest spec greedy steps reach; `still_fails` judges `batch` candidates at a time (in parallel
    where it can) and at most `budget` candidates are tried."""
    tried = 0
    while tried < budget:
        candidates = [c for c in candidates_of(spec) if c.shapes() is not None and c != spec]
        if not candidates:
            return spec
        for start in range(0, len(candidates), batch):
            chunk = candidates[start:start + batch][:budget - tried]
            tried += len(chunk)
            verdicts = still_fails(chunk)
            if any(verdicts):
                spec = chunk[verdicts.index(True)]
                break
            if tried >= budget:
                return spec
        else:
            return spec
    return spec


def candidates_of(spec: ModelSpec) -> Iterator[ModelSpec]:
    """Smaller specs, the largest cuts first."""
    layers = spec.layers
    if len(layers) > 1:
        for i in reversed(range(len(layers))):
            yield replace(spec, layers=layers[:i] + layers[i + 1:], outputs=_outputs_without_layer(spec.outputs, i))
    if spec.outputs:
        yield replace(spec, outputs=())
        for i in reversed(range(len(spec.outputs))):
            if len(spec.outputs) > 1:
                yield replace(spec, outputs=spec.outputs[:i] + spec.outputs[i + 1:])
            for smaller in _smaller_heads(spec.outputs[i]):
                yield replace(spec, outputs=spec.outputs[:i] + (smaller,) + spec.outputs[i + 1:])
    if spec.dynamic:
        yield replace(spec, dynamic="")
    if spec.annotation != "float":
        yield replace(spec, annotation="float", bits=8)
    if spec.bits != 8:
        yield replace(spec, bits=8)
    if spec.target != TargetSpec():
        yield replace(spec, target=TargetSpec())
    if spec.program != "rom":
        yield replace(spec, program="rom")
    c, h, w = spec.shape
    for shape in ((c, max(1, h // 2), w), (c, h, max(1, w // 2)), (max(1, c // 2), h, w)):
        if shape != spec.shape:
            yield replace(spec, shape=shape)
    for i, layer in enumerate(layers):
        for smaller in _smaller_layers(layer):
            yield replace(spec, layers=layers[:i] + (smaller,) + layers[i + 1:])
    if spec.input_scale != 1.0:
        yield replace(spec, input_scale=1.0)


def _outputs_without_layer(outputs: tuple[LayerSpec, ...], i: int) -> tuple[LayerSpec, ...]:
    """The output heads once layer i (0-based) is gone: a head reading a later layer's output reads the one
    before (a head left reading the input makes the candidate invalid: ModelSpec.shapes)."""
    return tuple(h.with_params(at=h["at"] - 1) if h.get("at") is not None and h["at"] > i else h for h in outputs)


def _smaller_heads(head: LayerSpec) -> Iterator[LayerSpec]:
    ops = head.get("ops", [])
    for j in reversed(range(len(ops))):
        yield head.with_params(ops=ops[:j] + ops[j + 1:])
    convs = head.get("convs", [])
    if convs:
        yield head.with_params(convs=[])
        for j, conv in enumerate(convs):
            yield from (head.with_params(convs=convs[:j] + [q] + convs[j + 1:]) for q in _smaller_convs(conv))


def _smaller_layers(layer: LayerSpec) -> Iterator[LayerSpec]:
    p = layer.params
    if layer.kind == "conv":
        yield from (LayerSpec("conv", q) for q in _smaller_convs(p))
    elif layer.kind == "residual":
        yield from (layer.with_params(conv=q) for q in _smaller_convs(p["conv"]) if q.get("out", 1) == p["conv"].get("out", 1))
        if p["post"] != "none":
            yield layer.with_params(post="none")
    elif layer.kind == "concat":
        for side in ("a", "b"):
            yield from (layer.with_params(**{side: q}) for q in _smaller_convs(p[side]))
    elif layer.kind == "dense":
        if p["out"] > 1:
            yield layer.with_params(out=p["out"] // 2)
        for key in ("bn", "bias", "matmul"):
            if p[key]:
                yield layer.with_params(**{key: False})
        if p["act"] != "none":
            yield layer.with_params(act="none")
    elif layer.kind == "pool":
        if p["pads"] != [0, 0, 0, 0]:
            yield layer.with_params(pads=[0, 0, 0, 0])
        if p["ceil"]:
            yield layer.with_params(ceil=False)
        if p["stride"] != p["k"]:
            yield layer.with_params(stride=list(p["k"]))
    elif layer.kind == "flatten" and p.get("shape_code"):
        yield layer.with_params(shape_code=False)
    elif layer.kind == "resize":
        if p.get("shape_code"):
            yield layer.with_params(shape_code=False)
        if p.get("fraction"):
            yield layer.with_params(fraction=None)
        if p["scale"] > 2:
            yield layer.with_params(scale=2)
    elif layer.kind == "pad":
        yield from (layer.with_params(pads=[v if j != i else 0 for j, v in enumerate(p["pads"])])
                    for i in range(4) if p["pads"][i])


def _smaller_convs(p: dict) -> Iterator[dict]:
    if p["groups"] != 1 and p["groups"] != "depthwise":
        yield {**p, "groups": 1}
    if p.get("out", 1) > 1:
        out = p["out"] // 2
        g = p["groups"] if isinstance(p["groups"], int) else 1
        yield {**p, "out": max(g, out - out % g)}
    if p["k"] != [1, 1]:
        yield {**p, "k": [1, 1], "pads": [0, 0, 0, 0], "dil": [1, 1]}
    for key, plain in (("stride", [1, 1]), ("dil", [1, 1]), ("pads", [0, 0, 0, 0])):
        if p[key] != plain:
            yield {**p, key: plain}
    for key in ("bn", "bias"):
        if p[key]:
            yield {**p, key: False}
    if p["act"] != "none":
        yield {**p, "act": "none"}


def save_reproducer(spec: ModelSpec, result: Result, folder: Path) -> Path:
    """model.onnx, calib.npz (the inputs), spec.json, target.yaml (a random target) and replay.sh (the one
    command that shows the failure) in `folder`."""
    shutil.rmtree(folder, ignore_errors=True)
    write_inputs(spec, folder)
    if result.stage == "build":
        command = build_command(spec, result.rtl)
    else:  # the float reference against onnxruntime, or a worker that died: the fuzzer's own check
        command = f"hlsgen fuzz --replay spec.json{' --rtl' if result.rtl else ''}"
    (folder / "replay.sh").write_text(f"#!/bin/sh\n# {result.outcome}: {result.message[:300]}\ncd \"$(dirname \"$0\")\"\n"
                                      f"{command}\n")
    (folder / "replay.sh").chmod(0o755)
    return folder
