"""Pieces shared by several ops: fused activations, sliding windows, padding arithmetic."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .registry import UnsupportedAttribute


@dataclass(frozen=True)
class Activation:
    """An elementwise activation fused into a Conv or Dense node.

    kind: "relu", "clip" (min `lo`, max `hi`; Relu6 is clip 0..6) or "leaky_relu" (slope `alpha`).
    """

    kind: str
    alpha: float = 0.0
    lo: float = 0.0
    hi: float = 0.0

    def __post_init__(self):
        if self.kind not in ("relu", "clip", "leaky_relu"):
            raise ValueError(f"unknown fused activation {self.kind!r}")

    def apply(self, x: np.ndarray) -> np.ndarray:
        if self.kind == "relu":
            return np.maximum(x, 0).astype(x.dtype)
        if self.kind == "clip":
            return np.clip(x, self.lo, self.hi).astype(x.dtype)
        return np.where(x >= 0, x, x * np.asarray(self.alpha, x.dtype)).astype(x.dtype)

    def __str__(self) -> str:
        if self.kind == "clip":
            return "relu6" if (self.lo, self.hi) == (0.0, 6.0) else f"clip({self.lo:g},{self.hi:g})"
        return "relu" if self.kind == "relu" else f"leaky_relu({self.alpha:g})"


def apply_activation(activation: Activation | None, x: np.ndarray) -> np.ndarray:
    return x if activation is None else activation.apply(x)


def resolve_auto_pad(auto_pad: str, in_shape, kernel, strides, dilations, pads) -> tuple[int, ...]:
    """Explicit pads (all begins, then all ends) for ONNX `auto_pad`, once the window's sizes are checked (ONNX's
    checker lets a zero stride or an unknown auto_pad through; every later step would divide by them)."""
    n = len(kernel)
    for name, values, least in (("kernel_shape", kernel, 1), ("strides", strides, 1), ("dilations", dilations, 1),
                                ("pads", pads or (0,) * (2 * n), 0)):  # no pads: none
        if len(values) != (2 * n if name == "pads" else n) or min(values, default=least) < least:
            raise UnsupportedAttribute(f"{name} {list(values)} is not {'2 x ' if name == 'pads' else ''}{n} "
                                       f"{'non-negative' if least == 0 else 'positive'} sizes")
    if auto_pad in ("", "NOTSET"):
        return tuple(pads) if pads else (0,) * (2 * n)
    if auto_pad == "VALID":
        return (0,) * (2 * n)
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        raise UnsupportedAttribute(f"auto_pad {auto_pad!r} is none of NOTSET, SAME_UPPER, SAME_LOWER, VALID")
    begins, ends = [], []
    for size, k, s, d in zip(in_shape, kernel, strides, dilations):
        out = math.ceil(size / s)
        total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
        small, large = total // 2, total - total // 2
        begins.append(small if auto_pad == "SAME_UPPER" else large)
        ends.append(large if auto_pad == "SAME_UPPER" else small)
    return tuple(begins + ends)


def windows(x: np.ndarray, kernel, strides, dilations) -> np.ndarray:
    """Sliding windows over the trailing len(kernel) axes of an already padded `x`.

    Returns shape x.shape[:-n] + out_spatial + kernel.
    """
    n = len(kernel)
    span = tuple((k - 1) * d + 1 for k, d in zip(kernel, dilations))
    view = np.lib.stride_tricks.sliding_window_view(x, span, axis=tuple(range(x.ndim - n, x.ndim)))
    lead = (slice(None),) * (x.ndim - n)
    view = view[lead + tuple(slice(None, None, s) for s in strides) + tuple(slice(None, None, d) for d in dilations)]
    return view


def pad_spatial(x: np.ndarray, pads, value: float) -> np.ndarray:
    """Pad the trailing spatial axes; `pads` holds all begins then all ends."""
    n = len(pads) // 2
    widths = [(0, 0)] * (x.ndim - n) + [(pads[i], pads[i + n]) for i in range(n)]
    return np.pad(x, widths, mode="constant", constant_values=value)
