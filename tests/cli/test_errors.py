"""Every bad input a user can hand the CLI ends in one line on stderr, its category's exit code, nothing written."""
import numpy as np
import pytest
from onnx import helper

from hlsgen.cli import main
from hlsgen.errors import USAGE_EXIT, DataError, ModelFileError, PathError, UnsupportedModelError
from tests.builders import make_model, tensor_value

MNIST = "tests/data/mnist-8/model.onnx"


def run_cli(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_line_error(err: str, *fragments: str):
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ")
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0]


def test_missing_file(capsys, tmp_path):
    code, _, err = run_cli(capsys, "inspect", str(tmp_path / "nope.onnx"))
    assert code == PathError.exit_code
    assert_one_line_error(err, "no such file")


def test_not_an_onnx_file(capsys, tmp_path):
    path = tmp_path / "junk.onnx"
    path.write_bytes(b"this is not protobuf \xff\xfe" * 10)
    code, _, err = run_cli(capsys, "inspect", str(path))
    assert code == ModelFileError.exit_code
    assert_one_line_error(err, "junk.onnx")


def test_truncated_file(capsys, tmp_path):
    data = open(MNIST, "rb").read()
    path = tmp_path / "truncated.onnx"
    path.write_bytes(data[: len(data) // 2])
    code, _, err = run_cli(capsys, "inspect", str(path))
    assert code == ModelFileError.exit_code
    assert_one_line_error(err, "truncated")


def test_dynamic_spatial_dimension_names_the_input(capsys, tmp_path):
    node = helper.make_node("Relu", ["pixels"], ["y"])
    model = make_model([node], [tensor_value("pixels", ["N", 3, "H", 8])], [tensor_value("y", ["N", 3, "H", 8])])
    path = tmp_path / "dynamic.onnx"
    path.write_bytes(model.SerializeToString())
    code, _, err = run_cli(capsys, "inspect", str(path))
    assert code == UnsupportedModelError.exit_code
    assert_one_line_error(err, "'pixels'", "'H'", "axis 2")


def test_unsupported_ops_are_all_listed_and_nothing_is_written(capsys, tmp_path):
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="ok_relu"),
        helper.make_node("Cos", ["a"], ["b"], name="trig"),
        helper.make_node("Atan", ["b"], ["c"], name="arc"),
    ]
    model = make_model(nodes, [tensor_value("x", [1, 4])], [tensor_value("c", [1, 4])], opset=13)
    path = tmp_path / "unsupported.onnx"
    path.write_bytes(model.SerializeToString())
    np.savez(tmp_path / "in.npz", x=np.zeros((1, 4), np.float32))
    code, _, err = run_cli(capsys, "run", str(path), "--inputs", str(tmp_path / "in.npz"), "-o", str(tmp_path / "y.npz"))
    assert code == UnsupportedModelError.exit_code
    assert_one_line_error(err, "2 unsupported", "'trig' (Cos, opset 13)", "'arc' (Atan, opset 13)")
    assert not (tmp_path / "y.npz").exists()


def test_custom_domain_is_unsupported(capsys, tmp_path):
    node = helper.make_node("Quant", ["x"], ["y"], domain="com.example", name="q")
    graph = helper.make_graph([node], "g", [tensor_value("x", [1, 4])], [tensor_value("y", [1, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.example", 1)])
    path = tmp_path / "custom.onnx"
    path.write_bytes(model.SerializeToString())
    code, _, err = run_cli(capsys, "inspect", str(path))
    assert code == UnsupportedModelError.exit_code
    assert_one_line_error(err, "'q' (com.example.Quant", "custom domain")


def test_opset_out_of_range(capsys, tmp_path):
    node = helper.make_node("Relu", ["x"], ["y"])
    graph = helper.make_graph([node], "g", [tensor_value("x", [1, 4])], [tensor_value("y", [1, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 5)])
    path = tmp_path / "old.onnx"
    path.write_bytes(model.SerializeToString())
    code, _, err = run_cli(capsys, "inspect", str(path))
    assert code == UnsupportedModelError.exit_code
    assert_one_line_error(err, "opset 5")


@pytest.mark.parametrize(
    "arrays, fragment",
    [
        ({"Input3": np.zeros((2, 1, 27, 28), np.float32)}, "expected (N, 1, 28, 28)"),
        ({"a": np.zeros((1, 1, 28, 28), np.float32), "b": np.zeros((1, 1, 28, 28), np.float32)}, "expected one array"),
        ({"Input3": np.zeros((0, 1, 28, 28), np.float32)}, "no samples"),
        ({"Input3": np.zeros((1, 1, 28, 28), np.complex64)}, "dtype complex64"),
    ],
)
def test_bad_run_inputs(capsys, tmp_path, arrays, fragment):
    np.savez(tmp_path / "in.npz", **arrays)
    code, _, err = run_cli(capsys, "run", MNIST, "--inputs", str(tmp_path / "in.npz"), "-o", str(tmp_path / "y.npz"))
    assert code == DataError.exit_code
    assert_one_line_error(err, fragment)
    assert not (tmp_path / "y.npz").exists()


def test_inputs_file_that_is_not_npz(capsys, tmp_path):
    (tmp_path / "in.npz").write_text("hello")
    code, _, err = run_cli(capsys, "run", MNIST, "--inputs", str(tmp_path / "in.npz"), "-o", str(tmp_path / "y.npz"))
    assert code == DataError.exit_code
    assert_one_line_error(err, "not a readable .npz")


def test_usage_error_exit_code(capsys):
    code, _, err = run_cli(capsys, "run", MNIST)
    assert code == USAGE_EXIT
    assert "--inputs" in err
