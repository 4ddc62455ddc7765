"""Mutators of a valid ONNX model. Each takes a seeded generator and a seed model and returns the mutated
file with the exit codes hlsgen may answer it with (the docstring says why those)."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from .mutant import DATA, FIT, MODEL_FILE, UNSUPPORTED, Mutant
from .seeds import SeedModel

HUGE_DIMS = (2**31 - 1, 2**40, 10**15, 2**62)
# Real ONNX ops hlsgen does not compile; each takes one float tensor and keeps its shape.
UNSUPPORTED_OPS = ("Sin", "Cos", "Hardmax", "LpNormalization", "Round", "Atan")


def _pick(rng: np.random.Generator, items):
    return items[int(rng.integers(len(items)))]


def truncate(rng: np.random.Generator, seed: SeedModel) -> Mutant:
    """The file cut short anywhere (0 bytes included), a fifth of the time within its last 16 bytes, where the
    opset import lies: not a readable model (7). A cut right after the graph keeps a parseable graph without
    its opset import, which is no valid model either (7)."""
    data = seed.onnx_bytes
    keep = len(data) - int(rng.integers(1, 17)) if rng.random() < 0.2 else int(rng.integers(0, len(data)))
    return Mutant(data[:keep], MODEL_FILE, f"truncated to {keep} of {len(data)} bytes")


def bit_flip(rng: np.random.Generator, seed: SeedModel) -> Mutant:
    """1 to 8 random bits flipped. Most land in weights and leave a valid model (0) or one whose weights
    break calibration (10, NaN/Inf); in the structure they corrupt the protobuf (7), rename an op (8), or
    change a shape so the calibration data no longer fits (10) or a layer no longer fits the target (3)."""
    data = bytearray(seed.onnx_bytes)
    flips = rng.integers(0, len(data) * 8, int(rng.integers(1, 9)))
    for bit in flips:
        data[bit // 8] ^= 1 << (bit % 8)
    return Mutant(bytes(data), MODEL_FILE, f"bits {sorted(int(b) for b in flips)} flipped",
                  frozenset({0, FIT, UNSUPPORTED, DATA}))


def wrong_dtype(rng: np.random.Generator, seed: SeedModel) -> Mutant:
    """An initializer's or the input's element type changed. An initializer's data no longer matches its
    declared type, or its type no longer matches the op's (7); an input of string/bool/complex type cannot be
    compiled (8, or 7 when ONNX's checker sees the op's type constraint broken first); an integer or double
    input no longer takes the float calibration data (10) or breaks the ops' type constraints (7)."""
    model = seed.proto
    dtype = int(_pick(rng, (TensorProto.INT8, TensorProto.INT32, TensorProto.INT64, TensorProto.DOUBLE,
                            TensorProto.FLOAT16, TensorProto.BOOL, TensorProto.STRING, TensorProto.COMPLEX64,
                            TensorProto.UINT8, 0, 99)))
    if rng.random() < 0.5 and model.graph.initializer:
        init = _pick(rng, model.graph.initializer)
        init.data_type = dtype
        what = f"initializer {init.name!r} retyped to {dtype}"
    else:
        value = model.graph.input[0]
        value.type.tensor_type.elem_type = dtype
        what = f"input {value.name!r} retyped to {dtype}"
    return Mutant(model.SerializeToString(), MODEL_FILE, what, frozenset({UNSUPPORTED, DATA}))


def drop_initializer(rng: np.random.Generator, seed: SeedModel) -> Mutant:
    """One initializer removed: a node reads a tensor nothing defines (7)."""
    model = seed.proto
    index = int(rng.integers(len(model.graph.initializer)))
    name = model.graph.initializer[index].name
    del model.graph.initializer[index]
    return Mutant(model.SerializeToString(), MODEL_FILE, f"initializer {name!r} dropped")


def bad_dims(rng: np.random.Generator, seed: SeedModel) -> Mutant:
    """A dimension of the input, an initializer, a value_info or the output made huge, negative, zero or
    symbolic. The shapes no longer agree (7), an initializer's data no longer fills its dims (7), a
    symbolic or non-positive input dim is not a static shape hlsgen compiles (8), the calibration data no
    longer fits the input (10), or a huge shape does not fit the target (3). A symbolic batch dim is pinned
    to 1 and a symbolic value_info or output dim is only a hint: those stay valid (0)."""
    model = seed.proto
    g = model.graph
    where = _pick(rng, ("input", "initializer", "value_info", "output") if g.value_info else
                  ("input", "initializer", "output"))
    kind = _pick(rng, ("huge", "negative", "zero", "symbolic"))
    value = {"huge": int(_pick(rng, HUGE_DIMS)), "negative": -int(rng.integers(1, 5)), "zero": 0,
             "symbolic": "N"}[kind]
    if where == "initializer":
        init = _pick(rng, g.initializer)
        axis = int(rng.integers(len(init.dims)))
        init.dims[axis] = value if kind != "symbolic" else 3  # an initializer has no symbolic dims: a wrong size
        name = init.name
    else:
        info = _pick(rng, {"input": g.input, "value_info": g.value_info, "output": g.output}[where])
        dims = info.type.tensor_type.shape.dim
        axis = int(rng.integers(len(dims)))
        if kind == "symbolic":
            dims[axis].dim_param = "N"
        else:
            dims[axis].dim_value = value
        name = info.name
    return Mutant(model.SerializeToString(), MODEL_FILE, f"{where} {name!r} axis {axis} made {kind} ({value})",
                  frozenset({0, FIT, UNSUPPORTED, DATA}))


def node_cycle(rng: np.random.Generator, seed: SeedModel) -> Mutant:
    """A node's input rewired to the output of itself or a later node: a cycle, which ONNX rejects (7)."""
    model = seed.proto
    nodes = model.graph.node
    index = int(rng.integers(len(nodes)))
    later = nodes[int(rng.integers(index, len(nodes)))]
    nodes[index].input[0] = later.output[0]
    return Mutant(model.SerializeToString(), MODEL_FILE,
                  f"node {nodes[index].name!r} reads {later.output[0]!r} of node {later.name!r}")


def duplicate_names(rng: np.random.Generator, seed: SeedModel) -> Mutant:
    """Two nodes writing the same tensor, or two initializers of one name (7: ONNX's SSA rule). Two nodes of
    one name are legal ONNX (node names need not be unique), so that mutant must build (0)."""
    model = seed.proto
    g = model.graph
    kind = _pick(rng, ("output", "initializer", "node"))
    a, b = (int(i) for i in rng.choice(len(g.node), 2, replace=False))
    if kind == "output":
        g.node[b].output[0] = g.node[a].output[0]
        return Mutant(model.SerializeToString(), MODEL_FILE, f"nodes {a} and {b} both write {g.node[a].output[0]!r}")
    if kind == "initializer":
        g.initializer.append(g.initializer[int(rng.integers(len(g.initializer)))])
        return Mutant(model.SerializeToString(), MODEL_FILE, f"initializer {g.initializer[-1].name!r} twice")
    g.node[b].name = g.node[a].name
    return Mutant(model.SerializeToString(), 0, f"nodes {a} and {b} both named {g.node[a].name!r}")


def external_data(rng: np.random.Generator, seed: SeedModel) -> Mutant:
    """An initializer whose data is said to live in a file that is missing, outside the model's folder, or
    an absolute path: ONNX refuses to load it (7)."""
    model = seed.proto
    init = _pick(rng, model.graph.initializer)
    location = _pick(rng, ("missing_weights.bin", "../outside.bin", "/etc/hostname", "sub/../../x.bin", ""))
    init.ClearField("raw_data")
    init.ClearField("float_data")
    init.data_location = TensorProto.EXTERNAL
    del init.external_data[:]
    for key, value in (("location", location), ("offset", "0"), ("length", str(int(rng.integers(1, 4096))))):
        entry = init.external_data.add()
        entry.key, entry.value = key, value
    return Mutant(model.SerializeToString(), MODEL_FILE, f"initializer {init.name!r} in external file {location!r}")


def wrong_opset(rng: np.random.Generator, seed: SeedModel) -> Mutant:
    """The default opset outside 6..25, no default opset at all, or a node moved to an unknown domain: a
    model hlsgen does not compile (8). ONNX's checker may see the broken domain first (7)."""
    model = seed.proto
    kind = _pick(rng, ("version", "no_default", "node_domain"))
    if kind == "version":
        version = int(_pick(rng, (1, 3, 5, 26, 99, 2**40)))
        model.opset_import[0].version = version
        what = f"opset {version}"
    elif kind == "no_default":
        model.opset_import[0].domain = "com.example"
        what = "the default opset renamed com.example"
    else:
        node = _pick(rng, model.graph.node)
        node.domain = "com.example"
        model.opset_import.append(helper.make_opsetid("com.example", 1))
        what = f"node {node.name!r} in domain com.example"
        return Mutant(model.SerializeToString(), UNSUPPORTED, what, frozenset({MODEL_FILE}),
                      mention=(node.name, f"com.example.{node.op_type}"))
    return Mutant(model.SerializeToString(), UNSUPPORTED, what, frozenset({MODEL_FILE}))


def empty_graph(rng: np.random.Generator, seed: SeedModel) -> Mutant:
    """Every node removed, with or without the outputs: no model (7)."""
    model = seed.proto
    del model.graph.node[:]
    keep_outputs = bool(rng.random() < 0.5)
    if not keep_outputs:
        del model.graph.output[:]
    return Mutant(model.SerializeToString(), MODEL_FILE, f"all nodes removed (outputs kept: {keep_outputs})")


def unsupported_op(rng: np.random.Generator, seed: SeedModel) -> Mutant:
    """A valid model with a real ONNX op hlsgen does not compile inserted after a node: the host runs it between
    two accelerator segments (0), or 8 naming the node (a partition it cannot make)."""
    model = seed.proto
    g = model.graph
    index = int(rng.integers(len(g.node) - 1))  # not after the last: its output is the graph's
    op = _pick(rng, UNSUPPORTED_OPS)
    source = g.node[index].output[0]
    name = f"fuzz_{op.lower()}"
    g.node.insert(index + 1, helper.make_node(op, [source], [f"{name}_out"], name=name))
    for node in g.node[index + 2:]:
        node.input[:] = [f"{name}_out" if i == source else i for i in node.input]
    return Mutant(model.SerializeToString(), UNSUPPORTED, f"{op} node {name!r} after {g.node[index].name!r}",
                  also=frozenset({0}), mention=(name, op))


def bad_text(rng: np.random.Generator, seed: SeedModel) -> Mutant:
    """A byte of a node's name, op type or output name, or of a string attribute, made one that is no UTF-8
    (protobuf then hands the field over as bytes): a corrupt file (7). The bytes are replaced where they first
    occur in the file, which may be inside raw weight data or another field instead: then it acts as a bit
    flip does (0, 3, 8, 10)."""
    model = seed.proto
    node = _pick(rng, model.graph.node)
    if node.op_type in ("Conv", "MaxPool") and rng.random() < 0.3:
        node.attribute.append(helper.make_attribute("auto_pad", "NOTSET"))  # a string attribute to break
    texts = [t.encode() for t in (node.name, node.op_type, node.output[0])] + [a.s for a in node.attribute]
    texts = [t for t in texts if len(t) >= 3] or [node.op_type.encode()]  # a short name hides in other fields
    text = _pick(rng, texts)
    at = int(rng.integers(len(text)))
    broken = text[:at] + bytes([int(_pick(rng, (0x80, 0xB2, 0xC5, 0xFF)))]) + text[at + 1:]
    data = model.SerializeToString()
    return Mutant(data.replace(text, broken, 1), MODEL_FILE, f"{text!r} made {broken!r}",
                  frozenset({0, FIT, UNSUPPORTED, DATA}))


# Attributes each op of the seeds takes, with values ONNX allows in form but a model rarely holds.
ATTRIBUTES = {
    "Conv": ("strides", "dilations", "pads", "kernel_shape", "group", "auto_pad"),
    "MaxPool": ("strides", "dilations", "pads", "kernel_shape", "ceil_mode", "storage_order", "auto_pad"),
    "Gemm": ("transA", "transB", "alpha", "beta"),
    "Flatten": ("axis",),
    "BatchNormalization": ("epsilon", "momentum"),
}
LIST_ATTRIBUTES = ("strides", "dilations", "pads", "kernel_shape")
FLOAT_ATTRIBUTES = ("alpha", "beta", "epsilon", "momentum")


def bad_attribute(rng: np.random.Generator, seed: SeedModel) -> Mutant:
    """An attribute set to a value of the right form but an odd size: zero, negative or huge strides, pads,
    kernels, dilations and groups, lists of the wrong length, an out-of-range axis, a transposition flag of 5,
    NaN or Inf scalars, an unknown auto_pad. ONNX's checker or shape inference rejects most (7); hlsgen
    refuses attributes it does not implement (8) or a layer that no longer fits (3); the rest leave a valid
    model (0), one the calibration data no longer fits (10), or one whose float output is not finite (10)."""
    model = seed.proto
    node = _pick(rng, [n for n in model.graph.node if n.op_type in ATTRIBUTES])
    name = _pick(rng, ATTRIBUTES[node.op_type])
    if name in LIST_ATTRIBUTES:
        length = int(_pick(rng, (0, 1, 2, 3, 4, 6)))
        value = [int(_pick(rng, (0, -1, 1, 2, 3, 7, 2**31 - 1, -(2**40)))) for _ in range(length)]
    elif name in FLOAT_ATTRIBUTES:
        value = float(_pick(rng, (0.0, -1.0, 1e30, float("nan"), float("inf"))))
    elif name == "auto_pad":
        value = _pick(rng, ("SAME_UPPER", "SAME_LOWER", "VALID", "BOGUS", ""))
    else:
        value = int(_pick(rng, (0, -1, -5, 2, 5, 2**31 - 1, 2**62)))
    kept = [a for a in node.attribute if a.name != name]
    del node.attribute[:]
    kind = onnx.AttributeProto.INTS if isinstance(value, list) else None  # an empty list has no type to infer
    node.attribute.extend([*kept, helper.make_attribute(name, value, attr_type=kind)])
    return Mutant(model.SerializeToString(), UNSUPPORTED, f"node {node.name!r} {name}={value!r}",
                  frozenset({0, FIT, MODEL_FILE, DATA}))


ONNX_MUTATORS = (truncate, bit_flip, wrong_dtype, drop_initializer, bad_dims, node_cycle, duplicate_names,
                 external_data, wrong_opset, empty_graph, unsupported_op, bad_text, bad_attribute)
