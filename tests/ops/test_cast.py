import numpy as np
import pytest
from onnx import TensorProto, helper

from hlsgen.errors import UnsupportedOpsError
from hlsgen.frontend import import_model
from hlsgen.passes import optimize
from tests.builders import assert_close_to_ort, make_model, tensor_value

SHAPE = [2, 3, 4]


def _cast_model(to, x_type=TensorProto.FLOAT, opset=13):
    nodes = [helper.make_node("Cast", ["x"], ["c"], to=to), helper.make_node("Cast", ["c"], ["y"], to=TensorProto.FLOAT)]
    return make_model(nodes, [tensor_value("x", SHAPE, x_type)], [tensor_value("y", None)], opset=opset)


@pytest.mark.parametrize("opset", [6, 13, 19, 21])
@pytest.mark.parametrize("to", [TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.INT32,
                                TensorProto.INT8, TensorProto.UINT8, TensorProto.INT64])
def test_cast_matches_onnxruntime(opset, to):
    # values inside every target's range, with fractions that an integer cast truncates toward zero
    x = (np.random.default_rng(0).standard_normal(SHAPE) * 20).clip(-120, 120).astype(np.float32)
    if to == TensorProto.UINT8:
        x = np.abs(x)
    assert_close_to_ort(_cast_model(to, opset=opset), {"x": x}, rtol=0 if to != TensorProto.FLOAT16 else 1e-3)


def test_integer_input_cast_to_float():
    model = _cast_model(TensorProto.FLOAT, TensorProto.INT32)
    assert_close_to_ort(model, {"x": np.arange(-12, 12, dtype=np.int32).reshape(SHAPE)}, rtol=0)


@pytest.mark.parametrize("to, kept", [(TensorProto.FLOAT, ["Relu"]), (TensorProto.INT32, ["Relu", "Cast", "Cast"])])
def test_a_cast_to_the_same_type_vanishes_in_the_optimizer_and_others_stay(to, kept):
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Cast", ["r"], ["c"], to=to),
             helper.make_node("Cast", ["c"], ["y"], to=TensorProto.FLOAT)]
    graph = import_model(make_model(nodes, [tensor_value("x", SHAPE)], [tensor_value("y", None)]))
    optimize(graph)
    assert [n.op for n in graph.topological()] == kept


@pytest.mark.parametrize("to, name", [(TensorProto.STRING, "string"), (TensorProto.BOOL, "bool"),
                                      (TensorProto.FLOAT8E4M3FN, "float8e4m3fn")])
def test_non_numeric_casts_are_rejected_by_name(to, name):
    node = helper.make_node("Cast", ["x"], ["y"], to=to, name="cast")
    model = make_model([node], [tensor_value("x", SHAPE)], [tensor_value("y", None)], opset=19)
    with pytest.raises(UnsupportedOpsError, match=f"Cast to {name} is not supported"):
        import_model(model)


def test_the_quantizer_refuses_a_cast_that_changes_values():
    from hlsgen.quant import BitConfig, quantize

    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Cast", ["r"], ["c"], to=TensorProto.INT32, name="trunc"),
             helper.make_node("Cast", ["c"], ["y"], to=TensorProto.FLOAT)]
    graph = import_model(make_model(nodes, [tensor_value("x", SHAPE)], [tensor_value("y", None)]))
    optimize(graph)
    calib = {"x": np.random.default_rng(0).standard_normal([4, *SHAPE[1:]]).astype(np.float32)}
    with pytest.raises(UnsupportedOpsError, match=r"'trunc' \(Cast[^)]*\): a Cast to int32 changes values"):
        quantize(graph, calib, BitConfig(8, 8))
