"""DepthToSpace (DCR and CRD), SpaceToDepth, strided Slice, Split and Gather of constant indices: float
kernels against onnxruntime, and the forms the importer refuses by name."""
import numpy as np
import pytest
from onnx import helper

from hlsgen.errors import UnsupportedOpsError
from hlsgen.frontend import import_model
from tests.builders import assert_close_to_ort, make_model, tensor_value


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space_matches_onnxruntime(mode):
    node = helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=3, mode=mode)
    assert_close_to_ort(make_model([node], [tensor_value("x", [1, 18, 4, 5])], [tensor_value("y", None)], {}))


def test_space_to_depth_matches_onnxruntime():
    node = helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=2)
    assert_close_to_ort(make_model([node], [tensor_value("x", [1, 3, 6, 8])], [tensor_value("y", None)], {}))


@pytest.mark.parametrize("starts, ends, axes, steps", [
    ([1], [100], [2], [2]),  # a Focus stem's x[..., 1::2, :]
    ([0, 1], [4, 9], [3, 1], [3, 2]),
    ([-3], [-1], [2], None),
    ([2, 0], [2 ** 62, 5], [-1, -3], [1, 2]),
])
def test_a_slice_matches_onnxruntime(starts, ends, axes, steps):
    inits = {"starts": np.array(starts, np.int64), "ends": np.array(ends, np.int64), "axes": np.array(axes, np.int64)}
    if steps is not None:
        inits["steps"] = np.array(steps, np.int64)
    node = helper.make_node("Slice", ["x", *inits], ["y"])
    assert_close_to_ort(make_model([node], [tensor_value("x", [1, 6, 7, 9])], [tensor_value("y", None)], inits))


@pytest.mark.parametrize("sizes, axis, outputs", [([2, 4], 1, 2), (None, 1, 3), ([3, 4], -1, 2), (None, 2, 2)])
def test_a_split_matches_onnxruntime(sizes, axis, outputs):
    """Given sizes, or equal parts (the last one smaller when they do not divide: opset 18)."""
    inits = {} if sizes is None else {"split": np.array(sizes, np.int64)}
    names = [f"y{i}" for i in range(outputs)]
    node = helper.make_node("Split", ["x", *inits], names, axis=axis, **({"num_outputs": outputs} if sizes is None else {}))
    model = make_model([node], [tensor_value("x", [1, 6, 7, 7])], [tensor_value(n, None) for n in names], inits,
                       opset=18)
    assert_close_to_ort(model)


@pytest.mark.parametrize("indices, axis", [([3, 0, 0, -1], 1), (2, 1), ([1, 0], 0), (-2, 3)])
def test_a_gather_of_constant_indices_matches_onnxruntime(indices, axis):
    inits = {"i": np.array(indices, np.int64)}
    node = helper.make_node("Gather", ["x", "i"], ["y"], axis=axis)
    assert_close_to_ort(make_model([node], [tensor_value("x", [2, 5, 3, 4])], [tensor_value("y", None)], inits))


@pytest.mark.parametrize("node, why", [
    (helper.make_node("Slice", ["x", "s", "e", "a", "t"], ["y"], name="back"), "forward only"),
    (helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=4, name="d2s"), "does not divide"),
    (helper.make_node("Gather", ["x", "m"], ["y"], axis=1, name="rows"), "rank 2"),
    (helper.make_node("Gather", ["x", "s"], ["y"], axis=1, name="past"), "out of range"),
    (helper.make_node("Split", ["x", "z"], ["y", "y2"], axis=1, name="split"), "does not cut"),
])
def test_unsupported_forms_are_refused_by_name(node, why):
    inits = {"s": np.array([6], np.int64), "e": np.array([0], np.int64), "a": np.array([2], np.int64),
             "t": np.array([-1], np.int64), "m": np.zeros((2, 2), np.int64),
             "z": np.array([6, 0], np.int64)}
    model = make_model([node], [tensor_value("x", [1, 6, 7, 9])], [tensor_value("y", None)],
                       {k: v for k, v in inits.items() if k in node.input})
    with pytest.raises(UnsupportedOpsError, match=f"'{node.name}'.*{why}"):
        import_model(model)
