"""The float reference: executes the IR node by node with the numpy kernels of `hlsgen.ops`."""
from __future__ import annotations

import numpy as np

from ..ir import Graph, TensorInfo
from ..ops.registry import evaluate


def run_graph(graph: Graph, feeds: dict[str, np.ndarray], keep_all: bool = False) -> dict[str, np.ndarray]:
    """Run `graph` on one batch. `feeds` maps each graph input to an array of its declared shape (or, for an
    input with `Graph.input_steps`, of the model file's shape and type).

    Returns the graph outputs (or every tensor when `keep_all`).
    """
    values: dict[str, np.ndarray | None] = {"": None}
    values.update(graph.constants)
    for name in graph.inputs:
        value, steps = np.asarray(feeds[name]), graph.input_steps.get(name)
        fold, unfolded = graph.input_folds.get(name), graph.tensors[name].shape
        if fold is not None:  # the model's shape of an input the host folds (Graph.input_folds)
            unfolded = (unfolded[0], *fold.image)
        if steps is not None and steps.takes(value):  # the model file's array: its absorbed preprocessing first
            with np.errstate(all="ignore"):
                value = steps.apply(value)
            if tuple(value.shape[1:]) != tuple(unfolded[1:]):  # a pass reshaped the input (Graph.input_shapes)
                value = value.reshape((value.shape[0], *unfolded[1:]))
        if fold is not None and tuple(value.shape[1:]) == tuple(unfolded[1:]):  # the host's (passes.input_fold)
            value = fold.apply(value)
        values[name] = np.asarray(value, dtype=graph.tensors[name].dtype)
    for node in graph.topological():
        outputs = evaluate(node, [values[t] for t in node.inputs])
        for name, value in zip(node.outputs, outputs):
            values[name] = np.asarray(value)
    if keep_all:
        return {k: v for k, v in values.items() if k}
    return {name: values[name] for name in graph.outputs}


def annotate_shapes(graph: Graph, nodes) -> None:
    """Record TensorInfo for the outputs of `nodes` by evaluating them on zeros (constants as they are)."""
    for node in nodes:
        inputs = []
        for t in node.inputs:
            if not t:
                inputs.append(None)
            elif t in graph.constants:
                inputs.append(graph.constants[t])
            else:
                info = graph.tensors[t]
                inputs.append(np.zeros(info.shape, info.dtype))
        with np.errstate(all="ignore"):
            outputs = evaluate(node, inputs)
        for name, value in zip(node.outputs, outputs):
            value = np.asarray(value)
            graph.tensors[name] = TensorInfo(name, tuple(value.shape), str(value.dtype))
