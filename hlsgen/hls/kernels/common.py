"""What every kernel family shares: the Kernel record, constant arrays, type widths, and the kernel
built around a loop IR nest (input buffers filled from streams, the nest, the output buffer streamed out)."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ...errors import MappingError, UnsupportedModelError
from ...hw.rows import LayerMap
from ...ir import Graph, Node
from ...loopir import Call, Loop, LoopNest
from ...loopir.ir import Invoke
from ...quant.arith import signed_bits_for
from ...quant.params import TensorQuant
from ..cnames import Names, ap_type
from ..nest import CallRenderer, CNames, buffer_pragmas, function_pragmas, lower
from ..pragmas import pragma
from ..schedule import adapter_directives

MAX_WIDTH = 62  # widest intermediate: the portable header computes in int64 and needs one spare bit
MIN_REQUANT_WIDTH = 18  # the requantizer adds a zero point (up to 16 bits) to its shifted value


@dataclass
class CArray:
    """A constant array of a weights header (stored as plain C integers, see cnames.storage_type)."""

    name: str
    ctype: str  # the ap type every value fits
    values: np.ndarray
    comment: str

    @property
    def dims(self) -> tuple[int, ...]:
        return tuple(self.values.shape)


@dataclass
class Offchip:
    """A layer's weights in off-chip memory: a top-level m_axi port, filled by the host."""

    port: str  # the top function's argument
    t: str  # its element type
    size: int
    layer: str
    data: CArray  # the values, for the testbench (flat)
    header: str = ""  # weights/<...>.h that holds `data`


@dataclass
class Kernel:
    layer: str  # node name (or a fork's description)
    fn: str  # C function
    template: str  # the family's helpers (templates/hls/<family>.j2); "fork.j2" for forks
    k: dict  # the template's context
    inputs: list[str]  # graph tensors read, in argument order
    output: str | None  # graph tensor written (None for forks, which the design wires itself)
    arrays: list[CArray] = field(default_factory=list)
    offchip: Offchip | None = None
    h: dict = field(default_factory=dict)  # the family helpers' context
    header: str = ""  # kernels/<...>.h, set by the design
    proof: LoopNest | None = None  # the nest as the kernel runs it: its helpers' loops and reads invoked in place


class Context:
    """What a family builder gets: the graph, the design's names and the tensor typedefs."""

    def __init__(self, graph: Graph, names: Names, types: dict[str, str], offchip_layers: frozenset[str]):
        self.graph, self.names, self.types, self.offchip_layers = graph, names, types, offchip_layers

    def quant(self, tensor: str) -> TensorQuant:
        return self.graph.quant[tensor]

    def constant(self, node: Node, index: int) -> np.ndarray | None:
        if len(node.inputs) <= index or not node.inputs[index]:
            return None
        return np.asarray(self.graph.constants[node.inputs[index]], np.int64)

    def helper(self, fn: str, role: str) -> str:
        return self.names.take(f"{fn}_{role}")


def nest_kernel(ctx: Context, node: Node, layer: LayerMap, nest: LoopNest, fn: str, family: str, h: dict,
                calls: dict[str, CallRenderer], types: dict[str, str], rom: dict[str, str],
                arrays: list[CArray], offchip: Offchip | None = None, helpers: dict[str, LoopNest] | None = None) -> Kernel:
    """The kernel of one layer: `types` gives the C element type of the nest's local buffers (the
    activation buffers get their tensors' types), `rom` the global C names of its constant buffers.
    With `offchip`, the nest's `weights` buffer is local and loaded from an m_axi port first."""
    activation = [b for b in nest.buffers if b.memory == "activation"]
    sources = [b for b in activation if b.name != "y"]
    if len(sources) != len(layer.inputs) or not any(b.name == "y" for b in activation):
        raise UnsupportedModelError(f"{node.name}: the loop IR nest's activation buffers "
                                    f"{[b.name for b in activation]} do not match the layer's inputs {list(layer.inputs)}")
    local = dict(zip((b.name for b in sources), (ctx.types[t] for t in layer.inputs)))
    local["y"] = ctx.types[layer.output]
    local.update(types)
    c = CNames(rom)
    buffers = []
    for b in nest.buffers:
        if b.name in rom:
            continue
        if b.name not in local:
            raise UnsupportedModelError(f"{node.name}: no C type for the loop IR buffer {b.name!r} ({family} kernels)")
        dims = "".join(f"[{n}]" for n in b.shape)
        buffers.append({"decl": f"{local[b.name]} {c.name(b.name)}{dims}", "pragmas": buffer_pragmas(nest, b.name, c)})
    rom_pragmas = [p for name in rom for p in buffer_pragmas(nest, name, c)]
    k = {"name": node.name, "op": node.op, "kind": layer.kind, "unit": layer.unit.replace("_", " "),
         "summary": summary(ctx.graph, node), "fn": fn, "helpers": f"{family}.j2",
         "inputs": [{"port": f"in{i}", "t": ctx.types[t], "buffer": b.name, "dims": list(b.shape)}
                    for i, (t, b) in enumerate(zip(layer.inputs, sources))],
         "output": {"port": "out", "t": ctx.types[layer.output], "buffer": "y",
                    "dims": list(nest.buffer("y").shape)},
         "buffers": buffers, "rom_pragmas": rom_pragmas, "function_pragmas": function_pragmas(nest),
         "adapter_pragmas": [pragma(d) for d in adapter_directives()], "nest": lower(nest, 4, calls, c),
         "offchip": None}
    if offchip:
        k["offchip"] = {"port": offchip.port, "t": offchip.t, "size": offchip.size,
                        "target": flat_element(nest.buffer("weights").shape, "weights")}
    return Kernel(node.name, fn, "layer.j2", k, list(layer.inputs), layer.output, arrays, offchip, h,
                  proof=invoked(nest, helpers or {}))


def invoked(nest: LoopNest, helpers: dict[str, LoopNest]) -> LoopNest:
    """`nest` with each statement that calls a helper function (`helpers`: call name -> the helper's nest)
    preceded by an Invoke of that helper: what the bank proof must see of the C++ kernel."""
    def calls(v):
        if isinstance(v, Call):
            yield v.fn
            for a in v.args:
                yield from calls(a)

    def nodes(items):
        out = []
        for n in items:
            if isinstance(n, Loop):
                out.append(replace(n, body=nodes(n.body)))
                continue
            out += [Invoke(helpers[fn], ()) for fn in calls(getattr(n, "value", None)) if fn in helpers]
            out.append(n)
        return tuple(out)

    return replace(nest, body=nodes(nest.body))


def flat_element(shape: tuple[int, ...], name: str) -> str:
    """The element of a row-major buffer at flat index e."""
    strides = [int(np.prod(shape[i + 1:])) for i in range(len(shape))]
    return name + "".join(f"[e / {s} % {n}]" if s > 1 else f"[e % {n}]" for s, n in zip(strides, shape))


def centred_bits(q: TensorQuant) -> int:
    """Signed bits of x - zero_point over the tensor's whole range."""
    return signed_bits_for(max(abs(q.qmin - q.zero_point), abs(q.qmax - q.zero_point)))


def centred_type(q: TensorQuant) -> str:
    return ap_type(centred_bits(q), True)


def requant_width(layer: str, product_bits: int, shifts) -> int:
    """The requantizer's input width: holds the product and 2^(s-1) for the largest shift."""
    width = max(product_bits, int(np.max(shifts)) + 1, MIN_REQUANT_WIDTH)
    if width > MAX_WIDTH:
        raise MappingError(f"{layer}: its requantizer needs {width}-bit integers; hlsgen's HLS "
                                    f"kernels support at most {MAX_WIDTH} (narrower weights or activations)")
    return width


def unsigned_bits(values) -> int:
    return max(int(np.max(values)).bit_length(), 1)


def summary(graph: Graph, node: Node) -> str:
    """'[1, 16, 16, 16] -> [1, 32, 8, 8]' for the kernel's comment line."""
    ins = ", ".join(str(list(graph.shape(t))) for t in node.inputs if t and t not in graph.constants)
    return f"{ins} -> {list(graph.shape(node.outputs[0]))}"
