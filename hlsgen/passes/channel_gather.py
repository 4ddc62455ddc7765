"""Channels picked and reordered, at no cost where a reader can take them: ShuffleNet's channel shuffle
(`Reshape -> Transpose -> Reshape` on channel groups) and the halves its blocks split off (Split, Slice or
Gather on the channels) become one `Gather` of channels, which the next dense convolution takes into its
weights (input channel j of the Gather's reader reads channel `indices[j]` of the Gather's input), and a
channel permutation moves past the channelwise layers before it reaches one. A Gather no reader takes is
a 1x1 convolution of 0/1 weights on the accelerator (hlsgen.quant.lower: an exact copy of the channels)."""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ..ir import Graph, Node
from ..ops.registry import evaluate
from ..ops.shape import GatherAttrs
from .pipeline import graph_pass
from .rewrite import bypass, optional_input, sole_consumer
from .space_to_depth import UNARY

MOVES = ("Reshape", "Transpose", "Slice", "Gather")
# channelwise layers of one map that a channel permutation passes unchanged (besides UNARY and depthwise Convs)
CHANNELWISE = UNARY + ("MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool")


@graph_pass
def channel_moves_as_gathers(graph: Graph) -> bool:
    """One Gather of channels for a chain of moves that only picks channels.

    The chain: Reshape/Transpose/Slice/Gather nodes from a map to a map of the same pixels, traced on the
    element indices, so any exporter's form of a channel shuffle or of a chunk's halves."""
    changed = False
    for node in [n for n in graph.topological() if n.op in MOVES]:
        if node.name not in graph.nodes or not graph.consumers(node.outputs[0]) or node.outputs[0] in graph.outputs:
            continue
        chain, source = _chain(graph, node)
        indices = _picked_channels(graph, chain, source)
        gather = Node(node.name, "Gather", (source,), node.outputs, GatherAttrs(1, indices))
        if indices is None or gather == node:
            continue
        graph.replace_node(node.name, gather)
        changed = True
    return changed


def _chain(graph: Graph, node: Node) -> tuple[list[Node], str]:
    """The data-movement nodes from the first map that is not a move's output up to `node`, and that map."""
    chain = [node]
    while (producer := graph.producer(chain[0].inputs[0])) is not None and producer.op in MOVES:
        chain.insert(0, producer)
    return chain, chain[0].inputs[0]


def _picked_channels(graph: Graph, chain: list[Node], source: str) -> tuple[int, ...] | None:
    """The channels of `source` the chain's output reads, in order, when it reads nothing else (every pixel
    of every image where it was); None otherwise."""
    xs, ys = graph.shape(source), graph.shape(chain[-1].outputs[0])
    if graph.is_constant(source) or len(xs) < 2 or len(xs) != len(ys) or xs[0] != ys[0] or xs[2:] != ys[2:]:
        return None
    index = np.arange(math.prod(xs), dtype=np.int64).reshape(xs)
    moved = index
    for node in chain:
        moved = evaluate(node, [moved])[0]
    pixels = math.prod(xs[2:])
    picked = (moved[(0, slice(None)) + (0,) * (len(xs) - 2)] // pixels) % xs[1]
    if not np.array_equal(moved, np.take(index, picked, axis=1)):
        return None
    return tuple(int(c) for c in picked)


@graph_pass
def fold_channel_gathers(graph: Graph) -> bool:
    """Take a Gather of channels into its readers.

    A permutation that is the identity goes (a Gather of a Gather is one by channel_moves_as_gathers), a
    dense Conv or a Dense takes it into its weights, and a permutation moves past the channelwise layer that alone reads it (its
    per-channel weights permuted)."""
    changed = False
    for node in [n for n in graph.topological() if n.op == "Gather" and n.attrs.axis == 1]:
        if node.name not in graph.nodes:
            continue
        x, y, indices = node.inputs[0], node.outputs[0], node.attrs.indices
        if indices == tuple(range(graph.shape(x)[1])) and bypass(graph, node):
            changed = True
            continue
        for reader in graph.consumers(y):
            changed |= _into_weights(graph, node, reader)
        reader = sole_consumer(graph, y)
        if reader is not None and _is_permutation(graph, node):
            changed |= _past_channelwise(graph, node, reader)
    return changed


def _is_permutation(graph: Graph, node: Node) -> bool:
    return sorted(node.attrs.indices) == list(range(graph.shape(node.inputs[0])[1]))


def _into_weights(graph: Graph, gather: Node, reader: Node) -> bool:
    """A dense Conv or a Dense reading the Gather reads its input, the Gather's picks in its weights. Picking
    fewer channels than the input has makes the reader multiply zeros: taken only when that costs fewer
    multiply-accumulates than copying the picked channels (a 1x1 Conv of as many outputs as picks)."""
    x, indices = gather.inputs[0], np.asarray(gather.attrs.indices)
    if reader.inputs[0] != gather.outputs[0] or gather.outputs[0] in reader.inputs[1:]:
        return False
    if reader.op == "Conv" and reader.attrs.group == 1:
        axis = 1
    elif reader.op == "Dense" and len(graph.shape(x)) == 2:
        axis = 0
    else:
        return False
    weight, bias = reader.inputs[1], optional_input(reader, 2)
    if not graph.is_constant(weight):
        return False
    w = graph.constants[weight]
    channels = graph.shape(x)[1]
    outputs, taps = (w.shape[0], math.prod(w.shape[2:])) if axis == 1 else (w.shape[1], 1)
    if (channels - len(indices)) * outputs * taps > channels * len(indices):
        return False
    kept = graph.quant.get(weight)
    if isinstance(kept, tuple) and len(set(indices.tolist())) < len(indices):
        return False  # a pre-quantized weight's integers would add up
    moved = np.zeros(w.shape[:axis] + (channels,) + w.shape[axis + 1:], w.dtype)
    np.add.at(np.moveaxis(moved, axis, 0), indices, np.moveaxis(w, axis, 0))
    name = graph.add_constant(graph.fresh_name(f"{weight}_gathered"), moved)
    if isinstance(kept, tuple):
        ints = np.zeros(moved.shape, np.int64)
        np.moveaxis(ints, axis, 0)[indices] = np.moveaxis(kept[0], axis, 0)
        graph.quant[name] = (ints, kept[1])
    graph.replace_node(reader.name, reader.with_(inputs=(x, name, *([bias] if bias else []))))
    return True


def _past_channelwise(graph: Graph, gather: Node, reader: Node) -> bool:
    """A channelwise layer (an activation, a pool, a depthwise Conv) reading a permutation of channels runs
    on the channels in their stored order, its per-channel weights moved with them; the permutation after it."""
    if reader.op == "Conv":
        depthwise = reader.attrs.group == graph.shape(gather.inputs[0])[1] == graph.shape(reader.outputs[0])[1]
        if not depthwise or any(t and not graph.is_constant(t) for t in reader.inputs[1:]) \
                or any(isinstance(graph.quant.get(t), tuple) for t in reader.inputs[1:]):
            return False
    elif reader.op not in CHANNELWISE or any(t and not graph.is_constant(t) for t in reader.inputs[1:]):
        return False
    inverse = np.argsort(gather.attrs.indices)
    inputs = [gather.inputs[0]]
    for t in reader.inputs[1:]:
        if reader.op == "Conv" and t:
            inputs.append(graph.add_constant(graph.fresh_name(f"{t}_permuted"), graph.constants[t][inverse]))
        else:
            inputs.append(t)
    y = reader.outputs[0]
    stored = graph.fresh_name(f"{y}_stored")
    graph.tensors[stored] = replace(graph.tensors[y], name=stored)
    graph.replace_node(reader.name, reader.with_(inputs=tuple(inputs), outputs=(stored,)))
    graph.replace_node(gather.name, gather.with_(inputs=(stored,), outputs=(y,)))
    return True
