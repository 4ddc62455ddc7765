"""ONNX operator conformance cases (tests/data/onnx-node-tests) against their stored outputs.

Every case either matches (float outputs within 1e-4 relative error, integer outputs exactly) or is listed
in NOT_APPLICABLE with its reason; a listed case must still be rejected with a clear UnsupportedOpsError,
so the list cannot go stale.
"""
import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from hlsgen.errors import UnsupportedOpsError
from hlsgen.frontend import import_model
from hlsgen.reference import verify_graph
from hlsgen.reference import run_graph
from tests.frontend.conformance import case_names, load_case, relative_error

# hlsgen compiles static graphs: these inputs (bounds, shapes, pads, axes) must be constants. The cases
# feed them as graph inputs, so the harness binds the case's own values as initializers first.
STATIC_INPUTS = {
    "Clip": {1, 2}, "Reshape": {1}, "Pad": {1, 2, 3}, "Squeeze": {1}, "Unsqueeze": {1},
    # Quantization parameters (scales, zero points, the QLinearConv bias).
    "QuantizeLinear": {1, 2}, "DequantizeLinear": {1, 2}, "ConvInteger": {2, 3}, "MatMulInteger": {2, 3},
    "QLinearConv": {1, 2, 4, 5, 6, 7, 8}, "QLinearMatMul": {1, 2, 4, 5, 6, 7},
}

# hlsgen holds these sub-byte ONNX types in int8/uint8 arrays restricted to their range.
SUB_BYTE_STORAGE = {"int4": np.int8, "uint4": np.uint8, "int2": np.int8, "uint2": np.uint8}

EXPANDED = "expanded into ops outside the CNN op set (Exp, ReduceSum, Where, Less, CastLike, Shape, ...)"
FLOAT_QUANT = "fp8 / float4 quantization: hlsgen quantizes to integer types only"
BLOCKED = "blocked quantization (block_size > 0) is not supported"
NOT_APPLICABLE = {
    **{name: EXPANDED for name in case_names() if name.endswith(("_expanded", "_expanded_ver18")) and name not in (
        "test_clip_default_inbounds_expanded", "test_clip_default_int8_inbounds_expanded", "test_hardswish_expanded")},
    **{name: FLOAT_QUANT for name in case_names() if "quantizelinear_" in name and any(
        key in name for key in ("_e4m3fn", "_e5m2", "_float4e2m1"))},
    **{name: BLOCKED for name in case_names() if "quantizelinear_blocked" in name},
    "test_maxpool_with_argmax_2d_precomputed_pads": "MaxPool's Indices output has no hardware meaning",
    "test_maxpool_with_argmax_2d_precomputed_strides": "MaxPool's Indices output has no hardware meaning",
    "test_batchnorm_epsilon_training_mode": "training-mode BatchNormalization (inference compiler)",
    "test_batchnorm_example_training_mode": "training-mode BatchNormalization (inference compiler)",
}

# The stored output of this case is rounded to 4 decimals; onnxruntime and onnx's reference agree with us.
ABSOLUTE_TOLERANCE = {"test_averagepool_2d_ceil_last_window_starts_on_pad": 1e-4}


def bind_static_inputs(model: onnx.ModelProto, inputs: list) -> tuple[onnx.ModelProto, dict]:
    """Turn graph inputs listed in STATIC_INPUTS into initializers; return the model and remaining feeds."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    init = {i.name for i in model.graph.initializer}
    graph_inputs = [v.name for v in model.graph.input if v.name not in init]
    values = dict(zip(graph_inputs, inputs))
    static = {node.input[i] for node in model.graph.node for i in STATIC_INPUTS.get(node.op_type, ())
              if i < len(node.input) and node.input[i] in values}
    for name in static:
        model.graph.initializer.append(numpy_helper.from_array(values.pop(name), name))
    kept = [v for v in model.graph.input if v.name not in static]
    del model.graph.input[:]
    model.graph.input.extend(kept)
    return model, values


@pytest.mark.parametrize("name", case_names())
def test_conformance_case(name):
    case = load_case(name)
    model, feeds = bind_static_inputs(case.model, case.inputs)
    if name in NOT_APPLICABLE:
        with pytest.raises(UnsupportedOpsError):
            import_model(model)
        return
    graph = import_model(model)
    verify_graph(graph)
    results = run_graph(graph, feeds)
    assert len(results) == len(case.outputs)
    for (out_name, got), expected in zip(results.items(), case.outputs):
        if expected.dtype.name in SUB_BYTE_STORAGE:
            expected = expected.astype(SUB_BYTE_STORAGE[expected.dtype.name])
        assert got.dtype == expected.dtype, f"{out_name}: dtype {got.dtype} != {expected.dtype}"
        if np.issubdtype(expected.dtype, np.integer):
            np.testing.assert_array_equal(got, expected, err_msg=out_name)
        elif name in ABSOLUTE_TOLERANCE:
            assert abs(got.astype(float) - expected).max() <= ABSOLUTE_TOLERANCE[name]
        else:
            assert relative_error(got, expected) <= 1e-4, out_name
