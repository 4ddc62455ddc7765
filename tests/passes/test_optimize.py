import numpy as np
from onnx import helper

from hlsgen.passes import OPTIMIZE, optimize
from hlsgen.reference import run_graph
from tests.passes.helpers import assert_same_outputs, onnx_graph, ops, random_feeds

RNG = np.random.default_rng(0)


def small_cnn():
    """Conv-BN-Relu-MaxPool, padded Conv + bias Add + Relu6, then Flatten-Gemm-Relu-Dropout-MatMul+Add."""
    inits = {
        "w1": RNG.standard_normal((4, 1, 3, 3)),
        "gamma": RNG.uniform(0.5, 1.5, 4),
        "beta": RNG.standard_normal(4),
        "mean": RNG.standard_normal(4),
        "var": RNG.uniform(0.5, 2.0, 4),
        "pads": np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64),
        "w2": RNG.standard_normal((4, 4, 3, 3)),
        "b2": RNG.standard_normal((1, 4, 1, 1)),
        "six": np.float32(6.0),
        "zero": np.float32(0.0),
        "w3": RNG.standard_normal((6, 64)),
        "b3": RNG.standard_normal(6),
        "w4": RNG.standard_normal((6, 3)),
        "b4": RNG.standard_normal(3),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "gamma", "beta", "mean", "var"], ["n1"]),
        helper.make_node("Relu", ["n1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Pad", ["p1", "pads", "zero"], ["padded"]),
        helper.make_node("Conv", ["padded", "w2"], ["c2"], name="conv2"),
        helper.make_node("Add", ["c2", "b2"], ["a2"]),
        helper.make_node("Clip", ["a2", "zero", "six"], ["r2"]),
        helper.make_node("Flatten", ["r2"], ["f"]),
        helper.make_node("Gemm", ["f", "w3", "b3"], ["g"], name="fc1", transB=1),
        helper.make_node("Relu", ["g"], ["r3"]),
        helper.make_node("Dropout", ["r3"], ["d"]),
        helper.make_node("MatMul", ["d", "w4"], ["m"], name="fc2"),
        helper.make_node("Add", ["m", "b4"], ["y"]),
    ]
    return onnx_graph(nodes, {"x": (1, 1, 8, 8)}, ["y"], inits)


def test_small_cnn_fuses_to_conv_pool_conv_dense_dense():
    graph = small_cnn()
    feeds = random_feeds(graph)
    expected = run_graph(graph, feeds)
    log = optimize(graph, verify_each=True)
    assert [(n.name, n.op) for n in graph.topological()] == [
        ("conv1", "Conv"),
        ("pool1", "MaxPool"),
        ("conv2", "Conv"),
        ("fc1", "Dense"),
        ("fc2", "Dense"),
    ]
    assert [str(graph.nodes[n].attrs.activation) for n in ("conv1", "conv2", "fc1")] == ["relu", "relu6", "relu"]
    assert graph.nodes["fc2"].attrs.activation is None
    assert graph.nodes["conv2"].attrs.pads == (1, 1, 1, 1)
    assert graph.outputs == ["y"]
    assert_same_outputs(expected, run_graph(graph, feeds), rtol=1e-5)
    fired = {name for name, count in log.fired.items() if count}
    assert fired == {
        "remove_identities",
        "cancel_transposes_reshapes",
        "fuse_dense",
        "fuse_bias",
        "fold_batchnorm",
        "fold_pad",
        "fuse_activation",
    }


def test_optimize_reaches_a_fixpoint():
    graph = small_cnn()
    optimize(graph)
    again = optimize(graph)
    assert not any(again.fired.values())
    assert again.rounds == 1


def test_standalone_activation_runs_after_the_pool():
    # A residual Add leaves the Relu standalone; it then moves behind the MaxPool.
    graph = onnx_graph(
        [
            helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
            helper.make_node("Add", ["c", "x"], ["s"]),
            helper.make_node("Relu", ["s"], ["r"]),
            helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2]),
        ],
        {"x": (1, 2, 4, 4)},
        ["y"],
        {"w": RNG.standard_normal((2, 2, 3, 3))},
    )
    optimize(graph, verify_each=True)
    assert ops(graph) == ["Conv", "Add", "MaxPool", "Relu"]


def test_pipeline_passes_are_named_and_documented():
    names = [p.name for p in OPTIMIZE]
    assert len(names) == len(set(names))  # the pass log is keyed by name
    assert all(p.doc and p.doc.endswith(".") for p in OPTIMIZE)
