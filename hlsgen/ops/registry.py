"""The op table: for every internal op, its attribute dataclass and its float numpy kernel;
for every supported ONNX op type, the importer that turns an ONNX node into internal nodes.

An op module registers itself with the `kernel` and `onnx_importer` decorators and is listed
explicitly in `hlsgen/ops/__init__.py`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..ir import Node

Kernel = Callable[..., Any]


@dataclass(frozen=True)
class NoAttrs:
    """For ops without attributes."""


@dataclass(frozen=True)
class OpDef:
    name: str
    attrs: type
    kernel: Kernel
    doc: str


class UnsupportedAttribute(Exception):
    """Raised by an importer for a node it recognises but cannot import (the reason is the message)."""


OPS: dict[str, OpDef] = {}
IMPORTERS: dict[str, Callable[..., list[Node]]] = {}


def kernel(name: str, attrs: type = NoAttrs) -> Callable[[Kernel], Kernel]:
    """Register the float kernel of internal op `name`: `fn(attrs, *inputs) -> array | tuple`."""

    def register(fn: Kernel) -> Kernel:
        if name in OPS:
            raise ValueError(f"op {name!r} registered twice")
        OPS[name] = OpDef(name, attrs, fn, (fn.__doc__ or "").strip())
        return fn

    return register


def onnx_importer(*op_types: str):
    """Register `fn(node: onnx.NodeProto, ctx: ImportContext) -> list[Node]` for ONNX op types."""

    def register(fn):
        for t in op_types:
            if t in IMPORTERS:
                raise ValueError(f"ONNX op {t!r} has two importers")
            IMPORTERS[t] = fn
        return fn

    return register


def evaluate(node: Node, inputs: list[np.ndarray | None]) -> tuple[np.ndarray, ...]:
    """Run one node's float kernel; always returns a tuple of outputs."""
    opdef = OPS[node.op]
    result = opdef.kernel(node.attrs, *inputs)
    return result if isinstance(result, tuple) else (result,)
