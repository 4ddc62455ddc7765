"""The public Python API: `hlsgen.load_onnx(path)` returns a Model to optimize and run."""
from __future__ import annotations

import os

import numpy as np

from .analysis import NodeCost, graph_costs
from .frontend import read_onnx
from .ir import Graph
from .npz_io import match_inputs
from .passes import optimize as _optimize
from .passes.pipeline import PassLog
from .reference import run_graph


class Model:
    """A graph in the IR plus what was done to it."""

    def __init__(self, graph: Graph, pass_log: PassLog | None = None):
        self.graph = graph
        self.pass_log = pass_log

    @property
    def inputs(self) -> list[str]:
        return list(self.graph.inputs)

    @property
    def outputs(self) -> list[str]:
        return list(self.graph.outputs)

    def optimize(self, verify_each: bool = False) -> "Model":
        """A new, optimized Model (this one is left unchanged); `.pass_log` says which passes fired."""
        graph = self.graph.copy()
        log = _optimize(graph, verify_each=verify_each)
        return Model(graph, log)

    def run(self, inputs: dict[str, np.ndarray] | np.ndarray) -> dict[str, np.ndarray]:
        """Float reference on N samples stacked along the batch axis; returns outputs by name."""
        if not isinstance(inputs, dict):
            inputs = {self.graph.inputs[0]: inputs} if len(self.graph.inputs) == 1 else {}
        feeds = match_inputs(self.graph, inputs)
        batch = self.graph.tensors[self.graph.inputs[0]].shape[0]
        total = next(iter(feeds.values())).shape[0]
        chunks = []
        for start in range(0, total, batch):
            chunk = {k: v[start : start + batch] for k, v in feeds.items()}
            chunks.append(run_graph(self.graph, chunk))
        return {name: np.concatenate([c[name] for c in chunks]) for name in self.graph.outputs}

    def costs(self) -> list[NodeCost]:
        return graph_costs(self.graph)


def load_onnx(path: str | os.PathLike, input_shapes: dict[str, tuple[int, ...]] | None = None) -> Model:
    """Read an ONNX CNN (static shapes; a symbolic batch dimension is pinned to 1, other dynamic dims are
    fixed by `input_shapes`)."""
    return Model(read_onnx(path, input_shapes))
