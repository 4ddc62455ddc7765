"""Build tiny ONNX models in code and run them through onnxruntime for cross-checks."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

# onnx >= 1.23 writes IR version 14 by default, which onnxruntime 1.31 refuses.
IR_VERSION = 10


def tensor_value(name: str, shape: Sequence[int | str] | None, dtype=TensorProto.FLOAT) -> onnx.ValueInfoProto:
    """A typed graph input/output; shape None (outputs only) is filled in by `make_model`."""
    if shape is None:
        return helper.make_empty_tensor_value_info(name)
    return helper.make_tensor_value_info(name, dtype, list(shape))


def make_model(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[onnx.ValueInfoProto],
    initializers: dict[str, np.ndarray] | None = None,
    opset: int = 17,
    name: str = "tiny",
) -> onnx.ModelProto:
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in (initializers or {}).items()]
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = IR_VERSION
    _fill_output_types(model)
    onnx.checker.check_model(model)
    return model


def run_ort(model: onnx.ModelProto, feeds: dict[str, np.ndarray], fused: bool = True) -> dict[str, np.ndarray]:
    """The model's outputs by onnxruntime; `fused=False` runs its graph as written (no graph optimization: a QDQ
    model in ONNX's own float arithmetic, not onnxruntime's fused integer kernels, whose rounding differs)."""
    options = ort.SessionOptions()
    if not fused:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(names, feeds)))


def random_feeds(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    """Standard-normal float32 data for every graph input (symbolic dims become 1)."""
    rng = np.random.default_rng(seed)
    init = {i.name for i in model.graph.initializer}
    feeds = {}
    for value in model.graph.input:
        if value.name in init:
            continue
        dims = [d.dim_value if d.dim_value > 0 else 1 for d in value.type.tensor_type.shape.dim]
        feeds[value.name] = rng.standard_normal(dims).astype(np.float32)
    return feeds


def assert_close_to_ort(model: onnx.ModelProto, feeds: dict[str, np.ndarray] | None = None, rtol: float = 1e-4):
    """Import `model`, run the float reference and compare each output with onnxruntime."""
    from hlsgen.frontend import import_model
    from hlsgen.reference import verify_graph
    from hlsgen.reference import run_graph

    feeds = feeds if feeds is not None else random_feeds(model)
    graph = import_model(model)
    verify_graph(graph)
    ours = run_graph(graph, feeds)
    theirs = run_ort(model, feeds)
    for name, expected in theirs.items():
        got = ours[name]
        assert got.shape == expected.shape, f"{name}: shape {got.shape} != {expected.shape}"
        scale = max(float(np.abs(expected).max(initial=0.0)), 1e-6)
        err = float(np.abs(got.astype(np.float64) - expected).max(initial=0.0)) / scale
        assert err <= rtol, f"{name}: relative error {err:.3g} > {rtol}"
    return graph


def _fill_output_types(model: onnx.ModelProto) -> None:
    """Give graph outputs declared without a type the type shape inference finds for them."""
    untyped = [o for o in model.graph.output if not o.type.HasField("tensor_type")]
    if not untyped:
        return
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True).graph
    known = {v.name: v for v in list(inferred.value_info) + list(inferred.output)}
    for out in untyped:
        out.type.CopyFrom(known[out.name].type)
