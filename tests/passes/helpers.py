"""Shared by the pass tests: build a graph from ONNX nodes, and run a pass checking it keeps the outputs."""
from __future__ import annotations

import numpy as np

from hlsgen.frontend import import_model
from hlsgen.ir import Graph
from hlsgen.reference import verify_graph
from hlsgen.passes import Pass
from hlsgen.reference import run_graph
from tests.builders import make_model, tensor_value


def onnx_graph(nodes, inputs: dict[str, tuple[int, ...]], outputs: list[str], initializers=None) -> Graph:
    """Import a model made of `nodes`; inputs map names to shapes, outputs get inferred types."""
    model = make_model(
        nodes,
        [tensor_value(name, shape) for name, shape in inputs.items()],
        [tensor_value(name, None) for name in outputs],
        {k: _float32(v) for k, v in (initializers or {}).items()},
    )
    return import_model(model)


def _float32(value) -> np.ndarray:
    """Float initializers as float32 (what the models under test use); integers such as shapes kept."""
    value = np.asarray(value)
    return value.astype(np.float32) if np.issubdtype(value.dtype, np.floating) else value


def random_feeds(graph: Graph, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {n: rng.standard_normal(graph.shape(n)).astype(graph.tensors[n].dtype) for n in graph.inputs}


def assert_same_outputs(expected: dict[str, np.ndarray], got: dict[str, np.ndarray], rtol: float) -> None:
    assert expected.keys() == got.keys()
    for name, want in expected.items():
        assert got[name].shape == want.shape, f"{name}: shape {got[name].shape} != {want.shape}"
        # Infinities (a -inf Pad is a legitimate output) must match exactly; the rest up to rtol.
        finite = np.isfinite(want)
        assert np.array_equal(got[name][~finite], want[~finite], equal_nan=True), f"{name}: non-finite values differ"
        want, have = want[finite].astype(np.float64), got[name][finite].astype(np.float64)
        scale = max(float(np.abs(want).max(initial=0.0)), 1e-6)
        err = float(np.abs(have - want).max(initial=0.0)) / scale
        assert err <= rtol, f"{name}: relative error {err:.3g} > {rtol}"


def apply_pass(graph: Graph, graph_pass: Pass, rtol: float = 1e-5) -> bool:
    """Run `graph_pass` in place, check the graph verifies and computes what it did before; return whether it fired."""
    feeds = random_feeds(graph)
    before = run_graph(graph, feeds)
    fired = graph_pass(graph)
    graph.prune_tensors()
    verify_graph(graph)
    assert_same_outputs(before, run_graph(graph, feeds), rtol)
    return fired


def ops(graph: Graph) -> list[str]:
    """The graph's ops in topological order."""
    return [n.op for n in graph.topological()]
