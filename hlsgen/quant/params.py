"""Quantization parameters of tensors and weights (frozen, serialisable to quant.json)."""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from .arith import qrange


@dataclass(frozen=True)
class TensorQuant:
    """real = scale * (q - zero_point), q a `bits`-wide signed or unsigned integer.

    narrow (as in QONNX): the range loses its lowest signed / highest unsigned value.
    """

    scale: float
    zero_point: int
    bits: int
    signed: bool
    narrow: bool = False

    def __post_init__(self):
        if not 2 <= self.bits <= 32:
            raise ValueError(f"bits must be 2..32, got {self.bits}")
        if not (self.scale > 0 and np.isfinite(self.scale)):
            raise ValueError(f"scale must be positive and finite, got {self.scale}")

    @property
    def qmin(self) -> int:
        return qrange(self.bits, self.signed)[0] + int(self.narrow and self.signed)

    @property
    def qmax(self) -> int:
        return qrange(self.bits, self.signed)[1] - int(self.narrow and not self.signed)

    def to_json(self) -> dict:
        return asdict(self)

    @staticmethod
    def symmetric(clip: float, bits: int, signed: bool) -> "TensorQuant":
        """Zero point 0; the largest magnitude level sits at `clip`."""
        levels = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
        return TensorQuant(float(max(clip, 1e-12)) / levels, 0, bits, signed)


@dataclass(frozen=True)
class WeightQuant:
    """Per-output-channel symmetric weights: real[c] = scales[c] * q[c] (zero point 0)."""

    scales: tuple[float, ...]
    bits: int

    def to_json(self) -> dict:
        return {"scales": list(self.scales), "bits": self.bits, "signed": True, "zero_point": 0}


def quantize_weights(w: np.ndarray, bits: int, axis: int = 0) -> tuple[np.ndarray, WeightQuant]:
    """Symmetric per output channel (`axis`), narrow range [-(2^(b-1)-1), 2^(b-1)-1], round half to even."""
    levels = (1 << (bits - 1)) - 1
    moved = np.moveaxis(np.asarray(w, np.float64), axis, 0)
    flat = np.abs(moved.reshape(moved.shape[0], -1)).max(axis=1)
    scales = np.where(flat > 0, flat / levels, 1.0)
    shape = [1] * w.ndim
    shape[axis] = -1
    q = np.clip(np.rint(w / scales.reshape(shape)), -levels, levels).astype(np.int64)
    return q, WeightQuant(tuple(float(s) for s in scales), bits)
