from dataclasses import replace

import numpy as np
import pytest
from onnx import helper

from hlsgen.ops.common import Activation
from hlsgen.passes import fold_batchnorm, fuse_bias, fuse_dense, optimize
from hlsgen.quant.params import WeightQuant
from hlsgen.reference import run_graph
from tests.passes.helpers import apply_pass, assert_same_outputs, onnx_graph, ops, random_feeds

RNG = np.random.default_rng(0)
BN_PARAMS = {
    "gamma": RNG.standard_normal(3),
    "beta": RNG.standard_normal(3),
    "mean": RNG.standard_normal(3),
    "var": RNG.uniform(0.5, 2.0, 3),
}
BN_INPUTS = ["gamma", "beta", "mean", "var"]


def conv_bn(conv_inputs=("x", "w", "b"), extra_nodes=(), outputs=("y",)):
    return onnx_graph(
        [
            helper.make_node("Conv", list(conv_inputs), ["c"], name="conv", pads=[1, 1, 1, 1]),
            helper.make_node("BatchNormalization", ["c", *BN_INPUTS], ["y"], name="bn", epsilon=1e-3),
            *extra_nodes,
        ],
        {"x": (1, 2, 5, 5)},
        list(outputs),
        {"w": RNG.standard_normal((3, 2, 3, 3)), "b": RNG.standard_normal(3), **BN_PARAMS},
    )


def test_folds_into_the_conv_before_it():
    graph = conv_bn()
    assert apply_pass(graph, fold_batchnorm)
    assert [(n.name, n.op) for n in graph.topological()] == [("conv", "Conv")]
    assert graph.nodes["conv"].outputs == ("y",)


def test_folds_into_a_conv_without_bias():
    graph = conv_bn(conv_inputs=("x", "w"))
    assert apply_pass(graph, fold_batchnorm)
    assert ops(graph) == ["Conv"]
    assert len(graph.nodes["conv"].inputs) == 3


def test_folds_into_dense():
    graph = onnx_graph(
        [
            helper.make_node("Gemm", ["x", "w", "b"], ["d"], name="fc"),
            helper.make_node("BatchNormalization", ["d", *BN_INPUTS], ["y"]),
        ],
        {"x": (2, 4)},
        ["y"],
        {"w": RNG.standard_normal((4, 3)), "b": RNG.standard_normal(3), **BN_PARAMS},
    )
    assert apply_pass(graph, fuse_dense)
    assert apply_pass(graph, fold_batchnorm)
    assert ops(graph) == ["Dense"]


@pytest.mark.parametrize("form", ["gemm_trans_b", "matmul_add"])
def test_an_mlp_layer_becomes_one_dense_with_its_relu(form):
    """PyTorch's Linear (Gemm, weights [out, in], transB=1) and Keras' Dense (MatMul + Add), each followed by
    BatchNormalization and Relu as in the anomaly-detection autoencoder: the optimizer leaves one Dense."""
    w, b = RNG.standard_normal((3, 4)), RNG.standard_normal(3)
    if form == "gemm_trans_b":
        layer = [helper.make_node("Gemm", ["x", "w", "b"], ["d"], name="fc", transB=1)]
    else:
        w = w.T
        layer = [helper.make_node("MatMul", ["x", "w"], ["m"], name="fc"), helper.make_node("Add", ["m", "b"], ["d"])]
    graph = onnx_graph(
        [*layer, helper.make_node("BatchNormalization", ["d", *BN_INPUTS], ["n"]), helper.make_node("Relu", ["n"], ["y"])],
        {"x": (2, 4)},
        ["y"],
        {"w": w, "b": b, **BN_PARAMS},
    )
    feeds = random_feeds(graph)
    before = run_graph(graph, feeds)
    optimize(graph, verify_each=True)
    assert ops(graph) == ["Dense"] and graph.nodes["fc"].attrs.activation == Activation("relu")
    assert_same_outputs(before, run_graph(graph, feeds), 1e-5)


def test_conv_output_read_elsewhere_leaves_conv_alone_and_makes_a_channel_affine():
    graph = conv_bn(extra_nodes=[helper.make_node("Add", ["c", "y"], ["z"])], outputs=("z",))
    assert apply_pass(graph, fold_batchnorm)
    assert ops(graph) == ["Conv", "ChannelAffine", "Add"]
    assert graph.nodes["bn"].op == "ChannelAffine"


def test_conv_that_is_a_graph_output_is_not_folded_into():
    graph = conv_bn(outputs=("y", "c"))
    assert apply_pass(graph, fold_batchnorm)
    assert ops(graph) == ["Conv", "ChannelAffine"]


def test_conv_with_a_fused_activation_is_not_folded_into():
    graph = conv_bn()
    conv = graph.nodes["conv"]
    graph.replace_node("conv", conv.with_(attrs=replace(conv.attrs, activation=Activation("relu"))))
    assert apply_pass(graph, fold_batchnorm)
    assert ops(graph) == ["Conv", "ChannelAffine"]


def test_lone_batchnorm_becomes_channel_affine():
    graph = onnx_graph(
        [helper.make_node("BatchNormalization", ["x", *BN_INPUTS], ["y"])], {"x": (1, 3, 4, 4)}, ["y"], BN_PARAMS
    )
    assert apply_pass(graph, fold_batchnorm)
    assert ops(graph) == ["ChannelAffine"]
    assert not apply_pass(graph, fold_batchnorm)


def test_channel_affine_folds_once_the_conv_becomes_foldable():
    # Conv -> Add -> BN: the BN first becomes a ChannelAffine, the Add becomes the Conv's bias,
    # and then the ChannelAffine folds into the Conv.
    graph = onnx_graph(
        [
            helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
            helper.make_node("Add", ["c", "shift"], ["s"]),
            helper.make_node("BatchNormalization", ["s", *BN_INPUTS], ["y"]),
        ],
        {"x": (1, 2, 5, 5)},
        ["y"],
        {"w": RNG.standard_normal((3, 2, 3, 3)), "shift": np.full((3, 1, 1), 0.5), **BN_PARAMS},
    )
    assert apply_pass(graph, fold_batchnorm)
    assert ops(graph) == ["Conv", "Add", "ChannelAffine"]
    assert apply_pass(graph, fuse_bias)
    assert apply_pass(graph, fold_batchnorm)
    assert ops(graph) == ["Conv"]


def test_batchnorm_with_computed_parameters_is_left_alone():
    graph = onnx_graph(
        [helper.make_node("BatchNormalization", ["x", "gamma_in", "beta", "mean", "var"], ["y"])],
        {"x": (1, 3, 4, 4), "gamma_in": (3,)},
        ["y"],
        {k: v for k, v in BN_PARAMS.items() if k != "gamma"},
    )
    assert not apply_pass(graph, fold_batchnorm)


def test_folding_keeps_a_pre_quantized_weights_integers():
    """Annotated 3-bit weights (as a QONNX model's) stay 3-bit: a negative gamma flips its channel's signs and
    |gamma / sigma| scales its scale, so integers times scales still equal the folded float weights."""
    ints = RNG.integers(-3, 4, (3, 2, 3, 3))
    scales = np.array([0.1, 0.2, 0.05])
    graph = conv_bn()
    graph.constants["w"] = (ints * scales[:, None, None, None]).astype(np.float32)
    graph.quant["w"] = (ints, WeightQuant(tuple(scales), 3))
    assert apply_pass(graph, fold_batchnorm)
    (conv,) = graph.nodes.values()
    folded_ints, wq = graph.quant[conv.inputs[1]]
    factor = BN_PARAMS["gamma"] / np.sqrt(BN_PARAMS["var"] + 1e-3)
    assert np.any(factor < 0) and np.any(factor > 0)
    assert wq.bits == 3 and np.allclose(wq.scales, scales * np.abs(factor))
    np.testing.assert_array_equal(folded_ints, ints * np.sign(factor)[:, None, None, None])
    np.testing.assert_allclose(folded_ints * np.asarray(wq.scales)[:, None, None, None], graph.constants[conv.inputs[1]],
                               rtol=1e-6)
