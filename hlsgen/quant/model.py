"""A quantized model: the integer graph plus the host-side steps around it (input quantization,
output dequantization, and a trailing Softmax)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import DataError
from ..ir import Graph
from ..npz_io import match_inputs
from ..ops.shape import BlockAttrs, depth_to_space
from ..reference import run_graph
from . import int_ops  # noqa: F401  (registers the integer kernels)
from .arith import dequantize, quantize_linear, quantize_to_grid
from .calibrate import collect_stats
from .lower import BitConfig, Lowered, lower


@dataclass
class QuantizedModel:
    lowered: Lowered
    float_graph: Graph  # the optimized float graph it was lowered from

    @property
    def graph(self) -> Graph:
        return self.lowered.graph

    def quantize_inputs(self, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Host step 1: real inputs -> integers on each input's grid. An input with preprocessing absorbed
        (`Graph.input_steps`: a layout Transpose, a Cast of uint8/int8, arithmetic up to the model's
        QuantizeLinear) takes the file's arrays: the steps run first, and the integers follow ONNX's
        QuantizeLinear exactly (division in float32, round half to even, saturation)."""
        feeds = match_inputs(self.float_graph, arrays)
        out = {}
        for name, value in feeds.items():
            nan = int(np.isnan(value).sum()) if np.issubdtype(value.dtype, np.floating) else 0
            if nan:  # no integer stands for NaN (an infinity saturates like any value past the range)
                raise DataError(f"inputs: array {name!r} holds {nan} NaN value(s), which no integer input can "
                                "represent; clean the inputs first")
            q = self.graph.quant[name]
            if name in self.float_graph.input_steps:
                out[name] = quantize_linear(value, q.scale, q.zero_point, q.bits, q.signed)
            else:
                out[name] = quantize_to_grid(value, q.scale, q.zero_point, q.bits, q.signed)
        return out

    def range_warnings(self, arrays: dict[str, np.ndarray]) -> list[str]:
        """One line per input whose values fall outside its calibrated range (they saturate)."""
        lines = []
        for name, value in match_inputs(self.float_graph, arrays).items():
            if name in self.float_graph.input_steps:  # the model's own type or quantizer saturates it
                continue
            q = self.graph.quant[name]
            lo, hi = (q.qmin - q.zero_point - 0.5) * q.scale, (q.qmax - q.zero_point + 0.5) * q.scale
            outside = int(((value < lo) | (value > hi)).sum())
            if outside:
                bound = max(abs(lo), abs(hi))
                factor = float(np.abs(value).max()) / bound
                lines.append(f"{outside} value(s) of input {name!r} lie outside its calibrated range [{lo:.4g}, "
                             f"{hi:.4g}] (up to {factor:.1f}x) and saturate; calibrate on data like these (--calib)")
        return lines

    def run_int(self, int_feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The integer reference on N stacked samples: integers in, integers out."""
        batch = self.graph.tensors[self.graph.inputs[0]].shape[0]
        total = next(iter(int_feeds.values())).shape[0]
        chunks = [run_graph(self.graph, {k: v[i : i + batch] for k, v in int_feeds.items()})
                  for i in range(0, total, batch)]
        return {name: np.concatenate([c[name] for c in chunks]) for name in self.graph.outputs}

    def dequantize_outputs(self, int_outputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Host step 2: integers -> reals, then a trailing DepthToSpace or Softmax; keyed by the float model's
        output names."""
        result = {}
        for int_name, float_name in zip(self.graph.outputs, self.float_graph.outputs):
            q = self.graph.quant[int_name]
            y = dequantize(int_outputs[int_name], q.scale, q.zero_point)
            if int_name in self.lowered.host_depth_to_space:
                y = depth_to_space(BlockAttrs(*self.lowered.host_depth_to_space[int_name]), y)
            if int_name in self.lowered.host_softmax:
                y = _softmax(y, self.lowered.host_softmax[int_name])
            result[float_name] = y
        return result

    def run(self, arrays: dict[str, np.ndarray] | np.ndarray) -> dict[str, np.ndarray]:
        """Real inputs in, real outputs out, through the integer reference."""
        if not isinstance(arrays, dict):
            arrays = {self.float_graph.inputs[0]: arrays}
        return self.dequantize_outputs(self.run_int(self.quantize_inputs(arrays)))


def quantize(float_graph: Graph, calibration: dict[str, np.ndarray], bits: BitConfig | None = None,
             stats=None) -> QuantizedModel:
    """Calibrate `float_graph` (optimized) on `calibration` samples and lower it to integers."""
    if stats is None:
        stats = collect_stats(float_graph, match_inputs(float_graph, calibration, "calibration data"))
    return QuantizedModel(lower(float_graph, stats, bits or BitConfig()), float_graph)


def _softmax(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    shifted = x - x.max(axis=axes, keepdims=True)
    e = np.exp(shifted)
    return (e / e.sum(axis=axes, keepdims=True)).astype(np.float32)
