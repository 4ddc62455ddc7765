"""The order in which a tensor's integers travel on a stream: row-major (N, C, H, W for a feature map),
the order the activation memory holds them in (docs/hardware.md: [channel][row][col]), so a layer's
input stream fills its [channel][pixel] buffer in sequence and a Reshape changes nothing but names.
The batch axis is 1: the design runs one inference per call."""
from __future__ import annotations

import numpy as np

AXES = {3: "N, C, L", 4: "N, C, H, W", 5: "N, C, D, H, W"}


def order_text(shape: tuple[int, ...]) -> str:
    return f"row-major order ({AXES[len(shape)]})" if len(shape) in AXES else "row-major order"


def row_major_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return tuple(reversed(strides))


def to_stream(samples: np.ndarray) -> np.ndarray:
    """Samples stacked on axis 0 (each one the tensor with batch 1) -> [N, values] in stream order."""
    samples = np.asarray(samples)
    return samples.reshape(samples.shape[0], -1)
