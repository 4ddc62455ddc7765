"""Fail fast: map a stand-in quantization of the model before any calibration runs.

Whether a layer fits the target (buffers, line buffer, widths, device) depends on shapes and bit widths,
not on calibrated ranges: lowering the float graph with unit ranges and mapping it answers in about a
second what a full calibration of a model too large for the target would answer only after minutes.
The real mapping, after quantization, checks again with the real ranges.
"""
from __future__ import annotations

import numpy as np

from ..ir import Graph
from ..quant.calibrate import TensorStats
from ..quant.lower import BitConfig, lower
from .mapping import map_model
from .target import Target

_UNIT = TensorStats(-1.0, 1.0, np.array([-1.0, 1.0], np.float32))


def preflight(graph: Graph, target: Target) -> None:
    """Raise MappingError (or the lowering's own errors) for a model that cannot be built on `target`."""
    stats = {name: _UNIT for name in graph.tensors if name not in graph.constants}
    map_model(lower(graph, stats, BitConfig(8, 8)).graph, target)
