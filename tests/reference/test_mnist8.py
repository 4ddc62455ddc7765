"""The ONNX model zoo's mnist-8 (tests/data/mnist-8, see PROVENANCE.md): float reference vs stored outputs."""
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import hlsgen
from tests.frontend.conformance import relative_error

MNIST_DIR = Path(__file__).resolve().parent.parent / "data" / "mnist-8"


def load_set(i: int) -> tuple[np.ndarray, np.ndarray]:
    folder = MNIST_DIR / f"test_data_set_{i}"
    x, y = (numpy_helper.to_array(onnx.load_tensor(str(folder / f"{k}_0.pb"))) for k in ("input", "output"))
    return x, y


@pytest.fixture(scope="module")
def model():
    return hlsgen.load_onnx(MNIST_DIR / "model.onnx")


@pytest.mark.parametrize("index", [0, 1, 2])
@pytest.mark.parametrize("optimized", [False, True], ids=["imported", "optimized"])
def test_matches_stored_outputs(model, index, optimized):
    x, expected = load_set(index)
    m = model.optimize(verify_each=True) if optimized else model
    (got,) = m.run(x).values()
    assert relative_error(got, expected) < 1e-4
    assert got.argmax() == expected.argmax()


def test_optimized_graph_is_fused(model):
    optimized = model.optimize()
    ops = [n.op for n in optimized.graph.topological()]
    assert ops == ["Conv", "MaxPool", "Conv", "MaxPool", "Dense"]
    assert all(n.attrs.activation is not None for n in optimized.graph.nodes.values() if n.op == "Conv")
    assert sum(c.macs for c in optimized.costs()) == sum(c.macs for c in model.costs())


def test_batch_of_three_sets_in_one_run(model):
    xs, ys = zip(*(load_set(i) for i in range(3)))
    (got,) = model.optimize().run(np.concatenate(xs)).values()
    assert got.shape == (3, 10)
    assert relative_error(got, np.concatenate(ys)) < 1e-4
