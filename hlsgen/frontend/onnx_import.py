"""ONNX -> IR: validate the file, pin the batch dimension, list unsupported ops, import each node.

Every failure the user can cause raises an HlsgenError subclass with a one-line message.
"""
from __future__ import annotations

import math
import os
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from google.protobuf.message import DecodeError
from onnx import helper, numpy_helper

from .. import ops  # noqa: F401  (registers every op and importer)
from ..errors import ModelFileError, UnsupportedModelError, UnsupportedOp, UnsupportedOpsError
from ..ir import Graph, TensorInfo
from ..ops.registry import IMPORTERS, UnsupportedAttribute
from ..paths import require_file
from ..reference.float_executor import annotate_shapes
from .fold import fold_with_notices
from .inputs import absorb_input_steps

# The contract is opsets 7..21; 6 (old PyTorch exports) and 22..25 (no semantic change for supported ops) import too.
MIN_OPSET, MAX_OPSET = 6, 25
DEFAULT_DOMAINS = ("", "ai.onnx")
MAX_INPUT_ELEMENTS = 1 << 26  # per input, batch included (256 MB of float32): a 3x4096x4096 image fits
# The custom ops hlsgen imports: QONNX's quantizers, in the domains QONNX, FINN and older Brevitas exports use.
QONNX_DOMAIN = "qonnx.custom_op.general"
QONNX_OPS = ("Quant", "BipolarQuant", "Trunc")
ACCEPTED_CUSTOM = {
    (domain, op_type)
    for domain in (QONNX_DOMAIN, "finn.custom_op.general", "onnx.brevitas")
    for op_type in QONNX_OPS
}


@dataclass
class ImportContext:
    """What an importer may ask about the model being imported."""

    graph: Graph
    opset: int
    notices: list[str] = field(default_factory=list)

    def attrs(self, node: onnx.NodeProto) -> dict[str, Any]:
        out = {}
        for a in node.attribute:
            value = helper.get_attribute_value(a)
            if isinstance(value, bytes):
                value = value.decode()
            elif a.type == onnx.AttributeProto.TENSOR:
                value = numpy_helper.to_array(value)
            elif isinstance(value, list):
                value = tuple(v.decode() if isinstance(v, bytes) else v for v in value)
            out[a.name] = value
        return out

    def constant(self, name: str) -> np.ndarray | None:
        """The value of a constant input, or None when the tensor is computed at run time."""
        return self.graph.constants.get(name) if name else None

    def require_constant(self, node: onnx.NodeProto, index: int, what: str) -> np.ndarray | None:
        """The constant at input `index` (None when the optional input is absent); raise if it is computed."""
        if index >= len(node.input) or not node.input[index]:
            return None
        value = self.constant(node.input[index])
        if value is None:
            raise UnsupportedAttribute(f"{what} (input {index}) must be a constant, not computed at run time")
        return value

    def shape(self, name: str) -> tuple[int, ...]:
        return self.graph.tensors[name].shape

    def node_name(self, node: onnx.NodeProto, suffix: str = "") -> str:
        base = (node.name or f"{node.op_type}_{node.output[0]}") + suffix
        return self.graph.fresh_name(base)


def load_onnx_proto(path: str | os.PathLike) -> onnx.ModelProto:
    p = require_file(path, "file (an .onnx model)")
    try:
        model = onnx.load_model(str(p))
    except onnx.checker.ValidationError as exc:  # external data that is missing or outside the model's folder
        raise ModelFileError(f"{p}: {first_line(exc)}; keep the model's external data files beside it") from None
    except (DecodeError, ValueError, RuntimeError, OSError) as exc:
        raise ModelFileError(f"{p}: not a readable ONNX model ({type(exc).__name__}); is the file truncated?") from None
    if not model.graph.node and not model.graph.output:
        raise ModelFileError(f"{p}: not an ONNX model (no graph found)")
    _check_text(model, p)
    if not model.opset_import:  # ONNX requires one; a file cut right after its graph parses without it
        raise ModelFileError(f"{p}: the model imports no opset at all, which no exporter writes; is the file "
                             "truncated?")
    _default_opset(model)  # an opset outside the supported range is reported before ONNX's own checks
    try:
        with _qonnx_ops_in_own_domain(model):
            onnx.checker.check_model(model, full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError, ValueError) as exc:  # ValueError: an
        # element type ONNX does not know
        raise ModelFileError(f"{p}: ONNX's checker rejects the model: {first_line(exc)}; "
                             "fix the exporter or re-export the model") from None
    return model


def _check_text(model: onnx.ModelProto, p: Path) -> None:
    """Every name, op type, domain and string attribute is UTF-8 text. Protobuf hands a string field that is
    not as bytes (a flipped bit in a name does it), which nothing downstream expects."""
    g = model.graph
    values = [*g.input, *g.output, *g.value_info]
    texts = [g.name, *(o.domain for o in model.opset_import), *(v.name for v in values),
             *(t.name for t in g.initializer)]
    for node in g.node:
        texts += [node.name, node.op_type, node.domain, *node.input, *node.output]
        texts += [a.name for a in node.attribute] + [a.s for a in node.attribute] + [s for a in node.attribute
                                                                                    for s in a.strings]
    bad = next((t for t in texts if isinstance(t, bytes) and not _is_utf8(t)), None)
    if bad is not None:
        raise ModelFileError(f"{p}: the graph holds a name or string that is not UTF-8 text ({bad[:40]!r}); "
                             "is the file corrupt?")


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _default_domain_qonnx(model: onnx.ModelProto) -> list[onnx.NodeProto]:
    """QONNX's Quant, BipolarQuant and Trunc written in the default domain, as FINN's and Brevitas' exports do."""
    return [n for n in model.graph.node if n.domain in DEFAULT_DOMAINS and n.op_type in QONNX_OPS]


@contextmanager
def _qonnx_ops_in_own_domain(model: onnx.ModelProto):
    """For ONNX's checker only (it rejects an unknown default-domain op): those nodes sit in the QONNX domain
    while the block runs; the model is given back as it came."""
    nodes = _default_domain_qonnx(model)
    added = bool(nodes) and all(o.domain != QONNX_DOMAIN for o in model.opset_import)
    if added:
        model.opset_import.append(helper.make_opsetid(QONNX_DOMAIN, 1))
    saved = [n.domain if n.HasField("domain") else None for n in nodes]
    for node in nodes:
        node.domain = QONNX_DOMAIN
    try:
        yield
    finally:
        for node, domain in zip(nodes, saved):
            if domain is None:
                node.ClearField("domain")
            else:
                node.domain = domain
        if added:
            model.opset_import.pop()


def first_line(exc: Exception) -> str:
    """An ONNX error message without its tags, on one line."""
    text = " ".join(str(exc).split())
    for tag in ("[ShapeInferenceError] ", "[TypeInferenceError] ", "Inference error(s): "):
        text = text.replace(tag, "")
    return text.rstrip(". ")


def read_onnx(path: str | os.PathLike, input_shapes: Mapping[str, tuple[int, ...]] | None = None) -> Graph:
    """Read an ONNX file into the IR (unoptimized), for the CLI's commands: inputs with an empty dimension
    are refused here (the passes, the calibration and the hardware all divide by the batch and the sizes),
    while `import_model` still takes them for ONNX's empty-tensor conformance cases. `input_shapes` fixes
    dynamic input dims (--input-shape)."""
    graph = import_model(load_onnx_proto(path), name=Path(path).stem, input_shapes=input_shapes)
    empty = {name: graph.shape(name) for name in graph.inputs if 0 in graph.shape(name)}
    if empty:
        raise UnsupportedModelError(f"input(s) with an empty dimension {empty}: no sample fits them; re-export "
                                    "the model with a batch of 1 (or a symbolic one) and its real sizes")
    return graph


def import_model(model: onnx.ModelProto, name: str | None = None,
                 input_shapes: Mapping[str, tuple[int, ...]] | None = None) -> Graph:
    opset = _default_opset(model)
    graph = Graph(name=_identifier(name or model.graph.name or "model"))
    ctx = ImportContext(graph, opset)
    model, fold_notices = fold_with_notices(model, input_shapes)  # exporters' shape code, for the fixed shape
    problems = _unsupported_ops(model, opset)
    if problems:
        raise UnsupportedOpsError(problems)
    moved = _default_domain_qonnx(model)
    if moved:
        ops_named = ", ".join(sorted({n.op_type for n in moved}))
        ctx.notices.append(f"{len(moved)} QONNX node(s) ({ops_named}) in the default ONNX domain, as FINN and "
                           f"Brevitas export them, read as {QONNX_DOMAIN}")
    ctx.notices += fold_notices
    _import_constants(model, graph)
    _import_inputs(model, ctx)
    unknown: set[str] = set()  # outputs of nodes that could not be imported
    for node in model.graph.node:
        if unknown.intersection(node.input):  # the node that computes its input is already listed
            unknown.update(node.output)
            continue
        try:
            new_nodes = IMPORTERS[node.op_type](node, ctx)
        except UnsupportedAttribute as exc:
            problems.append(UnsupportedOp(node.name or node.output[0], node.op_type, opset, str(exc)))
            unknown.update(node.output)
            continue
        for new in new_nodes:
            graph.add_node(new)
            graph.origins[new.name] = (node.name or node.output[0], node.op_type, opset)
        try:
            annotate_shapes(graph, new_nodes)
        except (ValueError, IndexError) as exc:  # e.g. weights whose channels do not match the input's
            shapes = ", ".join(f"{t} {ctx.shape(t) if t in graph.tensors else graph.constants[t].shape}"
                               for t in node.input if t)
            raise ModelFileError(f"node {node.name or node.output[0]!r} ({node.op_type}): its inputs do not fit "
                                 f"together ({shapes}): {first_line(exc)}") from None
    if problems:
        raise UnsupportedOpsError(problems)
    graph.outputs = [o.name for o in model.graph.output]
    if not graph.outputs:
        raise ModelFileError("the model's graph declares no outputs; re-export it with its outputs")
    ctx.notices += absorb_input_steps(graph)  # an exporter's input preprocessing becomes the input's quantization
    graph.notices = ctx.notices
    graph.prune_tensors()
    return graph


def _identifier(name: str) -> str:
    cleaned = "".join(c if c.isalnum() else "_" for c in name)
    return cleaned if cleaned and not cleaned[0].isdigit() else f"m_{cleaned}"


def _default_opset(model: onnx.ModelProto) -> int:
    versions = [o.version for o in model.opset_import if o.domain in DEFAULT_DOMAINS]
    if not versions:
        raise UnsupportedModelError("the model imports no default-domain opset; re-export it with opset 7 to 21")
    opset = versions[0]
    if not MIN_OPSET <= opset <= MAX_OPSET:
        raise UnsupportedModelError(
            f"opset {opset} is outside the supported range {MIN_OPSET}..{MAX_OPSET}; "
            "convert it with onnx.version_converter.convert_version(model, 17)"
        )
    return opset


def _unsupported_ops(model: onnx.ModelProto, opset: int) -> list[UnsupportedOp]:
    problems = []
    for node in model.graph.node:
        name = node.name or node.output[0]
        if node.domain not in DEFAULT_DOMAINS:
            if (node.domain, node.op_type) not in ACCEPTED_CUSTOM:
                problems.append(UnsupportedOp(name, f"{node.domain}.{node.op_type}", opset, "custom domain"))
        elif node.op_type not in IMPORTERS:
            problems.append(UnsupportedOp(name, node.op_type, opset, "op not supported by hlsgen"))
    return problems


def _import_constants(model: onnx.ModelProto, graph: Graph) -> None:
    for init in model.graph.initializer:
        try:
            value = numpy_helper.to_array(init)
        except ValueError as exc:  # its data does not fill the dims it declares (ONNX's checker lets it pass)
            raise ModelFileError(f"initializer {init.name!r} (dims {list(init.dims)}) does not hold the data its "
                                 f"dims declare: {first_line(exc)}; re-export the model") from None
        graph.add_constant(init.name, value)


def _check_input_dims(name: str, dims: list[int]) -> None:
    """No negative dims, and few enough elements that the shape annotation (which runs every layer on zeros)
    and the calibration can hold them: a huge dim is a broken file, not a model to allocate terabytes for.
    (An empty dim imports: the float reference runs ONNX's empty-tensor cases.)"""
    if any(d < 0 for d in dims):
        raise ModelFileError(f"input {name!r} has a negative dimension ({dims}); re-export the model")
    if math.prod(dims) > MAX_INPUT_ELEMENTS:
        raise UnsupportedModelError(f"input {name!r} of shape {dims} holds {math.prod(dims):,} elements, more than "
                                    f"hlsgen compiles ({MAX_INPUT_ELEMENTS:,}); is the shape right?")


def _import_inputs(model: onnx.ModelProto, ctx: ImportContext) -> None:
    graph = ctx.graph
    for value in model.graph.input:
        if value.name in graph.constants:
            continue  # IR < 4 lists initializers among the inputs
        tensor_type = value.type.tensor_type
        if not value.type.HasField("tensor_type") or not tensor_type.HasField("shape"):
            raise UnsupportedModelError(f"input {value.name!r} has no static tensor shape; export with fixed shapes")
        dims = []
        for axis, dim in enumerate(tensor_type.shape.dim):
            if dim.HasField("dim_value"):
                dims.append(dim.dim_value)
            elif axis == 0:
                label = dim.dim_param or "?"
                ctx.notices.append(f"input {value.name!r}: symbolic batch dimension {label!r} pinned to 1")
                dims.append(1)
            else:
                label = dim.dim_param or "unknown"
                raise UnsupportedModelError(
                    f"input {value.name!r} has a dynamic dimension {label!r} at axis {axis}; "
                    "hlsgen needs static shapes (re-export with a fixed input size)"
                )
        _check_input_dims(value.name, dims)
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(tensor_type.elem_type))
        if dtype.kind in "bcSUO":
            raise UnsupportedModelError(f"input {value.name!r} holds {dtype} values; hlsgen compiles numeric "
                                        "(float or integer) inputs")
        graph.inputs.append(value.name)
        graph.tensors[value.name] = TensorInfo(value.name, tuple(dims), str(dtype))
