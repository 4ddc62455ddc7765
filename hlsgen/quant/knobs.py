"""The knobs of the bit-width search: a Conv/Dense layer's weight width or a calibrated tensor's
activation width. An assignment gives every knob a width; from it come the BitConfig to lower with and,
without lowering, the hardware cost."""
from __future__ import annotations

from dataclasses import dataclass

from ..ir import Graph
from .cost import Cost, layer_macs
from .lower import BitConfig, Lowered

MIN_BITS, MAX_BITS = 2, 8


@dataclass(frozen=True)
class Knob:
    kind: str  # "weight" (a layer) or "act" (a tensor)
    name: str


def bit_config(assignment: dict[Knob, int]) -> BitConfig:
    """The BitConfig that lists every knob of `assignment` explicitly, with MAX_BITS as the default."""
    return BitConfig(
        weight_bits=MAX_BITS, act_bits=MAX_BITS,
        layer_weight_bits={k.name: b for k, b in assignment.items() if k.kind == "weight"},
        tensor_act_bits={k.name: b for k, b in assignment.items() if k.kind == "act"},
    )


class AssignmentCost:
    """hardware_cost from an assignment without lowering: which knobs set each layer's operand widths."""

    def __init__(self, float_graph: Graph, lowered: Lowered, knobs: list[Knob]):
        macs = layer_macs(float_graph)
        act_knobs = {k.name: k for k in knobs if k.kind == "act"}
        weight_knobs = {k.name: k for k in knobs if k.kind == "weight"}
        self.layers = []  # (weight count, MACs, weight knob or fixed bits, input knob or fixed bits)
        for layer in lowered.layers:
            x = lowered.graph.nodes[layer.name].inputs[0]
            source = quant_source(float_graph, lowered, x)
            w = weight_knobs.get(layer.name, layer.weight_bits)
            fixed = lowered.graph.quant[x].bits  # a pre-quantized input keeps its width
            a = act_knobs.get(source, fixed) if source is not None else fixed
            self.layers.append((layer.weight_count, macs.get(layer.name, 0), w, a))

    def __call__(self, assignment: dict[Knob, int]) -> Cost:
        def bits(knob):
            return assignment[knob] if isinstance(knob, Knob) else knob

        storage = sum(count * bits(w) for count, _, w, _ in self.layers)
        mac_cost = sum(m * bits(w) * bits(a) / 64 for _, m, w, a in self.layers)
        return Cost(int(storage), float(mac_cost))


def quant_source(float_graph: Graph, lowered: Lowered, tensor: str) -> str | None:
    """The calibrated tensor whose quantization `tensor` shares (pools, reshapes, clamps pass it on)."""
    seen = set()
    while tensor not in lowered.ranges:
        producer = float_graph.producer(tensor)
        if producer is None or tensor in seen or not producer.inputs:
            return None
        seen.add(tensor)
        source = producer.inputs[0]
        if lowered.graph.quant.get(source) != lowered.graph.quant.get(tensor):
            return None
        tensor = source
    return tensor
