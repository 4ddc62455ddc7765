"""Inputs as exporters ship them: the preprocessing between a graph input and the network, absorbed into the
input itself (`Graph.input_steps`), so that the accelerator's first layer reads the input.

TFLite-converted and other exported models take uint8 or int8 images, often NHWC, and open with
`Transpose(0,3,1,2) -> Cast(float) -> Sub/Div/Mul/Add by constants -> QuantizeLinear -> DequantizeLinear`.
From an input, hlsgen absorbs, each node read only by the next:

1. a Transpose that keeps the batch axis first (the input's layout: the host permutes the user's array);
2. for a uint8/int8 input, a Cast to float32, then either
   - elementwise Add/Sub/Mul/Div by float32 constants followed by the model's own QuantizeLinear: the input
     becomes the QuantizeLinear's input, so it is quantized on the model's grid (its scale, zero point and
     width, kept by hlsgen.quant.prequant) by the model's own arithmetic (float32, round half to even,
     saturating, as ONNX defines QuantizeLinear);
   - or nothing more: the integers are the input, on the grid of their type (scale 1, zero point 0, 8 bits);
3. or, for a uint8/int8 input, a per-tensor DequantizeLinear: the integers are the input, on its grid.

The graph input keeps its name and takes the absorbed tensor's shape and type; the npz convention takes the
file's arrays (its shape and dtype) and runs the steps on them (hlsgen.npz_io.match_inputs), and arrays of the
graph's own form as they are. The steps run on the host as the input's quantization: no host stage, no
extra segment. A float input keeps its arithmetic (it could not tell the file's arrays from the graph's),
and a chain not ending where one of the rules above ends is left to the graph.
"""
from __future__ import annotations

import numpy as np

from ..ir import ElementwiseStep, Graph, InputSteps, Node, TensorInfo
from ..ir.quant import TensorQuant

INTEGER_INPUTS = ("uint8", "int8")
ARITHMETIC = ("Add", "Sub", "Mul", "Div")


def _sole_reader(graph: Graph, tensor: str) -> Node | None:
    if tensor in graph.outputs:
        return None
    readers = graph.consumers(tensor)
    return readers[0] if len(readers) == 1 else None


def _scalar_constant(graph: Graph, name: str) -> np.ndarray | None:
    value = graph.constants.get(name) if name else None
    return value if value is not None and np.size(value) == 1 else None


def _arithmetic(graph: Graph, node: Node, x: str) -> ElementwiseStep | None:
    """`node` as a step on `x`: x op constant (or constant op x) that keeps x's shape, in float32."""
    if node.op not in ARITHMETIC or len(node.inputs) != 2 or list(node.inputs).count(x) != 1:
        return None
    other = node.inputs[1] if node.inputs[0] == x else node.inputs[0]
    value = graph.constants.get(other)
    if value is None or value.dtype != np.float32 or graph.shape(node.outputs[0]) != graph.shape(x):
        return None
    return ElementwiseStep(node.op, tuple(float(v) for v in value.ravel()), tuple(value.shape), node.inputs[0] == x)


def _per_tensor_quantizer(graph: Graph, node: Node | None, op: str) -> bool:
    """A QuantizeLinear/DequantizeLinear with one constant scale (and zero point)."""
    if node is None or node.op != op:
        return False
    scale = _scalar_constant(graph, node.inputs[1] if len(node.inputs) > 1 else "")
    zero = node.inputs[2] if len(node.inputs) > 2 else ""
    return scale is not None and float(scale.ravel()[0]) > 0 and (not zero or _scalar_constant(graph, zero) is not None)


def _moves_unit_axes(shape: tuple[int, ...], perm: tuple[int, ...]) -> bool:
    moved = [axis for axis in perm if shape[axis] != 1]
    return moved == sorted(moved)


def absorb_input_steps(graph: Graph) -> list[str]:
    """Absorb each input's preprocessing (module docstring) into `graph.input_steps`; returns one notice per
    input changed."""
    notices = []
    for name in list(graph.inputs):
        if name in graph.input_steps:
            continue
        notice = _absorb(graph, name)
        if notice:
            notices.append(notice)
    return notices


def _absorb(graph: Graph, name: str) -> str | None:
    info = graph.tensors[name]
    integer = info.dtype in INTEGER_INPUTS
    absorbed: list[Node] = []
    tensor, perm = name, None
    node = _sole_reader(graph, tensor)
    if node is not None and node.op == "Transpose" and node.attrs.perm and node.attrs.perm[0] == 0 \
            and tuple(node.attrs.perm) != tuple(range(len(node.attrs.perm))):
        perm, tensor = tuple(node.attrs.perm), node.outputs[0]
        absorbed.append(node)
        node = _sole_reader(graph, tensor)
    quant, cast, ops, dequantize = None, False, [], None
    if integer and node is not None and node.op == "Cast" and node.attrs.to == "float32":
        cast, tensor = True, node.outputs[0]
        absorbed.append(node)
        chain, end, reader = [], tensor, _sole_reader(graph, tensor)
        while reader is not None and (step := _arithmetic(graph, reader, end)) is not None:
            chain.append((reader, step))
            end = reader.outputs[0]
            reader = _sole_reader(graph, end)
        # up to the model's own QuantizeLinear, whose grid hlsgen.quant.prequant gives the input
        if _per_tensor_quantizer(graph, reader, "QuantizeLinear") and reader.inputs[0] == end:
            absorbed += [n for n, _ in chain]
            ops = [s for _, s in chain]
            tensor = end
        else:  # the integers are the input
            quant = TensorQuant(1.0, 0, 8, info.dtype == "int8")
    elif integer and _per_tensor_quantizer(graph, node, "DequantizeLinear") and node.inputs[0] == tensor:
        scale = float(_scalar_constant(graph, node.inputs[1]).ravel()[0])
        zero = int(_scalar_constant(graph, node.inputs[2]).ravel()[0]) if len(node.inputs) > 2 and node.inputs[2] else 0
        dequantize, tensor = (scale, zero), node.outputs[0]
        quant = TensorQuant(scale, zero, 8, info.dtype == "int8")
        absorbed.append(node)
    elif integer or perm is None or graph.shape(tensor)[1:] == info.shape[1:] or _moves_unit_axes(info.shape, perm):
        return None  # nothing to absorb; arrays of the file's and the graph's shape look alike; or a Transpose
        # that keeps the element order, which the optimizer reads as a Reshape of the input (Graph.input_shapes)
    if not graph.consumers(tensor):
        return None
    final = graph.tensors[tensor]
    for n in absorbed:
        graph.remove_node(n.name)
    graph.rename_tensor(tensor, name)
    graph.tensors[name] = TensorInfo(name, final.shape, final.dtype)
    if quant is not None:
        graph.quant[name] = quant
    origins = tuple(graph.origins.get(n.name, (n.name, n.op, 0))[0] for n in absorbed)
    graph.input_steps[name] = InputSteps(tuple(info.shape), info.dtype, perm, cast, tuple(ops), dequantize, origins)
    graph.prune_tensors()
    ops_named = ", ".join(f"{graph.origins.get(n.name, (n.name, n.op))[1]}" for n in absorbed)
    grid = ("its type's integers" if quant is not None and dequantize is None else
            "the grid of its DequantizeLinear" if dequantize is not None else "the grid of its QuantizeLinear")
    return (f"input {name!r} ({info.dtype} {'x'.join(map(str, info.shape))}): {ops_named} absorbed as its input "
            f"quantization on the host, on {grid}; the accelerator reads it as {'x'.join(map(str, final.shape))}")
