"""The integer graph as a dataflow design: one kernel per layer, the streams between them, the top-level
ports, and the order the top function calls the kernels in (a topological one, which is also the order a
sequential C simulation needs)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from ..errors import MappingError, UnsupportedModelError, UnsupportedOp, UnsupportedOpsError
from ..hw import Target, map_model
from ..hw.resources import bram18
from ..ir import Graph
from ..loopir import check, layer_nests
from ..quant.params import TensorQuant
from .cnames import Names, tensor_type
from .kernels import array, copy, vector
from .kernels.common import Context, Kernel, Offchip
from .ports import Port, make_port
from .pragmas import pragma
from .schedule import adapter_directives, stream_directive, top_directives

FAMILIES = {"conv": array.build, "grouped_conv": array.build, "depthwise": array.build, "dense": array.build,
            "pool": vector.build, "global_pool": vector.build, "elementwise": vector.build, "resize": vector.build,
            "copy": copy.build}


@dataclass
class Design:
    top: str
    types: list[dict]  # typedefs: name, ctype, tensor, shape, scale, zero_point
    ports: list[Port]
    kernels: list[Kernel]  # in call order
    streams: list[dict] = field(default_factory=list)  # internal streams: name, t, pragmas
    calls: list[dict] = field(default_factory=list)  # fn, args, trace (see _trace)
    top_pragmas: list[str] = field(default_factory=list)

    @property
    def offchip(self) -> list[Offchip]:
        return [k.offchip for k in self.kernels if k.offchip is not None]

    def bank_conflicts(self) -> list[str]:
        """The kernels' pipelined loops whose accesses, their helpers' included (the window generators read x
        directly), need more ports of a bank than it has: where this design may not reach II = 1."""
        return [p for k in self.kernels if k.proof is not None for p in check(k.proof)]

    def cost(self, graph: Graph, target: Target) -> dict:
        """What Vitis is asked for (estimated): every array process has its own R x C MACs (one DSP each at
        8-bit operands) and buffers its whole input and output tensors; weights are ROMs of each process."""
        R, C = target.array.rows, target.array.cols
        layers = [k for k in self.kernels if k.output is not None]
        arrays = [k for k in layers if k.k.get("unit") == "systolic array"]
        bram = 0
        for k in layers:
            for t in [*k.inputs, k.output]:
                bram += bram18(int(np.prod(graph.shape(t))), graph.quant[t].bits)
        weight_bits = 0
        for k in arrays:
            node = graph.nodes[k.layer]
            w = graph.constants[node.inputs[1]]
            weight_bits += int(w.size) * node.attrs.weight_bits
            bram += bram18(int(w.size), node.attrs.weight_bits)
        return {"design": "dataflow", "processes": len(layers), "macs_per_cycle": len(arrays) * R * C,
                "dsp": len(arrays) * R * C, "bram_18k": bram, "weight_rom_bits": weight_bits,
                "note": "one DATAFLOW process per layer, each array layer with its own R x C MACs: report.json's "
                        "cycles and resources describe the overlay (one shared array), not this design"}


def build_design(graph: Graph, target: Target, top: str, mapping=None,
                 offchip: frozenset[str] | None = None) -> Design:
    """Plan the HLS design of integer graph `graph`: one kernel per layer, each around the loop IR nest
    of its mapping onto `target` (`mapping` from hlsgen.hw.map_model, computed when not given).
    `offchip` names layers whose weights stay off chip (default: those that do not fit the weight memory)."""
    check_batch(graph)
    mapping = mapping or map_model(graph, target)
    refuse_external_maps(mapping)
    if any(layer.pool for layer in mapping.layers):  # this design runs every MaxPool itself
        mapping = map_model(graph, target, fuse_pools=False)
    nests = layer_nests(mapping)
    names = Names()
    top = names.take(top)
    tensors = [*graph.inputs, *(n.outputs[0] for n in graph.topological())]
    types = {t: names.take(f"{t}_t") for t in tensors}
    offchip = offchip_layers(graph, target) if offchip is None else frozenset(offchip)
    ctx = Context(graph, names, types, offchip)
    ports = [make_port(graph, names.take(t), t, types[t], "input") for t in graph.inputs]
    ports += [make_port(graph, names.take(t), t, types[t], "output") for t in graph.outputs]
    alias: dict[str, str] = {}
    kernels, problems = [], []
    for layer in mapping.layers:
        node = graph.nodes[layer.name]
        if layer.kind == "reshape":  # streams are row-major, like the activation memory: only addressing changes
            alias[node.outputs[0]] = node.inputs[0]
            continue
        builder = FAMILIES.get(layer.kind)
        try:
            if builder is None:
                raise UnsupportedModelError(f"no HLS kernel for {layer.kind} layers")
            kernels.append(builder(node, layer, nests[layer.name], ctx))
        except MappingError as exc:  # a width or size of this target
            raise MappingError(f"{graph.describe(node.name)}: {exc}") from None
        except UnsupportedModelError as exc:  # a form of the op the kernels do not implement
            onnx_name, op_type, opset = graph.origin(node.name) or (node.name, "a layer hlsgen made", 0)
            problems.append(UnsupportedOp(onnx_name, op_type, opset, f"the HLS kernels cannot implement it: {exc}"))
    if problems:
        raise UnsupportedOpsError(problems)
    design = Design(top, [_typedef(graph, t, types[t]) for t in tensors], ports, [])
    design.top_pragmas = [*interface_pragmas(ports, [k.offchip for k in kernels if k.offchip is not None]),
                          *(pragma(d) for d in top_directives())]
    _wire(design, graph, kernels, alias, names)
    return design


def interface_pragmas(ports: list[Port], offchip: list[Offchip]) -> list[str]:
    """AXI-Stream for every tensor port, m_axi for off-chip weights, AXI-Lite for control."""
    lines = [f"#pragma HLS INTERFACE mode=axis port={p.name}" for p in ports]
    for o in offchip:
        lines += [f"#pragma HLS INTERFACE mode=m_axi port={o.port} offset=slave bundle=gmem depth={o.size}",
                  f"#pragma HLS INTERFACE mode=s_axilite port={o.port} bundle=control"]
    return [*lines, "#pragma HLS INTERFACE mode=s_axilite port=return bundle=control"]


def offchip_layers(graph: Graph, target: Target) -> frozenset[str]:
    """Layers whose weights stay in off-chip memory: those that no longer fit the target's weight buffer
    once the earlier layers' weights are on chip (in topological order)."""
    room, offchip = target.buffers.weight.bytes, set()
    for node in graph.topological():
        if node.op not in ("QConv", "QDense"):
            continue
        size = -(-graph.constants[node.inputs[1]].size * node.attrs.weight_bits // 8)  # at the chosen width
        if size <= room:
            room -= size
        else:
            offchip.add(node.name)
    return frozenset(offchip)


def refuse_external_maps(mapping) -> None:
    """This design streams whole maps between its processes: it has no feature-map image in external memory."""
    if mapping.maps_external:
        target = mapping.target
        raise MappingError(f"{len(mapping.memory.external)} feature maps do not fit the activation memory of "
                           f"{target.name} (buffers.input = {target.buffers.input.kib} KiB) and live in external "
                           "memory, which only the overlay moves: use --hls-design overlay (or auto)")


def check_batch(graph: Graph) -> None:
    for t in [*graph.inputs, *graph.outputs]:
        if graph.shape(t)[0] != 1:
            raise UnsupportedModelError(f"tensor {t!r} has batch {graph.shape(t)[0]}: the HLS design runs one "
                                        "inference per call (batch 1)")


def _typedef(graph: Graph, tensor: str, name: str) -> dict:
    q: TensorQuant = graph.quant[tensor]
    return {"name": name, "ctype": tensor_type(q), "tensor": tensor, "shape": list(graph.shape(tensor)),
            "scale": f"{q.scale:.9g}", "zero_point": q.zero_point}


def _wire(design: Design, graph: Graph, kernels: list[Kernel], alias: dict[str, str], names: Names) -> None:
    """Streams, forks and calls: each tensor's producer writes one stream; a tensor read by several
    consumers (or by a consumer and an output port) goes through a fork."""

    def canon(t: str) -> str:
        while t in alias:
            t = alias[t]
        return t

    inputs = {p.tensor: p.name for p in design.ports if p.direction == "input"}
    sinks: dict[str, list] = {}
    for ki, k in enumerate(kernels):
        for pos, t in enumerate(k.inputs):
            sinks.setdefault(canon(t), []).append((ki, pos))
    for p in design.ports:
        if p.direction == "output":
            sinks.setdefault(canon(p.tensor), []).append(p.name)
    args: dict[int, list] = {ki: [None] * len(k.inputs) for ki, k in enumerate(kernels)}
    out_arg: dict[int, str] = {}
    forks: dict[str, Kernel] = {}  # canonical tensor -> its fork
    design_types = {d["tensor"]: d["name"] for d in design.types}

    def channel(t: str, name: str, depth_values: int, reconverges: bool) -> str:
        s = names.take(name)
        design.streams.append({"name": s, "t": design_types[t],
                               "pragmas": [pragma(stream_directive(depth_values, reconverges), s)]})
        return s

    producers = {canon(k.output): ki for ki, k in enumerate(kernels)}
    for t in [*graph.inputs, *(canon(k.output) for k in kernels)]:
        if t in forks or (t not in inputs and t not in producers):
            continue
        readers = sinks.get(t, [])
        if not readers:
            raise UnsupportedModelError(f"tensor {t!r} is computed but never read")
        count = int(np.prod(graph.shape(t)))
        if len(readers) == 1 and not (t in inputs and isinstance(readers[0], str)):
            sink = readers[0]
            if t in inputs:
                src = inputs[t]
            elif isinstance(sink, str):
                src = sink
            else:
                src = channel(t, f"s_{t}", count, False)
            if isinstance(sink, tuple):
                args[sink[0]][sink[1]] = src
            if t in producers:
                out_arg[producers[t]] = src
            continue
        src = inputs[t] if t in inputs else channel(t, f"s_{t}", count, False)
        if t in producers:
            out_arg[producers[t]] = src
        outs = []
        for sink in readers:
            if isinstance(sink, str):
                outs.append(sink)
            else:
                outs.append(channel(t, f"s_{t}_to_{kernels[sink[0]].fn}", count, True))
                args[sink[0]][sink[1]] = outs[-1]
        fn = names.take(f"k_fork_{t}")
        k = {"name": f"fork_{t}", "tensor": t, "fn": fn, "x_t": design_types[t], "outputs": outs, "count": count,
             "pragmas": [pragma(d) for d in adapter_directives()]}
        forks[t] = Kernel(f"fork of {t}", fn, "fork.j2", k, [t], None)
        forks[t].k["args"] = [src, *outs]
    ordered = [forks[t] for t in graph.inputs if t in forks]
    for ki, k in enumerate(kernels):
        call = [*args[ki], out_arg[ki]]
        if k.offchip is not None:
            call.append(k.offchip.port)
        k.k["args"] = call
        ordered.append(k)
        if canon(k.output) in forks:
            ordered.append(forks[canon(k.output)])
    design.kernels = ordered
    design.calls = [{"fn": k.fn, "args": k.k["args"], "trace": _trace(k)} for k in ordered]


def _trace(kernel: Kernel) -> dict | None:
    """What an HLSGEN_TRACE build logs after a layer's call: its name and output tensor (as C++ string
    literals: a JSON string is one) and the stream holding that tensor (the call's argument after the
    inputs); nothing for forks, which copy a tensor."""
    if kernel.output is None:
        return None
    return {"layer": json.dumps(kernel.layer), "tensor": json.dumps(kernel.output),
            "stream": kernel.k["args"][len(kernel.inputs)]}
