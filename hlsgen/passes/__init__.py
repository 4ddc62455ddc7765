"""The graph optimization passes and the default pipeline, `OPTIMIZE`."""
from __future__ import annotations

from ..ir import Graph
from .activation import fuse_activation
from .affine import constant_arithmetic_as_affine
from .batchnorm import fold_batchnorm
from .bias import fuse_bias
from .channel_gather import channel_moves_as_gathers, fold_channel_gathers
from .constants import fold_constants
from .conv_transpose import channelwise_before_interleave, decompose_conv_transpose
from .cse import eliminate_common_subexpressions
from .dead_code import eliminate_dead_nodes
from .dense import fuse_dense
from .dynamic_quant import fold_dynamic_quantization
from .gated import fuse_gated_activations
from .global_pool import globalize_pools
from .identities import remove_identities
from .linear_resize import linear_resize_as_conv
from .layout import activation_before_flatten, cancel_transposes_reshapes, fold_transpose_into_dense, reshape_graph_inputs
from .maxpool_order import move_maxpool_before_activation
from .pad import fold_pad
from .pipeline import Pass, PassLog, graph_pass, run_pipeline
from .prelu import prelu_as_relus
from .space_to_depth import (activation_before_depth_to_space, depth_to_space_as_phases, merge_slices,
                             space_to_depth_into_conv)

# Cleanup first, so the fusions see plain Conv/Gemm/... chains; the pipeline repeats the list until
# nothing changes, so a rewrite that enables an earlier pass is picked up in the next round.
OPTIMIZE: list[Pass] = [
    # onnxruntime's dynamic quantization back to float layers on its integer weights
    fold_dynamic_quantization,
    # simplify
    fold_constants,
    remove_identities,
    # channel shuffles and channel halves as Gathers of channels, into the next dense layer's weights
    channel_moves_as_gathers,
    fold_channel_gathers,
    cancel_transposes_reshapes,
    activation_before_flatten,
    reshape_graph_inputs,
    eliminate_common_subexpressions,
    eliminate_dead_nodes,
    globalize_pools,
    # transposed convolutions as one Conv per stride phase
    decompose_conv_transpose,
    # linear upsampling as a nearest one and a depthwise Conv
    linear_resize_as_conv,
    # pixel blocks and channels traded around a Conv: its phases, or a strided Conv over the pixels
    activation_before_depth_to_space,
    depth_to_space_as_phases,
    merge_slices,
    space_to_depth_into_conv,
    channelwise_before_interleave,
    # exporters' elementwise products back to one activation (before Div/Mul by constants become affine)
    fuse_gated_activations,
    # fuse into Conv / Dense: weights and bias first, then what comes after them
    fuse_dense,
    fold_transpose_into_dense,
    prelu_as_relus,
    fuse_bias,
    constant_arithmetic_as_affine,
    fold_batchnorm,
    fold_pad,
    fuse_activation,
    # reorder what could not be fused
    move_maxpool_before_activation,
]


def optimize(graph: Graph, verify_each: bool = False) -> PassLog:
    """Run the `OPTIMIZE` pipeline on `graph` in place until it reaches a fixpoint."""
    return run_pipeline(graph, OPTIMIZE, verify_each=verify_each)


__all__ = [
    "OPTIMIZE",
    "Pass",
    "PassLog",
    "activation_before_depth_to_space",
    "activation_before_flatten",
    "cancel_transposes_reshapes",
    "channel_moves_as_gathers",
    "channelwise_before_interleave",
    "constant_arithmetic_as_affine",
    "decompose_conv_transpose",
    "linear_resize_as_conv",
    "depth_to_space_as_phases",
    "eliminate_common_subexpressions",
    "eliminate_dead_nodes",
    "fold_batchnorm",
    "fold_channel_gathers",
    "fold_constants",
    "fold_dynamic_quantization",
    "fold_pad",
    "fold_transpose_into_dense",
    "fuse_activation",
    "fuse_bias",
    "fuse_dense",
    "fuse_gated_activations",
    "globalize_pools",
    "graph_pass",
    "merge_slices",
    "move_maxpool_before_activation",
    "optimize",
    "prelu_as_relus",
    "remove_identities",
    "reshape_graph_inputs",
    "space_to_depth_into_conv",
]
