"""Transpose and Reshape simplification."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..ir import Graph, Node
from ..ops.shape import ReshapeAttrs
from .pipeline import graph_pass
from .rewrite import bypass, is_graph_output, remove_if_unused, sole_consumer


@graph_pass
def cancel_transposes_reshapes(graph: Graph) -> bool:
    """Compose back-to-back Transposes and Reshapes; drop a flattening Reshape that only feeds Dense."""
    changed = False
    for name in [n.name for n in graph.topological()]:
        # Re-read the node: composing an earlier pair may have rewired or removed it.
        node = graph.nodes.get(name)
        if node is None:
            continue
        if node.op == "Transpose":
            changed |= _compose_transposes(graph, node) or _unit_axes_transpose_as_reshape(graph, node)
        elif node.op == "Reshape":
            changed |= _compose_reshapes(graph, node) or _drop_flatten_before_dense(graph, node)
    return changed


# activations that map every element alone, with no per-channel parameter: they commute with a Reshape
ELEMENTWISE_ACTIVATIONS = ("Relu", "Clip", "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Elu", "Selu", "Tanh",
                           "Softplus", "Softsign", "Erf", "SiLU", "Mish", "Gelu")


@graph_pass
def activation_before_flatten(graph: Graph) -> bool:
    """Move an elementwise activation that reads a Reshape before the Reshape.

    The accelerator keeps a map's layout through a Reshape (a Dense reads the map as it is), so the
    activation then runs on the map, and a Flatten -> activation -> Dense chain leaves the Reshape where the
    Dense absorbs it. A Reshape whose output carries its own quantization (a requantization) stays."""
    changed = False
    for name in list(graph.nodes):
        node = graph.nodes.get(name)
        if node is None or node.op not in ELEMENTWISE_ACTIVATIONS:
            continue
        reshape = graph.producer(node.inputs[0])
        if reshape is None or reshape.op != "Reshape" or sole_consumer(graph, reshape.outputs[0]) is not node:
            continue
        source, flat, out = reshape.inputs[0], reshape.outputs[0], node.outputs[0]
        if is_graph_output(graph, flat) or graph.quant.get(flat) != graph.quant.get(source):
            continue
        mapped = graph.fresh_name(f"{out}_map")
        graph.tensors[mapped] = replace(graph.tensors[out], name=mapped, shape=graph.shape(source))
        if out in graph.quant:
            graph.quant[mapped] = graph.quant[out]
        graph.remove_node(node.name)
        graph.replace_node(reshape.name, node.with_(inputs=(source,) + node.inputs[1:], outputs=(mapped,)))
        graph.add_node(reshape.with_(inputs=(mapped,), outputs=(out,)))
        changed = True
    return changed


@graph_pass
def fold_transpose_into_dense(graph: Graph) -> bool:
    """Fold a Transpose before a flattening Reshape into the rows of the Dense layers reading it.

    A channels-last export flattens its map in NHWC order; permuting the Dense's weight rows lets the Dense
    read the NCHW map as it is (the batch axis must stay first).
    """
    changed = False
    for node in list(graph.nodes.values()):
        if node.op == "Reshape" and node.name in graph.nodes:
            changed |= _fold_into_dense(graph, node)
    return changed


def _fold_into_dense(graph: Graph, reshape: Node) -> bool:
    transpose = graph.producer(reshape.inputs[0])
    flat = reshape.outputs[0]
    if transpose is None or transpose.op != "Transpose" or transpose.attrs.perm[0] != 0:
        return False
    if sole_consumer(graph, transpose.outputs[0]) is None or is_graph_output(graph, flat):
        return False
    source = transpose.inputs[0]
    size = graph.tensors[source].size // graph.shape(source)[0]
    readers = graph.consumers(flat)
    if graph.shape(flat) != (graph.shape(source)[0], size) or not readers or any(
            r.op != "Dense" or r.inputs[0] != flat or r.inputs[1] not in graph.constants for r in readers):
        return False
    # Row j of the flattened transposed map is element rows[j] of the flattened source map.
    positions = np.arange(size).reshape(graph.shape(source)[1:])
    rows = np.transpose(positions, [a - 1 for a in transpose.attrs.perm[1:]]).ravel()
    for reader in readers:
        weight = graph.constants[reader.inputs[1]]
        permuted = np.empty_like(weight)
        permuted[rows] = weight
        name = graph.add_constant(graph.fresh_name(f"{reader.name}_weight"), permuted)
        kept = graph.quant.get(reader.inputs[1])
        if isinstance(kept, tuple):  # a pre-quantized weight keeps its integers, rows permuted alike
            ints = np.empty_like(kept[0])
            ints[rows] = kept[0]
            graph.quant[name] = (ints, kept[1])
        graph.replace_node(reader.name, reader.with_(inputs=(flat, name) + reader.inputs[2:]))
    graph.replace_node(reshape.name, reshape.with_(inputs=(source,)))
    remove_if_unused(graph, transpose)
    return True


def _unit_axes_transpose_as_reshape(graph: Graph, node: Node) -> bool:
    """A Transpose that only moves axes of size 1 keeps the element order: it is a Reshape (e.g. NHWC -> NCHW
    of a one-channel image)."""
    shape = graph.shape(node.inputs[0])
    moved = [axis for axis in node.attrs.perm if shape[axis] != 1]
    if moved != sorted(moved):
        return False
    reshape = Node(node.name, "Reshape", node.inputs[:1], node.outputs, ReshapeAttrs(graph.shape(node.outputs[0])))
    graph.replace_node(node.name, reshape)
    return True


@graph_pass
def reshape_graph_inputs(graph: Graph) -> bool:
    """Give a graph input that only a Reshape reads the reshaped shape.

    The npz convention accepts arrays of the model's own input shape too (`Graph.input_shapes`), so the
    user's data stays as it was.
    """
    changed = False
    for name in list(graph.inputs):
        reader = sole_consumer(graph, name)
        if reader is None or reader.op != "Reshape" or is_graph_output(graph, reader.outputs[0]):
            continue
        graph.input_shapes.setdefault(name, graph.shape(name))
        graph.tensors[name] = replace(graph.tensors[name], shape=graph.shape(reader.outputs[0]))
        graph.remove_node(reader.name)
        graph.rename_tensor(reader.outputs[0], name)
        changed = True
    return changed


def _compose_transposes(graph: Graph, second: Node) -> bool:
    first = graph.producer(second.inputs[0])
    if first is None or first.op != "Transpose":
        return False
    # Output axis i is axis second.perm[i] of the middle tensor, which is input axis first.perm[second.perm[i]].
    perm = tuple(first.attrs.perm[i] for i in second.attrs.perm)
    composed = second.with_(inputs=first.inputs[:1], attrs=replace(second.attrs, perm=perm))
    graph.replace_node(second.name, composed)
    remove_if_unused(graph, first)
    if perm == tuple(range(len(perm))):
        bypass(graph, composed)
    return True


def _compose_reshapes(graph: Graph, second: Node) -> bool:
    first = graph.producer(second.inputs[0])
    if first is None or first.op != "Reshape":
        return False
    # A Reshape's target shape is static, so only the input it reads changes.
    composed = second.with_(inputs=first.inputs[:1])
    graph.replace_node(second.name, composed)
    remove_if_unused(graph, first)
    if graph.shape(composed.inputs[0]) == graph.shape(composed.outputs[0]):
        bypass(graph, composed)
    return True


def _drop_flatten_before_dense(graph: Graph, reshape: Node) -> bool:
    """[N, ...] -> [N, prod(...)] in front of Dense nodes only: Dense flattens its input itself."""
    source, flat = reshape.inputs[0], reshape.outputs[0]
    in_shape, out_shape = graph.shape(source), graph.shape(flat)
    if len(in_shape) < 3 or out_shape != (in_shape[0], graph.tensors[source].size // in_shape[0]):
        return False
    readers = graph.consumers(flat)
    if is_graph_output(graph, flat) or not readers:
        return False
    if any(r.op != "Dense" or r.inputs[0] != flat or flat in r.inputs[1:] for r in readers):
        return False
    for r in readers:
        graph.replace_node(r.name, r.with_(inputs=(source,) + r.inputs[1:]))
    graph.remove_node(reshape.name)
    return True
