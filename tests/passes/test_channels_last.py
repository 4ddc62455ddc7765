"""Keras channels-last exports (tf2onnx): the layout Transposes fold away and the float graph still equals
onnxruntime on the user's NHWC arrays."""
import numpy as np
import pytest

from hlsgen.frontend import import_model
from hlsgen.npz_io import match_inputs
from hlsgen.passes import optimize
from hlsgen.reference import run_graph
from tests.builders import run_ort
from tests.exports import keras_cnn, keras_images


@pytest.mark.parametrize("channels", [1, 3])
def test_layout_transposes_fold_and_the_graph_still_equals_onnxruntime(channels):
    model = keras_cnn(channels)
    graph = import_model(model)
    optimize(graph, verify_each=True)
    ops = [node.op for node in graph.topological()]
    assert "Reshape" not in ops
    # the Transpose before the Flatten became a permutation of the Dense's rows; the leading NHWC -> NCHW
    # Transpose is the input's layout (Graph.input_steps), or, moving only a unit axis, its NCHW shape
    assert "Transpose" not in ops
    assert (graph.input_steps["input_1"].perm if channels == 3 else graph.input_shapes["input_1"]) == \
        ((0, 3, 1, 2) if channels == 3 else (1, 28, 28, 1))
    images = keras_images(4, channels)
    expected = np.concatenate([run_ort(model, {"input_1": x[None]})["dense"] for x in images])
    got = np.concatenate([run_graph(graph, match_inputs(graph, {"input_1": x[None]}))["dense"] for x in images])
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_the_input_takes_nhwc_arrays_as_the_model_declares_them():
    graph = import_model(keras_cnn(1))
    optimize(graph)
    assert graph.shape("input_1") == (1, 1, 28, 28) and graph.input_shapes["input_1"] == (1, 28, 28, 1)
    images = keras_images(2)
    fed = match_inputs(graph, {"input_1": images})["input_1"]
    assert fed.shape == (2, 1, 28, 28) and np.array_equal(fed.ravel(), images.ravel())
    assert match_inputs(graph, {"input_1": fed})["input_1"].shape == (2, 1, 28, 28)  # either shape
