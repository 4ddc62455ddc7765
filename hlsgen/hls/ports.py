"""A top function's stream port: one graph input or output, its C type, shape, order and quantization
(both HLS designs, and their READMEs, describe ports the same way)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import Graph
from .cnames import tensor_type
from .layout import order_text


@dataclass(frozen=True)
class Port:
    name: str  # the top function's argument
    tensor: str
    t: str  # its element typedef
    ctype: str
    direction: str  # "input" or "output"
    shape: list[int]
    count: int
    order_text: str
    scale: float
    zero_point: int


def make_port(graph: Graph, name: str, tensor: str, t: str, direction: str) -> Port:
    """The port `name` (typedef `t`) that streams graph tensor `tensor`."""
    shape, q = graph.shape(tensor), graph.quant[tensor]
    return Port(name, tensor, t, tensor_type(q), direction, list(shape), int(np.prod(shape)), order_text(shape),
                float(f"{q.scale:.9g}"), q.zero_point)
