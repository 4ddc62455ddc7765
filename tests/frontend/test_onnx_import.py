import numpy as np
import pytest
from onnx import helper

from hlsgen.errors import UnsupportedModelError, UnsupportedOpsError
from hlsgen.frontend import import_model
from hlsgen.ir import verify
from tests.builders import make_model, tensor_value


def relu_model(input_shape, opset=17):
    node = helper.make_node("Relu", ["x"], ["y"], name="act")
    return make_model([node], [tensor_value("x", input_shape)], [tensor_value("y", input_shape)], opset=opset)


def test_symbolic_batch_is_pinned_to_one_with_a_notice():
    graph = import_model(relu_model(["batch", 3, 4, 4]))
    assert graph.tensors["x"].shape == (1, 3, 4, 4)
    assert graph.tensors["y"].shape == (1, 3, 4, 4)
    assert graph.notices == ["input 'x': symbolic batch dimension 'batch' pinned to 1"]


def test_static_model_has_no_notice():
    graph = import_model(relu_model([2, 3]))
    assert graph.tensors["x"].shape == (2, 3)
    assert graph.notices == []


def test_dynamic_non_batch_dimension_is_rejected():
    with pytest.raises(UnsupportedModelError, match=r"input 'x' has a dynamic dimension 'W' at axis 3"):
        import_model(relu_model([1, 3, 4, "W"]))


def test_initializers_listed_as_inputs_are_constants():
    w = np.ones((2, 3), np.float32)
    node = helper.make_node("MatMul", ["x", "w"], ["y"])
    model = make_model([node], [tensor_value("x", [1, 2]), tensor_value("w", [2, 3])], [tensor_value("y", [1, 3])],
                       {"w": w}, opset=8)
    graph = import_model(model)
    assert graph.inputs == ["x"]
    assert np.array_equal(graph.constants["w"], w)


def test_node_names_are_kept_and_unnamed_nodes_get_one():
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="first"), helper.make_node("Relu", ["a"], ["y"])]
    model = make_model(nodes, [tensor_value("x", [1, 4])], [tensor_value("y", [1, 4])])
    graph = import_model(model)
    verify(graph)
    assert list(graph.nodes) == ["first", "Relu_y"]


def test_every_unsupported_node_is_reported_at_once():
    nodes = [helper.make_node("Sin", ["x"], ["a"], name="s"), helper.make_node("Cos", ["a"], ["y"], name="c")]
    model = make_model(nodes, [tensor_value("x", [1, 4])], [tensor_value("y", [1, 4])], opset=13)
    with pytest.raises(UnsupportedOpsError) as info:
        import_model(model)
    assert [(p.node, p.op_type, p.opset) for p in info.value.problems] == [("s", "Sin", 13), ("c", "Cos", 13)]
