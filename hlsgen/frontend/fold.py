"""Fold the shape code exporters write (Shape -> Gather -> Unsqueeze -> Concat -> Reshape, Resize sizes from
Shape * 2, ConstantOfShape, Range, ...) into initializers, once every input's shape is fixed.

PyTorch and tf2onnx compute shapes at run time so that one file serves any batch or image size; with the
input shape pinned those subgraphs are constants. The pass is deliberately narrow: a node folds only when
it computes from constants and static shapes alone *and* hlsgen could not import it (or it reads a folded
value), so a model that imports today comes back unchanged, its node names included; nodes computing on
real tensors (Exp, ReduceSum, TopK, ...) are never touched. Each fold is evaluated by onnx.reference.
"""
from __future__ import annotations

import math
import re
from collections import deque
from collections.abc import Mapping

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from .. import ops  # noqa: F401  (registers every importer)
from ..errors import UnsupportedModelError, UsageError
from ..ops.registry import IMPORTERS

DEFAULT_DOMAINS = ("", "ai.onnx")
# never evaluated at compile time: random, control flow (subgraphs), sequences
NEVER_FOLD = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli",
              "If", "Loop", "Scan", "SequenceConstruct", "SequenceEmpty", "SequenceInsert", "SequenceAt",
              "SplitToSequence", "ConcatFromSequence", "Optional", "OptionalGetElement", "OptionalHasElement"}
SHAPE_READERS = ("Shape", "Size")  # read only their input's shape, never its values
# ops whose output shape depends on their input values: a shape computed from them is not a compile-time one
VALUE_SHAPED = {"NonZero", "Unique", "Compress", "NonMaxSuppression", "StringSplit"}
# the inputs that set an output shape: computed at run time, the tensor's shape is unknown before the model runs
SHAPE_INPUTS = {"Reshape": (1,), "Resize": (2, 3), "Upsample": (1,), "Expand": (1,), "Tile": (1,),
                "ConstantOfShape": (0,), "Range": (0, 1, 2), "Slice": (1, 2, 3, 4), "Pad": (1,), "Squeeze": (1,),
                "Unsqueeze": (1,), "TopK": (1,), "Split": (1,), "ReduceSum": (1,), "ReduceMean": (1,),
                "ReduceMax": (1,), "ReduceMin": (1,), "ReduceProd": (1,)}
MAX_FOLDED_ELEMENTS = 1 << 26  # a folded tensor as big as the largest input hlsgen compiles
SMALL_INITIALIZER = 4096  # elements: shape inference reads the values of initializers this small (shapes, axes)
SHAPE_TEXT = re.compile(r"^(?P<name>.+):(?P<dims>\d+(?:x\d+)*)$")


def parse_input_shape(text: str) -> tuple[str, tuple[int, ...]]:
    """'NAME:1x3x480x640' -> ('NAME', (1, 3, 480, 640)); the name may itself hold ':' (tf2onnx's 'input:0')."""
    match = SHAPE_TEXT.match(text.strip())
    dims = tuple(int(d) for d in match["dims"].split("x")) if match else ()
    if not match or not all(0 < d <= MAX_FOLDED_ELEMENTS for d in dims):
        raise UsageError(f"--input-shape {text!r}: expected NAME:DIMS with positive sizes joined by 'x', "
                         "e.g. input:1x3x480x640")
    return match["name"], dims


def fold_shape_code(model: onnx.ModelProto, input_shapes: Mapping[str, tuple[int, ...]] | None = None,
                    notices: list[str] | None = None) -> onnx.ModelProto:
    """The model with every input's shape fixed (a symbolic batch pinned to 1, other dynamic dims from
    `input_shapes`) and its shape-computing subgraphs folded into initializers; the model given is not
    changed (a model with nothing to pin or fold comes back as the same object). `notices` gets what was
    pinned and folded."""
    folded, said = _fold(model, dict(input_shapes or {}), lazy=False)
    if notices is not None:
        notices += said
    return folded


def fold_with_notices(model: onnx.ModelProto, input_shapes: Mapping[str, tuple[int, ...]] | None = None
                      ) -> tuple[onnx.ModelProto, list[str]]:
    """For the importer: `fold_shape_code`, and the notices saying what was pinned and folded. A model hlsgen
    imports as it is (every node importable, no --input-shape changing it) comes back as the same object,
    without notices: the importer pins its symbolic batch (and says so) as it always did."""
    return _fold(model, dict(input_shapes or {}), lazy=True)


def _fold(model: onnx.ModelProto, given: dict[str, tuple[int, ...]], lazy: bool) -> tuple[onnx.ModelProto, list[str]]:
    shapes, notices = _pinned_shapes(model, given)
    changed = [v for v in model.graph.input if v.name in shapes and _dims(v) != shapes[v.name]]
    nothing_to_fold = all(_importable(n) for n in model.graph.node)  # the common case: no shape inference
    if nothing_to_fold and (not changed or lazy and not any(v.name in given for v in changed)):
        return model, []
    out = onnx.ModelProto()
    out.CopyFrom(model)
    for value in out.graph.input:
        if value.name in shapes:
            _set_dims(value, shapes[value.name])
    folded: list[onnx.NodeProto] = []
    for _ in range(0 if nothing_to_fold else len(model.graph.node) + 1):  # a round may let inference see further
        step = _fold_once(out)
        if not step:
            break
        folded += step
    if not nothing_to_fold:
        _check_static_shapes(out)
    if folded:
        kinds = ", ".join(dict.fromkeys(n.op_type for n in folded))
        notices.append(f"folded {len(folded)} shape-computing node(s) ({kinds}) with the input shape fixed")
    return out, notices


# ---- pinning the inputs ---------------------------------------------------------------------------------
def _pinned_shapes(model: onnx.ModelProto, given: dict[str, tuple[int, ...]]) -> tuple[dict, list[str]]:
    """Each graph input's static shape; UsageError for a `given` shape that names no input or contradicts
    the model, UnsupportedModelError for a dynamic non-batch dim no shape was given for."""
    initializers = {t.name for t in model.graph.initializer}
    inputs = [v for v in model.graph.input if v.name not in initializers]
    names = [v.name for v in inputs]
    unknown = sorted(set(given) - set(names))
    if unknown:
        raise UsageError(f"--input-shape names {unknown[0]!r}, which is not an input of the model "
                         f"(its inputs: {', '.join(names) or 'none'})")
    shapes, notices = {}, []
    for value in inputs:
        tensor_type = value.type.tensor_type
        has_shape = value.type.HasField("tensor_type") and tensor_type.HasField("shape")
        dims = list(tensor_type.shape.dim) if has_shape else None
        if value.name in given:
            shapes[value.name] = _check_given(value.name, dims, given[value.name])
            if dims is None or any(not d.HasField("dim_value") for d in dims):
                notices.append(f"input {value.name!r}: shape fixed at {'x'.join(map(str, given[value.name]))} "
                               "(--input-shape)")
            continue
        if dims is None:
            continue  # reported by the importer
        pinned = []
        for axis, dim in enumerate(dims):
            if dim.HasField("dim_value"):
                pinned.append(dim.dim_value)
            elif axis == 0:
                notices.append(f"input {value.name!r}: symbolic batch dimension {dim.dim_param or '?'!r} pinned to 1")
                pinned.append(1)
            else:
                label = dim.dim_param or "unknown"
                example = "x".join(str(d.dim_value) if d.HasField("dim_value") else
                                   "1" if i == 0 else (d.dim_param or f"N{i}") for i, d in enumerate(dims))
                raise UnsupportedModelError(
                    f"input {value.name!r} has a dynamic dimension {label!r} at axis {axis}; hlsgen needs static "
                    f"shapes: give them with --input-shape {value.name}:{example}, each dimension a number "
                    "(e.g. 1x3x480x640)")
        shapes[value.name] = tuple(pinned)
    return shapes, notices


def _check_given(name: str, dims, shape: tuple[int, ...]) -> tuple[int, ...]:
    text = "x".join(map(str, shape))
    if dims is None:
        return shape
    if len(dims) != len(shape):
        raise UsageError(f"--input-shape {name}:{text} has {len(shape)} dimension(s) but input {name!r} has "
                         f"{len(dims)}")
    for axis, (dim, size) in enumerate(zip(dims, shape)):
        if dim.HasField("dim_value") and dim.dim_value != size:
            raise UsageError(f"--input-shape {name}:{text} sets axis {axis} to {size} but the model fixes it at "
                             f"{dim.dim_value}")
    return shape


def _dims(value: onnx.ValueInfoProto) -> tuple | None:
    if not value.type.tensor_type.HasField("shape"):
        return None
    return tuple(d.dim_value if d.HasField("dim_value") else None for d in value.type.tensor_type.shape.dim)


def _set_dims(value: onnx.ValueInfoProto, shape: tuple[int, ...]) -> None:
    dims = value.type.tensor_type.shape.dim
    del dims[:]
    for size in shape:
        dims.add().dim_value = size


# ---- folding --------------------------------------------------------------------------------------------
def _importable(node: onnx.NodeProto) -> bool:
    """A node hlsgen imports, or one in a custom domain (never folded: the reference evaluator lacks it)."""
    return node.domain not in DEFAULT_DOMAINS or node.op_type in IMPORTERS


def _foldable_op(node: onnx.NodeProto) -> bool:
    return (node.domain in DEFAULT_DOMAINS and node.op_type not in NEVER_FOLD and node.op_type not in VALUE_SHAPED
            and not any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute))


def _fold_once(model: onnx.ModelProto) -> list[onnx.NodeProto]:
    """Fold what the current static shapes allow; the nodes removed, in graph order."""
    graph = model.graph
    shapes = _static_shapes(model)
    constants = {t.name: t for t in graph.initializer}
    outputs = {o.name for o in graph.output}
    # nodes computing from constants and static shapes alone, and the ones among them to fold
    evaluable: set[int] = set()
    fold: set[int] = set()
    known, fold_outputs = set(constants), set()
    for i, node in enumerate(graph.node):
        if not _foldable_op(node):
            continue
        if node.op_type in SHAPE_READERS:
            ok = bool(node.input) and node.input[0] in shapes
        else:
            ok = all(not t or t in known for t in node.input)
        if not ok:
            continue
        evaluable.add(i)
        known.update(o for o in node.output if o)
        if (not _importable(node) or fold_outputs.intersection(node.input)) and not outputs.intersection(node.output):
            fold.add(i)
            fold_outputs.update(node.output)
    if not fold:
        return []
    values = _Values(model, shapes, evaluable)
    done = {i for i in sorted(fold) if values.evaluate(i)}
    if not done:
        return []
    # the evaluable nodes left feeding nothing (a Constant, a Cast of one that fed folded nodes) go too
    removed = set(done)
    while True:
        used = {t for i, n in enumerate(graph.node) if i not in removed for t in n.input} | outputs
        dead = {i for i in evaluable - removed if not used.intersection(graph.node[i].output)}
        if not dead:
            break
        removed |= dead
    have = set(constants)
    for i in sorted(done):
        for name in graph.node[i].output:
            if name and name in used and name not in have:
                graph.initializer.append(numpy_helper.from_array(np.asarray(values.values[name]), name))
                have.add(name)
    gone = [n for i, n in enumerate(graph.node) if i in removed]
    survivors = [n for i, n in enumerate(graph.node) if i not in removed]
    del graph.node[:]
    graph.node.extend(survivors)
    names = {o for n in gone for o in n.output}
    kept_info = [v for v in graph.value_info if v.name not in names]
    del graph.value_info[:]
    graph.value_info.extend(kept_info)
    return gone


class _Values:
    """Tensor values computed on demand: initializers, then evaluable nodes by onnx.reference."""

    def __init__(self, model: onnx.ModelProto, shapes: dict[str, tuple[int, ...]], evaluable: set[int]):
        self.graph, self.shapes, self.evaluable = model.graph, shapes, evaluable
        self.constants = {t.name: t for t in model.graph.initializer}
        self.producer = {o: i for i, n in enumerate(model.graph.node) for o in n.output if o}
        self.opsets = {o.domain or "": o.version for o in model.opset_import}
        self.values: dict[str, np.ndarray] = {}
        self.failed: set[int] = set()

    def get(self, name: str) -> np.ndarray | None:
        if name not in self.values:
            if name in self.constants:
                self.values[name] = numpy_helper.to_array(self.constants[name])
            elif name not in self.producer or not self.evaluate(self.producer[name]):
                return None
        return self.values.get(name)

    def evaluate(self, i: int) -> bool:
        node = self.graph.node[i]
        if all(o in self.values for o in node.output if o):
            return True
        if i not in self.evaluable or i in self.failed:
            return False
        results = self._run(node)
        if results is None:
            self.failed.add(i)
            return False
        self.values.update((o, r) for o, r in zip(node.output, results) if o)
        return True

    def _run(self, node: onnx.NodeProto) -> list[np.ndarray] | None:
        if node.op_type in SHAPE_READERS:
            shape = self.shapes[node.input[0]]
            if node.op_type == "Size":
                return [np.array(math.prod(shape), np.int64)]
            attrs = {a.name: a.i for a in node.attribute}
            return [np.array(shape[slice(attrs.get("start", 0), attrs.get("end"))], np.int64)]
        feeds = {}
        for name in node.input:
            if name:
                value = self.get(name)
                if value is None:
                    return None
                feeds[name] = value
        try:
            results = ReferenceEvaluator(node, opsets=self.opsets).run(None, feeds)
        except Exception:  # noqa: BLE001 (any failure leaves the node to the importer, which names it)
            return None
        if any(np.asarray(r).size > MAX_FOLDED_ELEMENTS for r in results):
            return None
        return [np.asarray(r) for r in results]


def _static_shapes(model: onnx.ModelProto) -> dict[str, tuple[int, ...]]:
    """Every tensor whose shape ONNX's shape inference (with data propagation) fixes, on a copy of the model
    whose large initializers are graph inputs of the same type: their values never set a shape."""
    skeleton = onnx.ModelProto()
    skeleton.ir_version, skeleton.producer_name = model.ir_version, model.producer_name
    skeleton.opset_import.extend(model.opset_import)
    skeleton.functions.extend(model.functions)
    graph = skeleton.graph
    graph.name = model.graph.name
    graph.node.extend(model.graph.node)
    graph.input.extend(model.graph.input)
    graph.output.extend(model.graph.output)
    graph.value_info.extend(model.graph.value_info)
    listed = {v.name for v in model.graph.input}
    shapes = {}
    for init in model.graph.initializer:
        shapes[init.name] = tuple(init.dims)
        if math.prod(init.dims) <= SMALL_INITIALIZER:
            graph.initializer.append(init)
        elif init.name not in listed:
            graph.input.append(helper.make_tensor_value_info(init.name, init.data_type, list(init.dims)))
    inferred = skeleton
    for data_prop in (True, False):
        try:
            inferred = onnx.shape_inference.infer_shapes(skeleton, data_prop=data_prop)
            break
        except Exception:  # noqa: BLE001 (an op shape inference chokes on: fewer shapes known, nothing worse)
            continue
    g = inferred.graph
    for value in [*g.input, *g.value_info, *g.output]:
        dims = _dims(value)
        if value.type.HasField("tensor_type") and dims is not None and None not in dims:
            shapes.setdefault(value.name, dims)
    return shapes


# ---- what folding could not fix -------------------------------------------------------------------------
def _check_static_shapes(model: onnx.ModelProto) -> None:
    """A shape input still computed after folding, from a tensor's values (NonZero) or from a shape no
    inference fixes: the model's shapes depend on its data, which no fixed hardware runs."""
    graph = model.graph
    producer = {o: n for n in graph.node for o in n.output if o}
    constants = {t.name for t in graph.initializer}

    def upstream(name: str, kinds) -> onnx.NodeProto | None:
        """The nearest node of one of `kinds` that `name` is computed from (breadth first: deep graphs)."""
        queue, seen = deque([name]), {name}
        while queue:
            node = producer.get(queue.popleft())
            if node is None:
                continue
            if node.op_type in kinds:
                return node
            for t in node.input:
                if t and t not in seen:
                    seen.add(t)
                    queue.append(t)
        return None

    for node in graph.node:
        for k in SHAPE_INPUTS.get(node.op_type, ()):
            if k < len(node.input) and node.input[k] and node.input[k] not in constants:
                source = upstream(node.input[k], {*SHAPE_READERS, *VALUE_SHAPED})
                if source is None:
                    continue  # computed from real values some other way: the importer names the node
                data = source if source.op_type in VALUE_SHAPED else upstream(source.input[0], VALUE_SHAPED)
                why = (f"the data: the size of {data.op_type} {_name(data)!r}'s output" if data is not None else
                       f"the shape of {source.input[0]!r} ({source.op_type} {_name(source)!r}), which no shape "
                       "inference fixes before the model runs")
                raise UnsupportedModelError(f"node {_name(node)!r} ({node.op_type}): its shape input "
                                            f"{node.input[k]!r} depends on {why}; hlsgen compiles fixed shapes only")


def _name(node: onnx.NodeProto) -> str:
    return node.name or node.output[0]


def parse_input_shapes(texts) -> dict[str, tuple[int, ...]]:
    """Repeated --input-shape values, by input name; one input named twice is a usage error."""
    shapes: dict[str, tuple[int, ...]] = {}
    for text in texts:
        name, dims = parse_input_shape(text)
        if name in shapes and shapes[name] != dims:
            raise UsageError(f"--input-shape gives input {name!r} two shapes "
                             f"({'x'.join(map(str, shapes[name]))} and {'x'.join(map(str, dims))})")
        shapes[name] = dims
    return shapes
