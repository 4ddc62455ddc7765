"""Keep a pre-quantized model's quantization: read QDQ pairs, QOperator expansions and QONNX Quant nodes
into `graph.quant` and remove them, before the float passes fold them away.

- An activation behind QuantizeLinear -> DequantizeLinear (or a QONNX QuantDequant) keeps that scale,
  zero point and bit width (a TensorQuant).
- A constant weight behind DequantizeLinear (or QuantDequant) becomes a float constant annotated with its
  integers and per-channel scales, which the quantizer uses as they are.
A pass that later rewrites a weight (BatchNorm folding, Gemm transposition) makes a new constant without
the annotation; the quantizer then quantizes that weight itself.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import UnsupportedModelError
from ..ir import Graph, Node
from ..ops.activation import ClipAttrs
from ..ops.qonnx import ROUNDING
from ..ops.quantize import INT_RANGES, along
from ..ops.registry import evaluate
from ..reference.float_executor import annotate_shapes
from .params import TensorQuant, WeightQuant

FUSES_RELU = ("Conv", "Gemm", "MatMul", "Add")  # producers whose ReLU an exporter may fold into the grid


def absorb_quantization(graph: Graph) -> bool:
    """Move every quantize/dequantize node's parameters into graph.quant; True if any was found."""
    changed = False
    for node in list(graph.nodes.values()):
        if node.name not in graph.nodes:
            continue
        if node.op == "DequantizeLinear" and str(graph.constants.get(node.inputs[0], np.zeros(0)).dtype) == "int32":
            _fold_bias(graph, node)
        elif node.op == "DequantizeLinear" and node.inputs[0] in graph.constants:
            _absorb_weight(graph, node, *_dequantize_params(graph, node))
        elif node.op == "DequantizeLinear":
            producer = graph.producer(node.inputs[0])
            if producer is None or producer.op != "QuantizeLinear":
                raise UnsupportedModelError(f"DequantizeLinear {node.name!r} reads a tensor that is not quantized "
                                            "in the graph (only QuantizeLinear -> DequantizeLinear pairs are kept)")
            scale, zero, bits, signed, _ = _dequantize_params(graph, node)
            _absorb_activation(graph, producer, node, TensorQuant(float(scale), int(zero), bits, signed))
        elif node.op == "QuantDequant":
            _absorb_quant_dequant(graph, node)
        else:
            continue
        changed = True
    for node in [n for n in graph.nodes.values() if n.op == "Trunc"]:  # after the quantizers have set theirs
        changed |= _trunc_input_grid(graph, node)
    if changed:
        graph.prune_tensors()
    return changed


def _trunc_input_grid(graph: Graph, node: Node) -> bool:
    """A QONNX Trunc reads round(x / scale + zeropt) as an in_bits integer: that is the model's grid for an x
    no quantizer set (the sum or average a Brevitas TruncAvgPool truncates)."""
    x = node.inputs[0]
    if x in graph.quant or x in graph.constants:
        return False
    scale, zero, in_bits = (float(np.ravel(graph.constants[t])[0]) for t in node.inputs[1:4])
    if not (float(zero).is_integer() and float(in_bits).is_integer() and 2 <= in_bits <= 32 and scale > 0):
        raise UnsupportedModelError(f"QONNX Trunc {node.name!r}: input grid (scale {scale:g}, zero point {zero:g}, "
                                    f"{in_bits:g} bits) is not a grid of integers hlsgen keeps")
    graph.quant[x] = TensorQuant(scale, int(zero), int(in_bits), node.attrs.signed)
    return True


def _dequantize_params(graph: Graph, node: Node):
    """(scale, zero point, bits, signed, axis) of a DequantizeLinear; its input dtype gives the width."""
    source = graph.producer(node.inputs[0])
    if source is not None and source.op == "QuantizeLinear":
        dtype = source.attrs.out_dtype
    else:
        dtype = str(graph.tensors[node.inputs[0]].dtype)
    if dtype not in INT_RANGES:
        raise UnsupportedModelError(f"DequantizeLinear {node.name!r}: {dtype} values are not integers hlsgen keeps")
    bits = int(np.log2(INT_RANGES[dtype][1] - INT_RANGES[dtype][0] + 1))
    scale = graph.constants[node.inputs[1]]
    zero = graph.constants[node.inputs[2]] if len(node.inputs) > 2 and node.inputs[2] else np.zeros((), np.int64)
    return scale, zero, bits, dtype.startswith("int"), node.attrs.axis


def _fold_bias(graph: Graph, node: Node) -> None:
    """An int32 bias behind DequantizeLinear (as onnxruntime's QDQ exports store it) becomes its real value:
    the quantizer puts every bias on its own accumulator grid."""
    (real,) = evaluate(node, [graph.constants.get(t) if t else None for t in node.inputs])
    graph.remove_node(node.name)
    graph.add_constant(node.outputs[0], np.asarray(real, np.float32))


def _absorb_weight(graph: Graph, node: Node, scale, zero, bits: int, signed: bool, axis) -> None:
    ints = np.asarray(graph.constants[node.inputs[0]], np.int64)
    channels = ints.shape[axis] if axis is not None else ints.shape[0]
    shape = [1] * ints.ndim
    if axis is not None:
        shape[axis] = -1
    zero = np.asarray(zero, np.int64).reshape(shape if np.size(zero) > 1 else ())
    centred = ints - zero  # symmetric weights about their own zero point
    scales = np.broadcast_to(np.asarray(scale, np.float64).reshape(-1), (channels,))
    real = (centred * np.asarray(scale, np.float64).reshape(shape if np.size(scale) > 1 else ())).astype(np.float32)
    out = node.outputs[0]
    graph.remove_node(node.name)
    graph.add_constant(out, real)
    width = bits + int(bool(np.any(zero)))  # an offset zero point widens the centred integers by a bit
    graph.quant[out] = (centred, WeightQuant(tuple(float(s) for s in scales), width))


def _absorb_activation(graph: Graph, quantize: Node, dequantize: Node, quant: TensorQuant) -> None:
    """x -> Q -> DQ -> y becomes x (renamed y when y is a graph output) annotated with `quant`."""
    x, y = quantize.inputs[0], dequantize.outputs[0]
    graph.remove_node(dequantize.name)
    if not graph.consumers(quantize.outputs[0]):
        graph.remove_node(quantize.name)
    _merge(graph, x, y, quant)


def _absorb_quant_dequant(graph: Graph, node: Node) -> None:
    a = node.attrs
    x, y = node.inputs[0], node.outputs[0]
    if a.bits < 2 and not (a.bipolar and x in graph.constants):
        raise UnsupportedModelError(f"QONNX node {node.name!r}: {a.bits}-bit (bipolar/binary) quantization of an "
                                    "activation is not supported; use 2 bits or more (bipolar weights are)")
    scale = graph.constants[node.inputs[1]]
    zero = graph.constants[node.inputs[2]] if len(node.inputs) > 2 and node.inputs[2] else np.zeros(())
    if x in graph.constants:
        lo, hi = a.int_range()
        s = np.asarray(scale, np.float64)
        values = graph.constants[x]
        if a.bipolar:  # +-1 times the scale: the integers of a 2-bit narrow grid
            ints = np.where(values >= 0, 1, -1).astype(np.int64)
        else:
            ints = np.clip(ROUNDING[a.rounding_mode](values / along(s, a.axis, values.ndim) +
                                                     along(zero, a.axis, values.ndim)), lo, hi)
            ints = (ints - along(zero, a.axis, values.ndim)).astype(np.int64)
        channels = values.shape[a.axis if a.axis is not None else 0]
        scales = np.broadcast_to(s.reshape(-1), (channels,))
        graph.remove_node(node.name)
        graph.add_constant(y, (ints * along(s, a.axis, values.ndim)).astype(np.float32))
        graph.quant[y] = (ints, WeightQuant(tuple(float(v) for v in scales), max(a.bits, 2)))
        return
    if np.size(scale) > 1 or np.size(zero) > 1:
        raise UnsupportedModelError(f"QONNX node {node.name!r}: per-channel activation quantization is not supported")
    quant = TensorQuant(float(scale), int(np.rint(zero)), a.bits, a.signed, a.narrow)
    graph.remove_node(node.name)
    _merge(graph, x, y, quant)


def _merge(graph: Graph, x: str, y: str, quant: TensorQuant) -> None:
    """Make x and y one tensor carrying `quant`; a grid that starts at or above zero keeps its clipping."""
    producer = graph.producer(x)
    if y in graph.outputs and producer is not None and not graph.consumers(x) and x not in graph.outputs:
        graph.replace_node(producer.name, producer.with_(outputs=tuple(y if t == x else t for t in producer.outputs)))
        annotate_shapes(graph, [graph.nodes[producer.name]])
        merged = y
    else:
        graph.rename_tensor(y, x)
        merged = x
    graph.quant[merged] = quant
    _keep_clipping(graph, merged, quant)


def _keep_clipping(graph: Graph, tensor: str, quant: TensorQuant) -> None:
    """An unsigned grid with zero point 0 after a Conv is the ReLU an exporter fused into the quantizer
    (onnxruntime does): keep it as a Clip, so the float graph still computes what the model does and the
    Clip fuses back into the layer's saturation."""
    producer = graph.producer(tensor)
    if quant.qmin < quant.zero_point or producer is None or producer.op not in FUSES_RELU:
        return
    raw = graph.fresh_name(f"{tensor}_unclipped")
    graph.replace_node(producer.name, producer.with_(outputs=tuple(raw if t == tensor else t for t in producer.outputs)))
    graph.tensors[raw] = replace(graph.tensors[tensor], name=raw)
    bounds = ClipAttrs((quant.qmin - quant.zero_point) * quant.scale, (quant.qmax - quant.zero_point) * quant.scale)
    graph.add_node(Node(graph.fresh_name(f"{tensor}_clip"), "Clip", (raw,), (tensor,), bounds))
