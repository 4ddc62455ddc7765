import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from hlsgen.errors import ModelFileError, UnsupportedModelError, UnsupportedOpsError
from hlsgen.frontend import import_model, read_onnx
from hlsgen.frontend.onnx_import import load_onnx_proto
from hlsgen.reference import verify_graph
from hlsgen.reference import run_graph
from tests.builders import IR_VERSION, make_model, tensor_value


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
    verify_graph(graph)
    assert list(graph.nodes) == ["first", "Relu_y"]


def test_every_unsupported_node_is_reported_at_once():
    nodes = [helper.make_node("Sin", ["x"], ["a"], name="s"), helper.make_node("Cos", ["a"], ["y"], name="c")]
    model = make_model(nodes, [tensor_value("x", [1, 4])], [tensor_value("y", [1, 4])], opset=13)
    with pytest.raises(UnsupportedOpsError) as info:
        import_model(model)
    assert [(p.node, p.op_type, p.opset) for p in info.value.problems] == [("s", "Sin", 13), ("c", "Cos", 13)]


# ---- QONNX ops in the default domain, as FINN's and Brevitas' exports write them ------------------------
def default_domain_qonnx(extra_nodes=()):
    """Quant -> Relu -> Trunc -> BipolarQuant with every QONNX node in domain '' and only opset 13 imported."""
    inits = {"s": np.float32(0.25), "z": np.float32(0), "b8": np.float32(8), "b4": np.float32(4)}
    nodes = [helper.make_node("Quant", ["x", "s", "z", "b8"], ["q"], name="quant", signed=1, narrow=0,
                              rounding_mode="ROUND"),
             helper.make_node("Relu", ["q"], ["r"], name="relu"),
             helper.make_node("Trunc", ["r", "s", "z", "b8", "b4"], ["t"], name="trunc", rounding_mode="FLOOR"),
             helper.make_node("BipolarQuant", ["t", "s"], ["y"], name="bipolar"), *extra_nodes]
    graph = helper.make_graph(nodes, "finn", [tensor_value("x", [1, 8])], [tensor_value("y", [1, 8])],
                              initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = IR_VERSION
    return model


def test_default_domain_qonnx_ops_pass_the_checker_with_a_notice(tmp_path):
    path = tmp_path / "finn.onnx"
    onnx.save(default_domain_qonnx(), str(path))
    graph = read_onnx(path)
    assert [n.op for n in graph.topological()] == ["QuantDequant", "Relu", "Trunc", "QuantDequant"]
    assert graph.notices == ["3 QONNX node(s) (BipolarQuant, Quant, Trunc) in the default ONNX domain, as FINN and "
                             "Brevitas export them, read as qonnx.custom_op.general"]
    x = np.array([[-1.0, 0.3, 0.6, 1.1, 2.0, 4.4, 9.0, 0.0]], np.float32)
    # Trunc drops 4 of 8 bits: r / 0.25 -> floor(./16) * 0.25; BipolarQuant maps >= 0 to +0.25
    np.testing.assert_array_equal(run_graph(graph, {"x": x})["y"], np.full((1, 8), 0.25, np.float32))
    # the checker sees them in the QONNX domain only while it runs: the model comes back as the file holds it
    assert load_onnx_proto(path).SerializeToString() == onnx.load(str(path)).SerializeToString()


def test_other_ops_beside_default_domain_qonnx_are_still_listed():
    model = default_domain_qonnx([helper.make_node("Sin", ["y"], ["s"], name="sine")])
    with pytest.raises(UnsupportedOpsError) as info:
        import_model(model)
    assert [(p.node, p.op_type, p.why) for p in info.value.problems] == [("sine", "Sin", "op not supported by hlsgen")]


def test_an_unknown_default_domain_op_is_still_rejected_by_the_checker(tmp_path):
    model = default_domain_qonnx([helper.make_node("MultiThreshold", ["y"], ["m"], name="thresholds")])
    path = tmp_path / "finn.onnx"
    onnx.save(model, str(path))
    with pytest.raises(ModelFileError, match="checker rejects the model.*MultiThreshold"):
        read_onnx(path)
