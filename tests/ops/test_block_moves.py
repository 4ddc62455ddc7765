"""DepthToSpace (DCR and CRD), SpaceToDepth and strided Slice: float kernels against onnxruntime, and
the forms the importer refuses by name."""
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


@pytest.mark.parametrize("node, why", [
    (helper.make_node("Slice", ["x", "s", "e", "a", "t"], ["y"], name="back"), "forward only"),
    (helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=4, name="d2s"), "does not divide"),
])
def test_unsupported_forms_are_refused_by_name(node, why):
    inits = {"s": np.array([5], np.int64), "e": np.array([0], np.int64), "a": np.array([2], np.int64),
             "t": np.array([-1], np.int64)}
    model = make_model([node], [tensor_value("x", [1, 6, 7, 9])], [tensor_value("y", None)],
                       {k: v for k, v in inits.items() if k in node.input})
    with pytest.raises(UnsupportedOpsError, match=f"'{node.name}'.*{why}"):
        import_model(model)
