import numpy as np
import pytest
from onnx import helper, numpy_helper

from hlsgen.frontend import import_model
from hlsgen.reference import verify_graph
from hlsgen.passes import fold_dynamic_quantization, optimize
from hlsgen.quant import BitConfig, quantize
from hlsgen.reference import run_graph
from tests.builders import assert_close_to_ort, make_model, run_ort, tensor_value
from tests.passes.helpers import ops
from tests.real_exports import dynamic_quantized, images, real_ops_net

LAYERS = ("ConvInteger", "MatMulInteger")


@pytest.fixture(scope="module", params=[False, True], ids=["per_tensor", "per_channel"])
def dynamic(request, tmp_path_factory):
    return dynamic_quantized(real_ops_net(), tmp_path_factory.mktemp("dynamic"), per_channel=request.param)


def test_the_float_reference_runs_the_dynamic_model_as_onnxruntime(dynamic):
    assert {n.op_type for n in dynamic.graph.node} >= {"DynamicQuantizeLinear", "ConvInteger", "MatMulInteger", "Cast"}
    assert_close_to_ort(dynamic, {"x": images(1, 5)})


def test_the_pattern_folds_into_float_layers_keeping_the_integer_weights(dynamic):
    graph = import_model(dynamic)
    assert fold_dynamic_quantization(graph)
    verify_graph(graph)
    assert not {"DynamicQuantizeLinear", "ConvInteger", "MatMulInteger"} & set(ops(graph))
    assert ops(graph).count("Cast") == 1  # only the model's own float -> float one, for remove_identities
    assert ops(graph).count("Conv") == 3 and "MatMul" in ops(graph)
    assert len(graph.notices) == 1 and "static calibration" in graph.notices[0]
    initializers = {i.name: numpy_helper.to_array(i) for i in dynamic.graph.initializer}
    for node in dynamic.graph.node:
        if node.op_type not in LAYERS:
            continue
        folded = graph.nodes[f"{node.op_type}_{node.output[0]}"]
        ints, wq = graph.quant[folded.inputs[1]]
        axis = 0 if node.op_type == "ConvInteger" else 1
        along = [-1 if i == axis else 1 for i in range(ints.ndim)]
        zero = initializers[node.input[3]]
        centred = initializers[node.input[1]].astype(np.int64) - zero.reshape(along if zero.size > 1 else ())
        np.testing.assert_array_equal(ints, centred)
        scales = np.broadcast_to(initializers[_weight_scale(dynamic, node)].reshape(-1), (ints.shape[axis],))
        np.testing.assert_allclose(wq.scales, scales, rtol=1e-7)
        assert wq.bits == 8
        np.testing.assert_allclose(graph.constants[folded.inputs[1]], ints * scales.reshape(along), rtol=1e-6)


def _weight_scale(model, layer) -> str:
    """The initializer the layer's result is scaled by: layer -> Cast -> Mul(_, Mul(x_scale, w_scale))."""
    nodes, names = model.graph.node, {i.name for i in model.graph.initializer}
    reader = lambda t: next(n for n in nodes if t in n.input)  # noqa: E731
    mul = reader(reader(layer.output[0]).output[0])
    product = next(n for n in nodes if set(n.output) & set(mul.input) and n.op_type == "Mul")
    return next(i for i in product.input if i in names)


def test_folded_float_outputs_differ_from_onnxruntime_only_by_the_activation_rounding(dynamic):
    graph = import_model(dynamic)
    optimize(graph, verify_each=True)
    x = images(1, 6)
    want = run_ort(dynamic, {"x": x})["y"]
    err = np.abs(run_graph(graph, {"x": x})["y"] - want).max() / np.abs(want).max()
    assert 0 < err < 0.05


def test_the_quantized_layers_use_the_model_weights(dynamic):
    graph = import_model(dynamic)
    optimize(graph)
    kept = {name: value[0] for name, value in graph.quant.items() if isinstance(value, tuple)}
    quantized = quantize(graph, {"x": images(16, 0)}, BitConfig(8, 8))
    layers = [n for n in quantized.graph.topological() if n.op in ("QConv", "QDense")]
    assert len(layers) == 4
    for layer in layers:
        source = next(n for n in graph.nodes.values() if n.name == layer.name)
        np.testing.assert_array_equal(quantized.graph.constants[layer.inputs[1]], kept[source.inputs[1]])


def test_uint8_weights_are_centred_on_their_zero_point(tmp_path):
    from onnxruntime.quantization import QuantType, quantize_dynamic
    import onnx

    onnx.save(real_ops_net(), str(tmp_path / "f.onnx"))
    quantize_dynamic(str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx"), weight_type=QuantType.QUInt8,
                     op_types_to_quantize=["MatMul"])
    model = onnx.load(str(tmp_path / "q.onnx"))
    graph = import_model(model)
    assert fold_dynamic_quantization(graph)
    (ints, wq), = [v for v in graph.quant.values() if isinstance(v, tuple)]
    assert wq.bits == 9 and ints.min() < 0 < ints.max()


def test_a_dynamic_quantization_without_the_pattern_stays():
    """ConvInteger's int32 result read directly: nothing to fold (the integer op runs as is)."""
    w = np.random.default_rng(0).integers(-5, 5, (2, 3, 1, 1)).astype(np.int8)
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["q", "s", "z"]),
             helper.make_node("ConvInteger", ["q", "w", "z"], ["y"])]
    model = make_model(nodes, [tensor_value("x", [1, 3, 2, 2])], [tensor_value("y", None)], {"w": w})
    graph = assert_close_to_ort(model)
    assert not fold_dynamic_quantization(graph)
    assert ops(graph) == ["DynamicQuantizeLinear", "ConvInteger"]
    assert graph.tensors["y"].dtype == "int32"
