"""The graph IR: named tensors, constant arrays, and nodes whose attributes are frozen dataclasses.

Nodes are immutable; passes rewrite the graph by adding, removing and replacing nodes.
networkx provides the graph algorithms (topological order, cycles) over a view built on demand.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from typing import Any, Iterator

import networkx as nx
import numpy as np

from .input_fold import InputFold
from .quant import TensorQuant, WeightQuant


@dataclass(frozen=True)
class TensorInfo:
    name: str
    shape: tuple[int, ...]
    dtype: str = "float32"

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))


@dataclass(frozen=True)
class Node:
    """One operation. `inputs` may hold "" for an omitted optional input."""

    name: str
    op: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: Any = None

    def with_(self, **changes: Any) -> "Node":
        return replace(self, **changes)


@dataclass(frozen=True)
class ElementwiseStep:
    """`x op value` (or `value op x` when not `x_first`) in float32, `value` a constant of `shape`."""

    op: str  # Add, Sub, Mul or Div
    value: tuple[float, ...]  # the constant's float32 values, flattened
    shape: tuple[int, ...]
    x_first: bool = True


@dataclass(frozen=True)
class InputSteps:
    """How a graph input is made from the array the model's file takes: the exporter's preprocessing that
    hlsgen absorbed into the input (hlsgen/frontend/inputs.py). In order: a layout Transpose (`perm`), a
    Cast of integers to float32, elementwise arithmetic by constants (up to the model's QuantizeLinear, whose
    grid the input then has), or instead of the arithmetic the DequantizeLinear of integers (`dequantize`:
    scale, zero point). They run on the host as the input's quantization (QuantizedModel.quantize_inputs)."""

    shape: tuple[int, ...]  # the input's shape in the model's file
    dtype: str  # its element type there
    perm: tuple[int, ...] | None = None
    cast: bool = False
    ops: tuple[ElementwiseStep, ...] = ()
    dequantize: tuple[float, int] | None = None
    nodes: tuple[str, ...] = ()  # the ONNX nodes absorbed, as the file names them

    def takes(self, array: np.ndarray) -> bool:
        """`array` holds samples of the file's input (its shape and kind of element type), not the graph's."""
        if array.ndim != len(self.shape) or tuple(array.shape[1:]) != tuple(self.shape[1:]):
            return False
        if np.issubdtype(np.dtype(self.dtype), np.integer):
            return np.issubdtype(array.dtype, np.integer) or array.dtype == np.bool_
        return np.can_cast(array.dtype, self.dtype, casting="same_kind")

    def apply(self, array: np.ndarray) -> np.ndarray:
        """The graph input's values (float32) from the file's array (N samples, already of `dtype`), computed
        as the model computes them: numpy's float32 arithmetic is IEEE's, as onnxruntime's is."""
        x = np.asarray(array).astype(self.dtype, copy=False)
        if self.perm is not None:
            x = np.ascontiguousarray(x.transpose(self.perm))
        if self.dequantize is not None:  # DequantizeLinear: the difference in integers, the product in float32
            scale, zero = self.dequantize
            return (x.astype(np.int64) - zero).astype(np.float32) * np.float32(scale)
        x = x.astype(np.float32)
        for step in self.ops:
            c = np.asarray(step.value, np.float32).reshape(step.shape)
            a, b = (x, c) if step.x_first else (c, x)
            x = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}[step.op](a, b)
            x = np.asarray(x, np.float32)
        return x


@dataclass
class Graph:
    name: str
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    tensors: dict[str, TensorInfo] = field(default_factory=dict)
    constants: dict[str, np.ndarray] = field(default_factory=dict)
    nodes: dict[str, Node] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)
    # Quantization of tensors by name: a TensorQuant per activation; a quantized constant's integers and
    # their WeightQuant.
    quant: dict[str, TensorQuant | tuple[np.ndarray, WeightQuant]] = field(default_factory=dict)
    # Graph input -> the shape the model's file declares, where a pass gave the input another shape of the
    # same element order (the npz convention accepts arrays of either shape).
    input_shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    # Graph input -> the steps that make it from the model file's input (absorbed preprocessing: layout,
    # integer-to-float Cast, arithmetic up to the input's QuantizeLinear); the npz convention takes the file's
    # arrays and runs them.
    input_steps: dict[str, InputSteps] = field(default_factory=dict)
    # Graph input -> how the host folds it, where a pass moved its pixel blocks or windows into channels
    # (hlsgen.passes.input_fold): the input's shape is the folded one, and the executor and the host fold an
    # array of the model's shape first.
    input_folds: dict[str, InputFold] = field(default_factory=dict)
    # Node name -> the ONNX node it was imported from, as the file spells it: (node name, op type, opset).
    origins: dict[str, tuple[str, str, int]] = field(default_factory=dict)

    def origin(self, node: str) -> tuple[str, str, int] | None:
        """The ONNX node (name, op type, opset) that `node` came from; None for a node a pass made."""
        return self.origins.get(node)

    def describe(self, node: str) -> str:
        """A node as the user's ONNX file names it, for messages: "layer 'conv1' (Conv)"."""
        origin = self.origins.get(node)
        return f"layer {origin[0]!r} ({origin[1]})" if origin else f"layer {node!r}"

    # ---- queries -------------------------------------------------------------------------
    def producer(self, tensor: str) -> Node | None:
        for node in self.nodes.values():
            if tensor in node.outputs:
                return node
        return None

    def consumers(self, tensor: str) -> list[Node]:
        return [n for n in self.nodes.values() if tensor in n.inputs]

    def is_constant(self, tensor: str) -> bool:
        return tensor in self.constants

    def shape(self, tensor: str) -> tuple[int, ...]:
        return self.tensors[tensor].shape

    def to_networkx(self) -> nx.MultiDiGraph:
        """Nodes by name; an edge producer -> consumer per tensor, keyed by the tensor's name."""
        g = nx.MultiDiGraph()
        produced_by: dict[str, str] = {}
        for node in self.nodes.values():
            g.add_node(node.name)
            for out in node.outputs:
                produced_by[out] = node.name
        for node in self.nodes.values():
            for t in node.inputs:
                if t in produced_by:
                    g.add_edge(produced_by[t], node.name, key=t)
        return g

    def topological(self) -> Iterator[Node]:
        position = {name: i for i, name in enumerate(self.nodes)}
        for name in nx.lexicographical_topological_sort(self.to_networkx(), key=position.__getitem__):
            yield self.nodes[name]

    # ---- edits ---------------------------------------------------------------------------
    def fresh_name(self, base: str) -> str:
        taken = set(self.nodes) | set(self.tensors) | set(self.constants)
        if base not in taken:
            return base
        i = 1
        while f"{base}_{i}" in taken:
            i += 1
        return f"{base}_{i}"

    def add_node(self, node: Node) -> Node:
        if node.name in self.nodes:
            raise ValueError(f"node {node.name!r} already exists")
        self.nodes[node.name] = node
        return node

    def remove_node(self, name: str) -> None:
        del self.nodes[name]

    def replace_node(self, old: str, new: Node) -> None:
        """Put `new` where `old` was (keeping the node order stable)."""
        self.nodes = {(new.name if k == old else k): (new if k == old else v) for k, v in self.nodes.items()}

    def add_constant(self, name: str, value: np.ndarray) -> str:
        value = np.asarray(value)
        self.constants[name] = value
        self.tensors[name] = TensorInfo(name, tuple(value.shape), str(value.dtype))
        return name

    def rename_tensor(self, old: str, new: str) -> None:
        """Make every consumer (and the graph outputs) read `new` instead of `old`."""
        for node in list(self.nodes.values()):
            if old in node.inputs:
                inputs = tuple(new if t == old else t for t in node.inputs)
                self.nodes[node.name] = node.with_(inputs=inputs)
        self.outputs = [new if t == old else t for t in self.outputs]

    def prune_tensors(self) -> None:
        """Forget tensors and constants that no node, input or output refers to."""
        used = set(self.inputs) | set(self.outputs)
        for node in self.nodes.values():
            used.update(node.inputs)
            used.update(node.outputs)
        self.tensors = {k: v for k, v in self.tensors.items() if k in used}
        self.constants = {k: v for k, v in self.constants.items() if k in used}
        self.quant = {k: v for k, v in self.quant.items() if k in used}

    def sort(self) -> None:
        """Reorder `nodes` topologically (stable)."""
        self.nodes = {n.name: n for n in self.topological()}

    def copy(self) -> "Graph":
        return copy.deepcopy(self)
