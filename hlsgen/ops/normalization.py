"""Per-channel normalization: inference BatchNormalization and the internal ChannelAffine."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import Node
from .registry import NoAttrs, UnsupportedAttribute, kernel, onnx_importer


@dataclass(frozen=True)
class BatchNormAttrs:
    epsilon: float = 1e-5


def _per_channel(v: np.ndarray, x: np.ndarray) -> np.ndarray:
    """A [C] vector shaped to broadcast along axis 1 of `x`, in x's dtype."""
    return np.asarray(v, x.dtype).reshape((1, -1) + (1,) * (x.ndim - 2))


@kernel("BatchNormalization", BatchNormAttrs)
def batch_norm(
    a: BatchNormAttrs, x: np.ndarray, scale: np.ndarray, bias: np.ndarray, mean: np.ndarray, var: np.ndarray
) -> np.ndarray:
    """y = (x - mean) / sqrt(var + epsilon) * scale + bias, per channel (axis 1); running statistics."""
    mean, var, scale, bias = (_per_channel(v, x) for v in (mean, var, scale, bias))
    y = (x - mean) / np.sqrt(var + np.asarray(a.epsilon, x.dtype)) * scale + bias
    return y.astype(x.dtype)


@kernel("ChannelAffine")
def channel_affine(_: NoAttrs, x: np.ndarray, scale: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """y = x * scale[c] + shift[c], per channel (axis 1)."""
    return (x * _per_channel(scale, x) + _per_channel(shift, x)).astype(x.dtype)


@onnx_importer("BatchNormalization")
def import_batch_norm(node, ctx) -> list[Node]:
    # Imported here: the frontend imports every op module while it is itself being imported.

    attrs = ctx.attrs(node)
    # The running-mean/variance outputs only exist in training mode.
    if attrs.get("training_mode", 0) or len([o for o in node.output if o]) > 1:
        raise UnsupportedAttribute("training-mode BatchNormalization; export the model in eval mode")
    if ctx.opset < 9 and attrs.get("spatial", 1) == 0:
        raise UnsupportedAttribute("spatial=0 (per-activation statistics) is not supported")
    bn_attrs = BatchNormAttrs(float(attrs.get("epsilon", 1e-5)))
    return [Node(ctx.node_name(node), "BatchNormalization", tuple(node.input[:5]), (node.output[0],), bn_attrs)]
