"""The IR's quantization annotations (Graph.quant): a tensor's integer grid, a quantized weight's
per-channel scales. Frozen and serialisable (quant.json, the build folder's graphs)."""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np


def qrange(bits: int, signed: bool) -> tuple[int, int]:
    """The integer range of a `bits`-wide value: [-2^(b-1), 2^(b-1)-1] or [0, 2^b - 1]."""
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)


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
