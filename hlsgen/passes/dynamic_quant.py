"""onnxruntime's dynamic quantization (`quantize_dynamic`, QOperator format) folded back into float layers.

The pattern, per Conv or MatMul:

    x -> DynamicQuantizeLinear -> (x_q, x_scale, x_zp)
    ConvInteger / MatMulInteger(x_q, w_q, x_zp, w_zp) -> Cast(float) -> Mul(_, Mul(x_scale, w_scale))

becomes Conv / MatMul(x, w) on the dequantized weights w = (w_q - w_zp) * w_scale, which keep the model's
integers and scales as a pre-quantized weight (`graph.quant[w] = (ints, WeightQuant)`). The activation
scale the model computes from every input at run time has no static hardware form: hlsgen calibrates the
activation instead, so this is the one pass that changes the float graph's values, and it says so in a
notice. The bias Add that follows is fused by `fuse_bias` as for any Conv/Dense.
"""
from __future__ import annotations

import numpy as np

from ..ir import Graph, Node
from ..ops.registry import NoAttrs
from ..quant.params import WeightQuant
from .pipeline import graph_pass
from .rewrite import optional_input, sole_consumer

FLOAT_LAYER = {"ConvInteger": "Conv", "MatMulInteger": "MatMul"}


@graph_pass
def fold_dynamic_quantization(graph: Graph) -> bool:
    """Replace DynamicQuantizeLinear -> ConvInteger/MatMulInteger -> Cast -> Mul by a float Conv/MatMul."""
    folded = []
    for cast in [n for n in graph.nodes.values() if n.op == "Cast"]:
        match = _match(graph, cast)
        if match is not None:
            folded.append(_fold(graph, *match))
    if folded:
        graph.notices.append(f"dynamically quantized layer(s) {', '.join(folded)} keep the model's integer weights "
                             "and scales; their run-time activation quantization (DynamicQuantizeLinear) is replaced "
                             "by hlsgen's static calibration")
    return bool(folded)


def _match(graph: Graph, cast: Node):
    """(dynamic quantize, integer layer, cast, mul, per-channel weight scales) or None."""
    layer = graph.producer(cast.inputs[0])
    if layer is None or layer.op not in FLOAT_LAYER or cast.attrs.to != "float32":
        return None
    dq = graph.producer(layer.inputs[0])
    if dq is None or dq.op != "DynamicQuantizeLinear" or optional_input(layer, 2) != dq.outputs[2]:
        return None
    w, w_zp = layer.inputs[1], optional_input(layer, 3)
    if not graph.is_constant(w) or (w_zp and not graph.is_constant(w_zp)):
        return None
    if sole_consumer(graph, layer.outputs[0]) is None:
        return None
    mul = sole_consumer(graph, cast.outputs[0])
    if mul is None or mul.op != "Mul":
        return None
    scale_product = graph.producer(mul.inputs[1] if mul.inputs[0] == cast.outputs[0] else mul.inputs[0])
    if scale_product is None or scale_product.op != "Mul" or dq.outputs[1] not in scale_product.inputs:
        return None
    w_scale = scale_product.inputs[1] if scale_product.inputs[0] == dq.outputs[1] else scale_product.inputs[0]
    if not graph.is_constant(w_scale):
        return None
    scales = _channel_vector(graph.constants[w_scale], graph.shape(mul.outputs[0]), _channel_axis(graph, layer))
    return None if scales is None else (dq, layer, cast, mul, scales)


def _channel_axis(graph: Graph, layer: Node) -> int:
    """The output axis of the layer's channels: 1 for a Conv (N, M, ...), the last for a MatMul (..., N)."""
    return 1 if layer.op == "ConvInteger" else len(graph.shape(layer.outputs[0])) - 1


def _channel_vector(value: np.ndarray, out_shape: tuple[int, ...], axis: int) -> np.ndarray | None:
    """`value` as one number per output channel, when it broadcasts over the output along `axis` only."""
    try:
        full = np.broadcast_to(np.asarray(value, np.float64), out_shape)
    except ValueError:
        return None
    vector = np.moveaxis(full, axis, 0).reshape(out_shape[axis], -1)
    return vector[:, 0] if np.all(vector == vector[:, :1]) else None


def _fold(graph: Graph, dq: Node, layer: Node, cast: Node, mul: Node, scales: np.ndarray) -> str:
    w = graph.constants[layer.inputs[1]]
    w_axis = 0 if layer.op == "ConvInteger" else w.ndim - 1  # the weights' output-channel axis
    shape = [-1 if i == w_axis else 1 for i in range(w.ndim)]
    w_zp = optional_input(layer, 3)
    zero = np.asarray(graph.constants[w_zp], np.int64) if w_zp else np.zeros((), np.int64)
    zero = zero.reshape(shape) if zero.size > 1 else zero.reshape(())
    ints = w.astype(np.int64) - zero
    real = (ints * scales.reshape(shape)).astype(np.float32)
    name = graph.add_constant(graph.fresh_name(f"{layer.name}_weight"), real)
    # The storage width, and one bit more when an offset zero point was subtracted (as for QDQ weights).
    bits = 8 * w.dtype.itemsize + int(bool(np.any(zero)))
    graph.quant[name] = (ints, WeightQuant(tuple(float(s) for s in scales), bits))
    attrs = layer.attrs if layer.op == "ConvInteger" else NoAttrs()
    for node in (mul, cast, layer):
        graph.remove_node(node.name)
    graph.add_node(Node(layer.name, FLOAT_LAYER[layer.op], (dq.inputs[0], name), mul.outputs, attrs))
    for node in (graph.producer(mul.inputs[0]), graph.producer(mul.inputs[1]), dq):
        if node is not None and node.name in graph.nodes and not any(graph.consumers(t) for t in node.outputs) \
                and not set(node.outputs) & set(graph.outputs):
            graph.remove_node(node.name)
    return layer.name
