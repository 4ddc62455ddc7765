"""What a quantized build reports: quality against float, and quant.json."""
from __future__ import annotations

import numpy as np

from .. import reference
from ..ir import Graph
from ..npz_io import top1_accuracy
from .arith import MULTIPLIER_BITS
from .model import QuantizedModel


def sqnr_db(reference_values: np.ndarray, approximation: np.ndarray) -> float:
    """10 log10(signal power / error power); inf when they are equal."""
    ref = np.asarray(reference_values, np.float64)
    noise = float(((ref - np.asarray(approximation, np.float64)) ** 2).sum())
    signal = float((ref**2).sum())
    return float("inf") if noise == 0 else 10 * np.log10(max(signal, 1e-30) / noise)


def run_float(graph: Graph, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    batch = graph.tensors[graph.inputs[0]].shape[0]
    total = next(iter(feeds.values())).shape[0]
    chunks = [reference.run_graph(graph, {k: v[i : i + batch] for k, v in feeds.items()})
              for i in range(0, total, batch)]
    return {name: np.concatenate([c[name] for c in chunks]) for name in graph.outputs}


def quality(float_graph: Graph, quantized: QuantizedModel, feeds: dict[str, np.ndarray],
            labels: np.ndarray | None) -> dict:
    """Float vs integer reference on `feeds`: SQNR per output and, with labels, top-1 accuracy of both."""
    float_out = run_float(float_graph, feeds)
    int_out = quantized.run(feeds)
    result = {"samples": int(next(iter(feeds.values())).shape[0]),
              "sqnr_db": {k: round(sqnr_db(float_out[k], int_out[k]), 3) for k in float_out}}
    if labels is not None and len(float_out) == 1:
        (f,), (q,) = float_out.values(), int_out.values()
        result["float_accuracy"] = top1_accuracy(f, labels)
        result["int_accuracy"] = top1_accuracy(q, labels)
        result["argmax_agreement"] = float(np.mean(f.argmax(-1) == q.argmax(-1)))
    return result


def quant_json(quantized: QuantizedModel, measured: dict) -> dict:
    """Per tensor: scale, zero point, bits (and how its range was chosen); per layer: requantization."""
    lowered = quantized.lowered
    tensors = {}
    for name, q in lowered.graph.quant.items():
        entry = q.to_json()
        if name in lowered.ranges:
            entry["range"] = lowered.ranges[name].method
        tensors[name] = entry
    layers = [{
        "name": layer.name, "op": layer.op, "weight_bits": layer.weight_bits,
        "weight_scales": list(layer.weight_scales or ()), "multiplier": list(layer.multiplier),
        "shift": list(layer.shift), "accumulator_bits": layer.acc_bits, "weights": layer.weight_count,
    } for layer in lowered.layers]
    return {
        "numerics": {"rounding": "round half up: floor((v + 2^(s-1)) / 2^s)", "multiplier_bits": MULTIPLIER_BITS,
                     "spec": "docs/numerics.md"},
        "inputs": lowered.graph.inputs, "outputs": lowered.graph.outputs,
        "host_softmax": {k: list(v) for k, v in lowered.host_softmax.items()},
        "host_depth_to_space": {k: list(v) for k, v in lowered.host_depth_to_space.items()},
        "tensors": tensors, "layers": layers, "quality": measured,
    }
