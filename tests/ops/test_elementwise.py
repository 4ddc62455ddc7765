import numpy as np
import pytest
from onnx import TensorProto, helper

from hlsgen.errors import UnsupportedOpsError
from hlsgen.frontend import import_model
from hlsgen.reference import run_graph
from tests.builders import assert_close_to_ort, make_model, tensor_value

BINARY = ["Add", "Sub", "Mul", "Div"]
NUMPY_BINARY = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}


def _away_from_zero(shape, seed):
    """Data with |v| >= 0.5, so that dividing by it stays well conditioned."""
    v = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return np.where(v >= 0, v + 0.5, v - 0.5).astype(np.float32)


@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize(
    "shape_a, shape_b",
    [([2, 3, 4], [2, 3, 4]), ([2, 3, 4], [4]), ([2, 1, 4], [3, 1]), ([1, 3, 1, 1], [2, 3, 4, 5]), ([2, 3], [])],
)
def test_binary_broadcasting_matches_onnxruntime(op, shape_a, shape_b):
    node = helper.make_node(op, ["a", "b"], ["y"])
    model = make_model([node], [tensor_value("a", shape_a), tensor_value("b", shape_b)], [tensor_value("y", None)])
    assert_close_to_ort(model, {"a": _away_from_zero(shape_a, 0), "b": _away_from_zero(shape_b, 1)})


@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("constant_first", [False, True])
def test_binary_with_a_constant_operand(op, constant_first):
    c = _away_from_zero([3, 1, 1], 2)
    inputs = ["c", "x"] if constant_first else ["x", "c"]
    node = helper.make_node(op, inputs, ["y"])
    model = make_model([node], [tensor_value("x", [1, 3, 4, 4])], [tensor_value("y", None)], {"c": c})
    assert_close_to_ort(model, {"x": _away_from_zero([1, 3, 4, 4], 3)})


@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("dtype, np_dtype", [(TensorProto.INT32, np.int32), (TensorProto.INT8, np.int8)])
def test_binary_on_integers_matches_onnxruntime(op, dtype, np_dtype):
    # Negative operands check that integer division truncates toward zero.
    a = np.array([[7, -7, 9, -9, 0, 100]], np_dtype)
    b = np.array([[2, 2, -4, -4, 3, 7]], np_dtype)
    node = helper.make_node(op, ["a", "b"], ["y"])
    ins = [tensor_value("a", [1, 6], dtype), tensor_value("b", [1, 6], dtype)]
    model = make_model([node], ins, [tensor_value("y", None)], opset=14)
    graph = assert_close_to_ort(model, {"a": a, "b": b})
    assert graph.tensors["y"].dtype == np.dtype(np_dtype).name


@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("constant_b", [True, False])
@pytest.mark.parametrize("axis, shape_b", [(1, [3, 4]), (0, [2]), (-3, [3]), (1, [3, 4, 5])])
def test_opset6_axis_broadcast(op, constant_b, axis, shape_b):
    # onnxruntime has no opset-6 Add/Sub/Mul/Div, so compare with numpy directly.
    a, b = _away_from_zero([2, 3, 4, 5], 4), _away_from_zero(shape_b, 5)
    node = helper.make_node(op, ["a", "b"], ["y"], broadcast=1, axis=axis)
    inputs = [tensor_value("a", [2, 3, 4, 5])] + ([] if constant_b else [tensor_value("b", shape_b)])
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4, 5])]
    model = make_model([node], inputs, outputs, {"b": b} if constant_b else None, opset=6)
    graph = import_model(model)
    got = run_graph(graph, {"a": a} if constant_b else {"a": a, "b": b})["y"]
    start = axis % 4
    expected = NUMPY_BINARY[op](a, b.reshape([1] * start + shape_b + [1] * (4 - start - len(shape_b))))
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_opset6_suffix_broadcast_is_numpy_broadcasting():
    a, b = _away_from_zero([2, 3, 4], 6), _away_from_zero([3, 4], 7)
    node = helper.make_node("Mul", ["a", "b"], ["y"], broadcast=1)
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4])]
    model = make_model([node], [tensor_value("a", [2, 3, 4])], outputs, {"b": b}, opset=6)
    np.testing.assert_allclose(run_graph(import_model(model), {"a": a})["y"], a * b, rtol=1e-6)


def test_opset6_broadcast_axis_that_does_not_fit_is_rejected_naming_the_node():
    node = helper.make_node("Add", ["a", "b"], ["y"], name="bad_add", broadcast=1, axis=2)
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4])]
    model = make_model([node], [tensor_value("a", [2, 3, 4])], outputs, {"b": np.ones((3, 4), np.float32)}, opset=6)
    with pytest.raises(UnsupportedOpsError, match=r"'bad_add' \(Add, opset 6\)"):
        import_model(model)


@pytest.mark.parametrize("op", ["Max", "Min", "Sum", "Mean"])
@pytest.mark.parametrize("shapes", [[[2, 3]], [[2, 3], [2, 3]], [[2, 3, 4], [4], [3, 1]]])
@pytest.mark.parametrize("opset", [8, 13])
def test_variadic_matches_onnxruntime(op, shapes, opset):
    names = [f"x{i}" for i in range(len(shapes))]
    node = helper.make_node(op, names, ["y"])
    inputs = [tensor_value(n, s) for n, s in zip(names, shapes)]
    assert_close_to_ort(make_model([node], inputs, [tensor_value("y", None)], opset=opset))


@pytest.mark.parametrize("op", ["Max", "Min", "Sum", "Mean"])
def test_variadic_with_a_constant_operand(op):
    c = np.linspace(-1, 1, 4, dtype=np.float32)
    node = helper.make_node(op, ["x", "c", "x"], ["y"])
    assert_close_to_ort(make_model([node], [tensor_value("x", [3, 4])], [tensor_value("y", None)], {"c": c}))


@pytest.mark.parametrize("op", ["Max", "Min"])
@pytest.mark.parametrize("dtype, np_dtype", [(TensorProto.INT8, np.int8), (TensorProto.UINT8, np.uint8)])
def test_max_min_on_integers_keep_the_dtype(op, dtype, np_dtype):
    info = np.iinfo(np_dtype)
    a = np.array([info.min, 0, 5, info.max], np_dtype)
    b = np.array([info.max, 1, 5, info.min], np_dtype)
    node = helper.make_node(op, ["a", "b"], ["y"])
    ins = [tensor_value("a", [4], dtype), tensor_value("b", [4], dtype)]
    graph = assert_close_to_ort(make_model([node], ins, [tensor_value("y", None)]), {"a": a, "b": b})
    assert graph.tensors["y"].dtype == np.dtype(np_dtype).name
