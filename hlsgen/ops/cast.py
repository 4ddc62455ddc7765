"""Cast: a change of element type. A Cast to the type a tensor already has is removed by the optimizer
(`remove_identities`); the float reference runs any other numeric cast as numpy does (float to integer
truncates toward zero, as ONNX specifies); the quantizer refuses one, since it changes values or types
inside the network that hlsgen quantizes from float32."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from onnx import TensorProto, helper

from ..ir import Node
from .registry import UnsupportedAttribute, kernel, onnx_importer

# numpy's names of the element types hlsgen holds; ONNX's other types have no meaning in a CNN datapath.
NUMERIC = ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


@dataclass(frozen=True)
class CastAttrs:
    to: str  # one of NUMERIC


@kernel("Cast", CastAttrs)
def cast(a: CastAttrs, x: np.ndarray) -> np.ndarray:
    """x converted to `to`."""
    return x.astype(a.to)


@onnx_importer("Cast")
def import_cast(node, ctx) -> list[Node]:
    to = ctx.attrs(node)["to"]
    dtype = np.dtype(helper.tensor_dtype_to_np_dtype(to)).name
    if dtype not in NUMERIC:
        raise UnsupportedAttribute(f"Cast to {TensorProto.DataType.Name(to).lower()} is not supported "
                                   f"(only numeric types: {', '.join(NUMERIC)})")
    return [Node(ctx.node_name(node), "Cast", (node.input[0],), (node.output[0],), CastAttrs(dtype))]
