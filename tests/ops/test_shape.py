import numpy as np
import pytest
from onnx import TensorProto, helper

from hlsgen.errors import UnsupportedOpsError
from hlsgen.frontend import import_model
from tests.builders import assert_close_to_ort, make_model, tensor_value


def _model(node, shape, inits=None, opset=17, dtype=TensorProto.FLOAT):
    outputs = [tensor_value(o, None) for o in node.output if o]
    return make_model([node], [tensor_value("x", shape, dtype)], outputs, inits, opset=opset)


def _ops(graph):
    return [n.op for n in graph.nodes.values()]


# ---- Reshape and the ops imported as Reshape --------------------------------------------------
@pytest.mark.parametrize(
    "target, allowzero",
    [([4, 6], 0), ([-1], 0), ([0, -1], 0), ([2, 0, 2, -1], 0), ([-1, 3, 2], 1), ([4, 3, 2], 1), ([0, 3, 4], 0)],
)
def test_reshape_matches_onnxruntime(target, allowzero):
    node = helper.make_node("Reshape", ["x", "shape"], ["y"], allowzero=allowzero)
    graph = assert_close_to_ort(_model(node, [2, 3, 4], {"shape": np.array(target, np.int64)}))
    assert _ops(graph) == ["Reshape"] and -1 not in graph.nodes["Reshape_y"].attrs.shape


def test_reshape_allowzero_keeps_a_literal_zero():
    # An input can never be empty (the batch is pinned to 1), so reshape an empty constant.
    node = helper.make_node("Reshape", ["c", "shape"], ["y"], allowzero=1)
    inits = {"c": np.zeros((0, 3), np.float32), "shape": np.array([3, 0], np.int64)}
    graph = assert_close_to_ort(make_model([node], [], [tensor_value("y", None)], inits), {})
    assert graph.nodes["Reshape_y"].attrs.shape == (3, 0)


@pytest.mark.parametrize("opset", [6, 13])
def test_reshape_opset6_and_a_constant_node_shape(opset):
    shape = helper.make_node("Constant", [], ["shape"], value=helper.make_tensor("v", TensorProto.INT64, [2], [1, -1]))
    node = helper.make_node("Reshape", ["x", "shape"], ["y"])
    model = make_model([shape, node], [tensor_value("x", [1, 3, 2, 2])], [tensor_value("y", None)], opset=opset)
    assert _ops(assert_close_to_ort(model)) == ["Reshape"]


@pytest.mark.parametrize(
    "axis, opset", [(a, o) for a in (0, 1, 2, 3, 4, None) for o in (9, 13)] + [(a, 13) for a in (-1, -2, -4)]
)
def test_flatten_matches_onnxruntime(axis, opset):
    attrs = {} if axis is None else {"axis": axis}
    node = helper.make_node("Flatten", ["x"], ["y"], **attrs)
    assert _ops(assert_close_to_ort(_model(node, [2, 3, 4, 5], opset=opset))) == ["Reshape"]


@pytest.mark.parametrize(
    "shape, axes", [([1, 3, 1, 5], None), ([1, 3, 1, 5], [0]), ([1, 3, 1, 5], [-2, 0]), ([3, 1], [1])]
)
@pytest.mark.parametrize("opset", [11, 13])
def test_squeeze_matches_onnxruntime(shape, axes, opset):
    if axes is None:
        model = _model(helper.make_node("Squeeze", ["x"], ["y"]), shape, opset=opset)
    elif opset >= 13:
        node = helper.make_node("Squeeze", ["x", "axes"], ["y"])
        model = _model(node, shape, {"axes": np.array(axes, np.int64)}, opset)
    else:
        model = _model(helper.make_node("Squeeze", ["x"], ["y"], axes=axes), shape, opset=opset)
    assert _ops(assert_close_to_ort(model)) == ["Reshape"]


@pytest.mark.parametrize("axes", [[0], [3], [-1], [2, 0], [-1, 2, -6], [5, 0, 3]])
@pytest.mark.parametrize("opset", [11, 13])
def test_unsqueeze_matches_onnxruntime(axes, opset):
    if opset >= 13:
        node = helper.make_node("Unsqueeze", ["x", "axes"], ["y"])
        model = _model(node, [3, 4, 5], {"axes": np.array(axes, np.int64)}, opset)
    else:
        model = _model(helper.make_node("Unsqueeze", ["x"], ["y"], axes=axes), [3, 4, 5], opset=opset)
    assert _ops(assert_close_to_ort(model)) == ["Reshape"]


@pytest.mark.parametrize(
    "node, shape",
    [
        (helper.make_node("Squeeze", ["x"], ["y"], name="sq", axes=[1]), [1, 3]),
        (helper.make_node("Reshape", ["x", "shape"], ["y"], name="sq"), [2, 3]),
    ],
)
def test_impossible_reshapes_are_rejected_naming_the_node(node, shape):
    inits = {"shape": np.array([4, -1, 2], np.int64)} if node.op_type == "Reshape" else None
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])]  # no valid shape exists
    model = make_model([node], [tensor_value("x", shape)], outputs, inits, opset=11)
    with pytest.raises(UnsupportedOpsError, match=rf"'sq' \({node.op_type}, opset 11\)"):
        import_model(model)


# ---- Transpose, Concat -------------------------------------------------------------------------
@pytest.mark.parametrize("perm", [None, [0, 1, 2], [2, 0, 1], [1, 2, 0], [0, 2, 1]])
def test_transpose_matches_onnxruntime(perm):
    attrs = {} if perm is None else {"perm": perm}
    graph = assert_close_to_ort(_model(helper.make_node("Transpose", ["x"], ["y"], **attrs), [2, 3, 4]))
    assert graph.nodes["Transpose_y"].attrs.perm == tuple(perm or (2, 1, 0))


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_concat_with_a_constant_matches_onnxruntime(axis):
    c = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    node = helper.make_node("Concat", ["x", "c", "x"], ["y"], axis=axis)
    graph = assert_close_to_ort(_model(node, [2, 3, 4], {"c": c}))
    assert graph.nodes["Concat_y"].attrs.axis == axis % 3


# ---- Pad ---------------------------------------------------------------------------------------
PADS = [0, 0, 1, 2, 0, 0, 2, 1]


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
@pytest.mark.parametrize("opset", [6, 10, 11, 13, 18])
def test_pad_matches_onnxruntime(mode, opset):
    if opset < 11:
        attrs = {"pads": PADS, "mode": mode} | ({"value": 1.5} if mode == "constant" else {})
        node = helper.make_node("Pad", ["x"], ["y"], **attrs)
        model = _model(node, [1, 2, 4, 5], opset=opset)
    else:
        inits = {"pads": np.array(PADS, np.int64)} | ({"v": np.float32(1.5)} if mode == "constant" else {})
        node = helper.make_node("Pad", ["x", "pads"] + (["v"] if mode == "constant" else []), ["y"], mode=mode)
        model = _model(node, [1, 2, 4, 5], inits, opset)
    assert_close_to_ort(model)


@pytest.mark.parametrize("axes", [[2, 3], [-1, -2], [3]])
def test_pad_axes_input_matches_onnxruntime(axes):
    pads = [1, 2, 3, 0][: 2 * len(axes)]
    inits = {"pads": np.array(pads, np.int64), "axes": np.array(axes, np.int64)}
    node = helper.make_node("Pad", ["x", "pads", "", "axes"], ["y"])
    assert_close_to_ort(_model(node, [1, 2, 4, 5], inits, 18))


def test_pad_without_constant_value_and_on_integers():
    x = np.arange(12, dtype=np.int32).reshape(1, 3, 4)
    node = helper.make_node("Pad", ["x", "pads"], ["y"])
    model = _model(node, [1, 3, 4], {"pads": np.array([0, 1, 1, 0, 2, 0], np.int64)}, 13, TensorProto.INT32)
    assert assert_close_to_ort(model, {"x": x}).tensors["y"].dtype == "int32"


@pytest.mark.parametrize(
    "pads, mode, why",
    [([0, 0, -1, 0, 0, 0, 0, 0], "constant", "negative pads"), ([0, 0, 1, 0, 0, 0, 0, 0], "wrap", "mode 'wrap'")],
)
def test_unsupported_pad_is_rejected_naming_the_node(pads, mode, why):
    node = helper.make_node("Pad", ["x", "pads"], ["y"], name="the_pad", mode=mode)
    model = _model(node, [1, 2, 4, 5], {"pads": np.array(pads, np.int64)}, 19)
    with pytest.raises(UnsupportedOpsError, match=rf"'the_pad' \(Pad, opset 19\): {why}"):
        import_model(model)


# ---- Identity, Dropout, Constant, Softmax ------------------------------------------------------
def test_identity_matches_onnxruntime():
    assert _ops(assert_close_to_ort(_model(helper.make_node("Identity", ["x"], ["y"]), [2, 3]))) == ["Identity"]


@pytest.mark.parametrize(
    "opset, ratio, training_mode",
    [(7, None, None), (10, None, None), (12, 0.3, None), (13, None, False), (13, 0.2, False)],
)
def test_dropout_is_the_identity_at_inference(opset, ratio, training_mode):
    inits = {"r": np.array(ratio, np.float32), "t": np.array(training_mode)}
    inputs = ["x", "r" if ratio is not None else "", "t" if training_mode is not None else ""]
    while not inputs[-1]:
        inputs.pop()
    inits = {k: v for k, v in inits.items() if k in inputs}
    node = helper.make_node("Dropout", inputs, ["y", "mask"])
    # The mask is no graph output here: onnxruntime fills it with zeros before opset 12.
    model = make_model([node], [tensor_value("x", [2, 3])], [tensor_value("y", None)], inits, opset=opset)
    graph = assert_close_to_ort(model)
    assert _ops(graph) == ["Dropout"]


def test_dropout_mask_is_all_true_at_inference():
    node = helper.make_node("Dropout", ["x"], ["y", "mask"])
    graph = assert_close_to_ort(_model(node, [2, 3], opset=13))
    assert graph.constants["mask"].all()


def test_training_mode_dropout_is_rejected_naming_the_node():
    node = helper.make_node("Dropout", ["x", "", "t"], ["y"], name="drop")
    model = _model(node, [2, 3], {"t": np.array(True)}, 13)
    with pytest.raises(UnsupportedOpsError, match=r"'drop' \(Dropout, opset 13\): training_mode"):
        import_model(model)


@pytest.mark.parametrize(
    "attrs",
    [
        {"value": helper.make_tensor("v", TensorProto.FLOAT, [3], [1.0, -2.0, 0.5])},
        {"value_float": 2.5},
        {"value_floats": [1.0, -2.0, 0.5]},
    ],
)
def test_constant_becomes_a_graph_constant(attrs):
    const = helper.make_node("Constant", [], ["c"], **attrs)
    add = helper.make_node("Add", ["x", "c"], ["y"])
    graph = assert_close_to_ort(make_model([const, add], [tensor_value("x", [2, 3])], [tensor_value("y", None)]))
    assert _ops(graph) == ["Add"] and graph.constants["c"].dtype == np.float32


@pytest.mark.parametrize("attrs", [{"value_int": 3}, {"value_ints": [2, 3, 4]}])
def test_integer_constants(attrs):
    const = helper.make_node("Constant", [], ["c"], **attrs)
    add = helper.make_node("Add", ["x", "c"], ["y"])
    inputs = [tensor_value("x", [2, 3], TensorProto.INT64)]
    model = make_model([const, add], inputs, [tensor_value("y", None)])
    graph = assert_close_to_ort(model, {"x": np.ones((2, 3), np.int64)})
    assert graph.constants["c"].dtype == np.int64


def test_string_constant_is_rejected_naming_the_node():
    const = helper.make_node("Constant", [], ["c"], name="words", value_string="hi")
    model = make_model([const], [], [helper.make_tensor_value_info("c", TensorProto.STRING, [])])
    with pytest.raises(UnsupportedOpsError, match=r"'words' \(Constant, opset 17\)"):
        import_model(model)


@pytest.mark.parametrize(
    "opset, axis, axes",
    [
        (11, None, (1, 2, 3)),
        (11, 2, (2, 3)),
        (11, -1, (3,)),
        (11, 0, (0, 1, 2, 3)),
        (13, None, (3,)),
        (13, 1, (1,)),
        (13, -3, (1,)),
    ],
)
def test_softmax_matches_onnxruntime(opset, axis, axes):
    attrs = {} if axis is None else {"axis": axis}
    model = _model(helper.make_node("Softmax", ["x"], ["y"], **attrs), [2, 3, 4, 5], opset=opset)
    # Logits this large overflow exp unless the kernel shifts them first.
    feeds = {"x": (np.random.default_rng(5).standard_normal((2, 3, 4, 5)) * 50).astype(np.float32)}
    graph = assert_close_to_ort(model, feeds)
    assert graph.nodes["Softmax_y"].attrs.axes == axes
