"""The hardware cost that `--bits auto` minimizes: two figures for an integer model, both in bits.

    weight_storage_bits = sum over Conv/Dense layers of  weight_count * weight_bits
    mac_cost            = sum over Conv/Dense layers of  MACs * weight_bits * input_bits / 64

`MACs` are the multiply-accumulates of one inference (`hlsgen.analysis.graph_costs`; a ChannelAffine
lowered to a depthwise 1x1 QConv counts one per output element) and `input_bits` is the width of the
layer's input tensor. A multiplier's area grows with the product of its operand widths, so the MAC
term is normalised to read "MACs" for an 8x8-bit layer (8 * 8 / 64 = 1). `total` is their sum.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..analysis import graph_costs
from ..ir import Graph
from .lower import Lowered


@dataclass(frozen=True)
class Cost:
    weight_storage_bits: int
    mac_cost: float  # sum of MACs * weight_bits * input_bits / 64

    @property
    def total(self) -> float:
        return self.weight_storage_bits + self.mac_cost

    def to_json(self) -> dict:
        return {"weight_storage_bits": self.weight_storage_bits, "mac_cost": self.mac_cost, "total": self.total}


def hardware_cost(lowered: Lowered, float_graph: Graph) -> Cost:
    """The weight storage and the width-weighted MAC cost of an integer model (formulas: module docstring)."""
    macs = layer_macs(float_graph)
    storage, mac_cost = 0, 0.0
    for layer in lowered.layers:
        node = lowered.graph.nodes[layer.name]
        input_bits = lowered.graph.quant[node.inputs[0]].bits
        storage += layer.weight_count * layer.weight_bits
        mac_cost += macs.get(layer.name, 0) * layer.weight_bits * input_bits / 64
    return Cost(int(storage), float(mac_cost))


def layer_macs(float_graph: Graph) -> dict[str, int]:
    """The MACs of one inference for every Conv/Dense layer, and for every ChannelAffine."""
    macs = {c.name: c.macs for c in graph_costs(float_graph)}
    for node in float_graph.nodes.values():
        if node.op == "ChannelAffine":  # becomes a depthwise 1x1 convolution: one MAC per output element
            macs[node.name] = int(np.prod(float_graph.shape(node.outputs[0]), dtype=np.int64))
    return macs
