"""The ONNX-level view a partition needs: every tensor's shape and type (read off one onnxruntime run, so
exporter graphs that ONNX's shape inference leaves partly unknown are covered), each node's MACs, and the
extraction of a set of nodes as a model of its own."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper

from ..errors import UnsupportedModelError

# onnx >= 1.23 writes IR version 14 by default, which onnxruntime 1.31 refuses.
MAX_IR_VERSION = 10


@dataclass(frozen=True)
class TensorType:
    shape: tuple[int, ...]
    dtype: np.dtype


def node_name(node: onnx.NodeProto) -> str:
    return node.name or f"{node.op_type}_{node.output[0]}"


def named_nodes(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with every node named (unique), as hlsgen's importer and messages name them, and every
    `Constant` node an initializer (a constant belongs to no side: each stage that reads it gets a copy)."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    constants = [n for n in model.graph.node if n.op_type == "Constant" and n.domain in ("", "ai.onnx")]
    for node in constants:
        array = _constant_value(node)
        if array is not None:
            model.graph.initializer.append(numpy_helper.from_array(array, node.output[0]))
            model.graph.node.remove(node)
    seen: set[str] = set()
    for node in model.graph.node:
        base = node_name(node)
        name, i = base, 1
        while name in seen:
            name, i = f"{base}_{i}", i + 1
        seen.add(name)
        node.name = name
    return model


class HostRuntimeError(UnsupportedModelError):
    """onnxruntime, the host's runtime, cannot load or run (part of) the model."""


def first_line(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return text.split(" : ")[-1][:300].rstrip(". ")


def _constant_value(node: onnx.NodeProto) -> np.ndarray | None:
    """A Constant node's value (None for the sparse and string forms, which stay nodes)."""
    (attr,) = node.attribute
    value = helper.get_attribute_value(attr)
    kinds = {"value": lambda v: numpy_helper.to_array(v), "value_float": lambda v: np.float32(v),
             "value_floats": lambda v: np.asarray(v, np.float32), "value_int": lambda v: np.int64(v),
             "value_ints": lambda v: np.asarray(v, np.int64)}
    return np.asarray(kinds[attr.name](value)) if attr.name in kinds else None


def session(model: onnx.ModelProto) -> "Session":
    model = onnx.ModelProto.FromString(model.SerializeToString())
    model.ir_version = min(model.ir_version, MAX_IR_VERSION)
    options = ort.SessionOptions()
    options.log_severity_level = 4
    options.intra_op_num_threads = 1
    try:
        return Session(ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"]))
    except Exception as exc:  # onnxruntime's own exception types (Fail, InvalidGraph, NotImplemented, ...)
        raise HostRuntimeError(f"onnxruntime cannot load the model for its host part: {first_line(exc)}") from None


class Session:
    """An onnxruntime session whose failures are one-line HostRuntimeErrors."""

    def __init__(self, inner: ort.InferenceSession):
        self.inner = inner

    def get_inputs(self):
        return self.inner.get_inputs()

    def run(self, names: list[str], feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        try:
            return self.inner.run(names, feeds)
        except Exception as exc:
            raise HostRuntimeError(f"onnxruntime cannot run the model's host part: {first_line(exc)}") from None


def initializer_names(model: onnx.ModelProto) -> set[str]:
    return {init.name for init in model.graph.initializer}


def graph_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    inits = initializer_names(model)
    return [v for v in model.graph.input if v.name not in inits]


def input_types(model: onnx.ModelProto) -> dict[str, TensorType]:
    """The (fixed) shape and type of every graph input."""
    types = {}
    for value in graph_inputs(model):
        t = value.type.tensor_type
        dims = tuple(d.dim_value for d in t.shape.dim)
        if any(d <= 0 for d in dims):
            raise UnsupportedModelError(f"input {value.name!r} still has a dynamic dimension {list(dims)} after "
                                        "folding; give its shape with --input-shape NAME:1x3xHxW")
        types[value.name] = TensorType(dims, np.dtype(helper.tensor_dtype_to_np_dtype(t.elem_type)))
    return types


def tensor_types(model: onnx.ModelProto) -> dict[str, TensorType]:
    """Every tensor's shape and type, from one onnxruntime run of the model on zeros (inputs, initializers and
    every node output)."""
    probe = onnx.ModelProto.FromString(model.SerializeToString())
    known = {o.name for o in probe.graph.output}
    for node in probe.graph.node:
        for out in node.output:
            if out and out not in known:
                probe.graph.output.append(onnx.ValueInfoProto(name=out))
                known.add(out)
    inputs = input_types(model)
    feeds = {name: np.zeros(t.shape, t.dtype) for name, t in inputs.items()}
    names = [o.name for o in probe.graph.output]
    values = session(probe).run(names, feeds)
    types = dict(inputs)
    types.update({name: TensorType(tuple(v.shape), v.dtype) for name, v in zip(names, values)})
    for init in model.graph.initializer:
        types[init.name] = TensorType(tuple(init.dims), np.dtype(helper.tensor_dtype_to_np_dtype(init.data_type)))
    return types


def node_macs(node: onnx.NodeProto, types: dict[str, TensorType]) -> int:
    """Multiply-accumulates of one node (convolutions and matrix products; 0 for everything else)."""
    def shape(i: int) -> tuple[int, ...]:
        return types[node.input[i]].shape if i < len(node.input) and node.input[i] in types else ()

    out = types[node.output[0]].shape if node.output[0] in types else ()
    if node.op_type in ("Conv", "ConvInteger", "QLinearConv"):
        w = shape(3 if node.op_type == "QLinearConv" else 1)
        return math.prod(out) * math.prod(w[1:]) if w and out else 0
    if node.op_type == "ConvTranspose":
        x, w = shape(0), shape(1)
        return math.prod(x) * math.prod(w[1:]) if x and w else 0
    if node.op_type in ("MatMul", "MatMulInteger", "QLinearMatMul", "Gemm"):
        a = shape(0)
        if not a or not out:
            return 0
        k = a[0] if node.op_type == "Gemm" and any(a.name == "transA" and a.i for a in node.attribute) else a[-1]
        return math.prod(out) * k
    return 0


def extract(model: onnx.ModelProto, nodes: list[onnx.NodeProto], inputs: list[str], outputs: list[str],
            types: dict[str, TensorType], name: str) -> onnx.ModelProto:
    """`nodes` (in the model's order) as a model of their own, reading `inputs`, returning `outputs`."""
    used = {t for node in nodes for t in node.input if t}
    inits = [init for init in model.graph.initializer if init.name in used and init.name not in inputs]

    def value(tensor: str) -> onnx.ValueInfoProto:
        t = types[tensor]
        return helper.make_tensor_value_info(tensor, helper.np_dtype_to_tensor_dtype(t.dtype), list(t.shape))

    graph = helper.make_graph(list(nodes), name, [value(t) for t in inputs], [value(t) for t in outputs], inits)
    sub = helper.make_model(graph, opset_imports=list(model.opset_import))
    sub.ir_version = min(model.ir_version, MAX_IR_VERSION)
    return sub
