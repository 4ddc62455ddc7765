"""A partition of a (folded) ONNX model between the host and the accelerator, as a list of stages run in turn.

Every node is coloured host or accelerator. A node's stage is the number of colour changes on the longest
path from the graph inputs to it, counting the inputs as host: host nodes sit in even stages, accelerator
nodes in odd ones, and every edge goes to the same or a later stage. So the accelerator nodes of one stage
form one segment (one layer program) that never waits on a host node of its own stage, and the fewest
segments an inference needs are those stages (a host op between accelerator layers costs one more)."""
from __future__ import annotations

from dataclasses import dataclass

import onnx

from .onnx_graph import TensorType, extract, graph_inputs, initializer_names, node_macs

HOST, ACCELERATOR = "host", "accelerator"


@dataclass(frozen=True)
class Stage:
    name: str  # "host0", "segment1", "host2", ...
    side: str  # HOST or ACCELERATOR
    nodes: tuple[str, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    macs: int

    def to_json(self) -> dict:
        return {"name": self.name, "side": self.side, "nodes": list(self.nodes), "inputs": list(self.inputs),
                "outputs": list(self.outputs), "macs": self.macs}

    @staticmethod
    def from_json(data: dict) -> "Stage":
        return Stage(data["name"], data["side"], tuple(data["nodes"]), tuple(data["inputs"]),
                     tuple(data["outputs"]), int(data["macs"]))


@dataclass(frozen=True)
class Partition:
    stages: tuple[Stage, ...]
    node_ops: dict[str, str]  # node name -> ONNX op type, every node of the model
    node_macs: dict[str, int]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]

    @property
    def segments(self) -> list[Stage]:
        return [s for s in self.stages if s.side == ACCELERATOR]

    @property
    def host_nodes(self) -> list[str]:
        return [n for s in self.stages if s.side == HOST for n in s.nodes]

    @property
    def macs_total(self) -> int:
        return sum(self.node_macs.values())

    @property
    def macs_on_accelerator(self) -> int:
        return sum(s.macs for s in self.segments)

    @property
    def whole_on_accelerator(self) -> bool:
        return not self.host_nodes and len(self.segments) == 1

    def side(self, node: str) -> str:
        return next(s.side for s in self.stages if node in s.nodes)

    def to_json(self) -> dict:
        """report.json's `partition`."""
        return {"segments": [s.name for s in self.segments], "host_nodes": self.host_nodes,
                "accelerator_nodes": sum(len(s.nodes) for s in self.segments), "macs_total": self.macs_total,
                "macs_on_accelerator": self.macs_on_accelerator, "inputs": list(self.inputs),
                "outputs": list(self.outputs), "stages": [s.to_json() for s in self.stages],
                "node_ops": self.node_ops, "node_macs": self.node_macs}

    @staticmethod
    def from_json(data: dict) -> "Partition":
        return Partition(tuple(Stage.from_json(s) for s in data["stages"]), dict(data["node_ops"]),
                         {k: int(v) for k, v in data["node_macs"].items()}, tuple(data["inputs"]),
                         tuple(data["outputs"]))

    def summary(self) -> str:
        """The build's one line: where the MACs run, and which ops the host runs."""
        share = self.macs_on_accelerator / self.macs_total if self.macs_total else 1.0
        segments = len(self.segments)
        line = f"accelerator: {share:.1%} of MACs in {segments} segment{'s' if segments != 1 else ''}"
        host = self.host_nodes
        if host:
            ops = sorted({self.node_ops[n] for n in host}, key=lambda op: [self.node_ops[n] for n in host].index(op))
            line += f"; host: {len(host)} node{'s' if len(host) != 1 else ''} ({', '.join(ops)})"
        return line


def constant_nodes(model: onnx.ModelProto) -> set[str]:
    """Nodes that compute from initializers alone (a DequantizeLinear of weights, a Reshape of a constant):
    they belong to no stage; each stage that reads one gets its own copy."""
    known = initializer_names(model)
    found: set[str] = set()
    for node in model.graph.node:
        inputs = [t for t in node.input if t]
        if inputs and all(t in known for t in inputs) and not node.op_type.startswith("Random"):
            found.add(node.name)
            known.update(t for t in node.output if t)
    return found


def stage_of(model: onnx.ModelProto, on_accelerator: set[str]) -> dict[str, int]:
    """Each node's stage (module docstring); constant nodes have none."""
    constant = constant_nodes(model)
    producer: dict[str, onnx.NodeProto] = {}
    stage: dict[str, int] = {}
    for node in model.graph.node:
        if node.name in constant:
            continue
        acc = node.name in on_accelerator
        s = 1 if acc else 0
        for t in node.input:
            p = producer.get(t)
            if p is not None:
                s = max(s, stage[p.name] + ((p.name in on_accelerator) != acc))
        stage[node.name] = s
        for out in node.output:
            producer[out] = node
    return stage


def plan(model: onnx.ModelProto, on_accelerator: set[str], types: dict[str, TensorType]) -> Partition:
    """The stages of `model` (nodes named, in topological order) with `on_accelerator` coloured so."""
    stage = stage_of(model, on_accelerator)
    constant = constant_nodes(model)
    inits = initializer_names(model) | {t for n in model.graph.node if n.name in constant for t in n.output}
    outputs = [o.name for o in model.graph.output]
    consumed_at: dict[str, list[int]] = {}
    produced_at: dict[str, int] = {}
    for node in model.graph.node:
        if node.name in constant:
            continue
        for t in node.input:
            if t and t not in inits:
                consumed_at.setdefault(t, []).append(stage[node.name])
        for t in node.output:
            produced_at[t] = stage[node.name]
    macs = {node.name: node_macs(node, types) for node in model.graph.node if node.name not in constant}
    stages = []
    host_count = acc_count = 0
    for index in sorted(set(stage.values())):
        nodes = [n for n in model.graph.node if stage.get(n.name) == index]
        side = ACCELERATOR if index % 2 else HOST
        inputs = list(dict.fromkeys(t for n in nodes for t in n.input
                                    if t and t not in inits and produced_at.get(t) != index))
        produced = [t for n in nodes for t in n.output if t]
        outs = [t for t in produced if t in outputs or any(s > index for s in consumed_at.get(t, []))]
        if side == ACCELERATOR:
            name, acc_count = f"segment{acc_count}", acc_count + 1
        else:
            name, host_count = f"host{host_count}", host_count + 1
        stages.append(Stage(name, side, tuple(n.name for n in nodes), tuple(inputs), tuple(outs),
                            sum(macs[n.name] for n in nodes)))
    return Partition(tuple(stages), {n.name: n.op_type for n in model.graph.node if n.name not in constant}, macs,
                     tuple(v.name for v in graph_inputs(model)), tuple(outputs))


def stage_model(model: onnx.ModelProto, stage: Stage, types: dict[str, TensorType], prefix: str) -> onnx.ModelProto:
    """One stage of the partition as an ONNX model of its own."""
    names = set(stage.nodes)
    constant = constant_nodes(model)
    needed = {t for n in model.graph.node if n.name in names for t in n.input}
    for node in reversed(model.graph.node):  # the constant nodes the stage reads, and what they read
        if node.name in constant and needed.intersection(node.output):
            names.add(node.name)
            needed.update(node.input)
    nodes = [n for n in model.graph.node if n.name in names]
    return extract(model, nodes, list(stage.inputs), list(stage.outputs), types, f"{prefix}_{stage.name}")
