"""Which nodes the accelerator takes: what hlsgen imports, quantizes and maps onto the target's overlay.

A node starts on the accelerator when hlsgen imports its op type; then every segment of the partition goes
through the build's own import, quantization and mapping on a few calibration samples, and each node those
steps refuse by name moves to the host, until none is refused. A segment without a multiply-accumulate
(a lone reshape or activation between host ops) moves to the host whole: it would only add a round trip."""
from __future__ import annotations

import re
from typing import Callable

import numpy as np
import onnx

from ..errors import HlsgenError, MappingError, UnsupportedModelError, UnsupportedOpsError
from ..frontend.onnx_import import ACCEPTED_CUSTOM, DEFAULT_DOMAINS, import_model
from ..hw import Target, map_model
from ..hw.banding import OUTPUT_ON_CHIP, SMALLEST_BANDS
from ..hw.preflight import preflight
from ..ops.registry import IMPORTERS
from ..passes import optimize
from ..quant import BitConfig, quantize
from ..quant.prequant import absorb_quantization
from ..rtl.program import compile_program
from .onnx_graph import TensorType
from .plan import ACCELERATOR, Partition, plan, stage_model

PROBE_SAMPLES = 8
NAMED = re.compile(r"layer '([^']+)' \(")
NEEDING = re.compile(r"layer '([^']+)' needs")  # the layers a model no plan fits needs the most memory for
NO_UNIT = "no hardware unit implements this op"  # hlsgen.hw.mapping's refusal of an op the overlay lacks

Values = Callable[[list[str]], dict[str, np.ndarray]]  # float values of tensors on the calibration samples


def importable(node: onnx.NodeProto) -> bool:
    if node.domain in DEFAULT_DOMAINS:
        return node.op_type in IMPORTERS
    return (node.domain, node.op_type) in ACCEPTED_CUSTOM


def colour(model: onnx.ModelProto, types: dict[str, TensorType], values: Values, target: Target,
           refusals: dict[str, str]) -> Partition:
    """The partition with the most nodes on the accelerator that its build steps accept; `refusals` gets why
    each refused node went to the host."""
    on_accelerator = {n.name for n in model.graph.node if importable(n)}
    for n in model.graph.node:
        if n.name not in on_accelerator:
            refusals[n.name] = "hlsgen has no accelerator implementation of this op"
    for _ in range(len(model.graph.node) + 1):
        partition = plan(model, on_accelerator, types)
        moved: set[str] = set()
        for segment in partition.segments:
            if segment.macs == 0:
                moved.update(segment.nodes)
                refusals.update({n: "no multiply-accumulate around it on the accelerator" for n in segment.nodes})
                continue
            sub = stage_model(model, segment, types, "probe")
            feeds = {k: v[:PROBE_SAMPLES] for k, v in values(list(segment.inputs)).items()}
            macs_free = {n for n in segment.nodes if partition.node_macs.get(n, 0) == 0}
            joins = {n.name for n in sub.graph.node if n.name in macs_free and set(n.input) & set(segment.inputs)} \
                if len(segment.inputs) > 1 else set()
            for name, why in refused(sub, feeds, target, macs_free, joins).items():
                moved.add(name)
                refusals[name] = why
        if not moved:
            return partition
        on_accelerator -= moved
    raise AssertionError("the colouring did not settle")  # every round moves a node


def refused(sub: onnx.ModelProto, feeds: dict[str, np.ndarray], target: Target,
            macs_free: set[str] = frozenset(), joins: set[str] = frozenset()) -> dict[str, str]:
    """The nodes of segment model `sub` the build's import, quantization or mapping refuses, with why;
    empty when it builds (or when an error names no node: the build itself then reports it). A node of
    `macs_free` (a layout move, an activation) that the RTL lacks is refused too: on the host it costs
    little, and the segment keeps its RTL (a layer with MACs stays, its segment without RTL). When the
    segment's maps do not fit, the `joins` (MAC-free nodes reading its several inputs, as a Concat of two host
    tensors) go to the host: several inputs stream in whole, one input can stay in external memory in bands; so
    does a layer writing a model output that its bands cannot write on chip (a copy, bands of channels), and a
    layer whose maps no plan fits in the activation memory (one that does not run in bands, or whose output is
    a model output larger than the memory)."""
    names = {n.name for n in sub.graph.node}
    try:
        graph = import_model(sub, name=sub.graph.name)
        absorb_quantization(graph)
        optimize(graph)
        preflight(graph, target)
        quantized = quantize(graph, feeds, BitConfig(8, 8))
        mapping = map_model(quantized.graph, target, program="rom")
    except HlsgenError as exc:
        found = {name: why for name, why in unimplemented(exc).items() if name in names}
        if not found and isinstance(exc, MappingError) and OUTPUT_ON_CHIP in str(exc):
            return {name: f"it writes a model output too big to stay on chip with its operands: {exc}"
                    for name in NAMED.findall(str(exc)) if name in names}
        if not found and isinstance(exc, MappingError) and joins:
            return {name: f"it joins the segment's inputs, whose maps do not fit on chip together: {exc}"
                    for name in joins}
        if not found and isinstance(exc, MappingError) and SMALLEST_BANDS in str(exc):
            return {name: f"its maps need more of the activation memory than the target has: {exc}"
                    for name in NEEDING.findall(str(exc)) if name in names}
        return found
    try:
        compile_program(mapping, quantized.graph)
    except MappingError as exc:
        return {name: str(exc) for name in NAMED.findall(str(exc)) if name in macs_free}
    return {}


def unimplemented(error: HlsgenError) -> dict[str, str]:
    """The nodes an error says the accelerator has no implementation of (the host can run them), with why;
    empty for every other error (a layer too big for the buffers, a width the array cannot hold, bad data)."""
    if isinstance(error, UnsupportedOpsError):
        return {p.node: p.why for p in error.problems}
    text = str(error)
    if isinstance(error, UnsupportedModelError) or NO_UNIT in text:
        return {name: text for name in NAMED.findall(text)}
    return {}


__all__ = ["ACCELERATOR", "colour", "importable", "refused"]
