"""Save and load a Graph: `graph.json` (structure, attributes, quantization) + `constants.npz` (arrays).

Attribute dataclasses are written as tagged dicts and rebuilt from their type hints, so a build folder
holds everything needed to rerun its integer reference.
"""
from __future__ import annotations

import dataclasses
import json
import typing
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from .ir import Graph, InputFold, InputSteps, Node, TensorInfo
from .ir.quant import TensorQuant, WeightQuant
from .npz_io import write_npz
from .ops.registry import OPS

FORMAT_VERSION = 1


def _to_json(value: Any) -> Any:
    if dataclasses.is_dataclass(value):
        return {"@type": type(value).__name__, **{f.name: _to_json(getattr(value, f.name))
                                                  for f in dataclasses.fields(value)}}
    if isinstance(value, (tuple, list)):
        return [_to_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _to_json(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return {"@float": repr(value)}
    if isinstance(value, Fraction):  # a Resize's fractional factor
        return {"@fraction": [value.numerator, value.denominator]}
    return value


def _dataclass_registry() -> dict[str, type]:
    found: dict[str, type] = {}

    def visit(cls: type) -> None:
        if not dataclasses.is_dataclass(cls) or cls.__name__ in found:
            return
        found[cls.__name__] = cls
        for hint in typing.get_type_hints(cls).values():
            for arg in (hint, *typing.get_args(hint)):
                if isinstance(arg, type):
                    visit(arg)

    for opdef in OPS.values():
        visit(opdef.attrs)
    for cls in (TensorQuant, WeightQuant, InputSteps):
        visit(cls)
    return found


def _from_json(value: Any, registry: dict[str, type]) -> Any:
    if isinstance(value, dict):
        if "@float" in value:
            return float(value["@float"])
        if "@fraction" in value:
            return Fraction(*value["@fraction"])
        if "@type" in value:
            cls = registry[value["@type"]]
            return cls(**{k: _freeze(_from_json(v, registry)) for k, v in value.items() if k != "@type"})
        return {k: _from_json(v, registry) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_json(v, registry) for v in value]
    return value


def _freeze(value: Any) -> Any:
    """Lists become tuples: attribute dataclasses are frozen and hashable."""
    return tuple(_freeze(v) for v in value) if isinstance(value, list) else value


def save_graph(graph: Graph, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    doc = {
        "format": FORMAT_VERSION,
        "name": graph.name,
        "inputs": graph.inputs,
        "outputs": graph.outputs,
        "tensors": {t.name: {"shape": list(t.shape), "dtype": t.dtype} for t in graph.tensors.values()},
        "nodes": [{"name": n.name, "op": n.op, "inputs": list(n.inputs), "outputs": list(n.outputs),
                   "attrs": _to_json(n.attrs)} for n in graph.nodes.values()],
        "quant": {k: _to_json(v) for k, v in graph.quant.items() if dataclasses.is_dataclass(v)},
        "notices": graph.notices,
        "input_shapes": {k: list(v) for k, v in graph.input_shapes.items()},
        **({"input_steps": {k: _to_json(v) for k, v in graph.input_steps.items()}} if graph.input_steps else {}),
        **({"input_folds": {k: v.to_json() for k, v in graph.input_folds.items()}} if graph.input_folds else {}),
    }
    (folder / "graph.json").write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n")
    write_npz(folder / "constants.npz", {f"c{i}": graph.constants[k] for i, k in enumerate(graph.constants)})
    (folder / "constants.json").write_text(json.dumps(list(graph.constants)) + "\n")


def load_graph(folder: Path) -> Graph:
    registry = _dataclass_registry()
    doc = json.loads((folder / "graph.json").read_text())
    names = json.loads((folder / "constants.json").read_text())
    with np.load(folder / "constants.npz") as data:
        constants = {name: data[f"c{i}"] for i, name in enumerate(names)}
    graph = Graph(
        name=doc["name"],
        inputs=doc["inputs"],
        outputs=doc["outputs"],
        tensors={k: TensorInfo(k, tuple(v["shape"]), v["dtype"]) for k, v in doc["tensors"].items()},
        constants=constants,
        notices=doc["notices"],
        input_shapes={k: tuple(v) for k, v in doc.get("input_shapes", {}).items()},
    )
    for n in doc["nodes"]:
        graph.add_node(Node(n["name"], n["op"], tuple(n["inputs"]), tuple(n["outputs"]),
                            _from_json(n["attrs"], registry)))
    graph.quant = {k: _from_json(v, registry) for k, v in doc["quant"].items()}
    graph.input_steps = {k: _from_json(v, registry) for k, v in doc.get("input_steps", {}).items()}
    graph.input_folds = {k: InputFold.from_json(v) for k, v in doc.get("input_folds", {}).items()}
    return graph
