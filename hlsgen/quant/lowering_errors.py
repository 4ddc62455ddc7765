"""What the lowering cannot take, sorted into the user's error categories: a tensor without a range
(data, exit 10), a width the hardware cannot hold (exit 3), a form of an ONNX op hlsgen does not implement
(exit 8, named as the model's file spells the node and op)."""
from __future__ import annotations

from ..errors import DataError, MappingError, UnsupportedOp, UnsupportedOpsError
from ..ir import Graph
from .arith import MULTIPLIER_BITS, quantize_multiplier


class NotLowerable(Exception):
    """A node the integer model cannot take: a form of an ONNX op hlsgen does not implement."""


class TooWide(NotLowerable):
    """A width the hardware cannot hold."""


class NoRange(NotLowerable):
    """A tensor with no quantization range: neither the model nor the calibration data gives one."""


def user_error(graph: Graph, problems: list[tuple[str, NotLowerable]]) -> Exception:
    """One error for every problem, in the category of the first kind found: data, width, then ONNX op."""
    for kind, error in ((NoRange, DataError), (TooWide, MappingError)):
        found = [(name, exc) for name, exc in problems if isinstance(exc, kind)]
        if found:
            return error("; ".join(f"{_described(graph, name)}: {exc}" for name, exc in found))
    unsupported = []
    for name, exc in problems:
        onnx_name, op_type, opset = graph.origin(name) or (name, "a node hlsgen made", graph_opset(graph))
        unsupported.append(UnsupportedOp(onnx_name, op_type, opset, str(exc)))
    error = UnsupportedOpsError(unsupported)
    error.args = (f"{len(unsupported)} node(s) cannot be quantized: " + "; ".join(map(str, unsupported)),)
    return error


def _described(graph: Graph, name: str) -> str:
    return f"input {name!r}" if name in graph.inputs else graph.describe(name)


def graph_opset(graph: Graph) -> int:
    """The model's opset, as its imported nodes recorded it (0 for a graph built without an ONNX file)."""
    return next((opset for _, _, opset in graph.origins.values()), 0)


def requant_multiplier(real: float) -> tuple[int, int]:
    """quantize_multiplier, with a ratio the requantizer cannot hold reported as a width problem."""
    try:
        return quantize_multiplier(real)
    except ValueError:
        raise TooWide(f"a requantization scale of {real:.3g} needs a multiplier wider than {MULTIPLIER_BITS} bits "
                     "(is a tensor's range degenerate?)") from None
