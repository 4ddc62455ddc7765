"""Quantization parameters of tensors and weights (the IR's annotations, hlsgen.ir.quant), and the
symmetric per-channel weight quantizer."""
from __future__ import annotations

import numpy as np

from ..ir.quant import TensorQuant, WeightQuant

__all__ = ["TensorQuant", "WeightQuant", "quantize_weights"]


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
