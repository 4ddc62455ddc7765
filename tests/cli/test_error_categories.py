"""Error categories stay honest: a width the hardware cannot hold is exit 3 naming the layer and the width;
exit 8 names the ONNX node and op as the file spells them (never an internal op, never "opset 0")."""
from pathlib import Path

import numpy as np
import onnx
import pytest
import yaml
from onnx import helper

from hlsgen.errors import MappingError, UnsupportedModelError
from hlsgen.resources import data_dir
from tests.builders import make_model, tensor_value
from tests.cli.test_errors import assert_one_line_error, run_cli

ROOT = Path(__file__).resolve().parents[2]
DIGITS = str(ROOT / "examples" / "digits" / "digits.onnx")
CALIB = str(ROOT / "examples" / "digits" / "calib.npz")
INTERNAL_OPS = ("QConv", "QDense", "QAdd", "QMul", "QRequant", "QLut", "QAveragePool", "opset 0")


def narrow_accumulator_target(tmp_path: Path) -> str:
    spec = yaml.safe_load((data_dir("hw_models") / "systolic16x16.yaml").read_text())
    spec["name"], spec["widths"]["accumulator_bits"] = "narrow_acc", 17
    path = tmp_path / "narrow_acc.yaml"
    path.write_text(yaml.safe_dump(spec))
    return str(path)


def test_an_accumulator_wider_than_the_array_is_exit_3_naming_layer_and_width(tmp_path, capsys):
    target = narrow_accumulator_target(tmp_path)
    code, _, err = run_cli(capsys, "build", DIGITS, "--calib", CALIB, "--target", target, "-o", str(tmp_path / "o"), "-q")
    assert code == MappingError.exit_code
    assert_one_line_error(err, "layer 'conv1'", "-bit accumulator", "accumulator_bits = 17")
    assert not (tmp_path / "o").exists()


def save(tmp_path: Path, nodes, x_shape, y_shape, inits) -> tuple[str, str]:
    model = make_model(nodes, [tensor_value("x", x_shape)], [tensor_value("y", y_shape)], inits)
    onnx.save(model, tmp_path / "m.onnx")
    np.savez(tmp_path / "c.npz", x=np.random.default_rng(0).standard_normal((8, *x_shape[1:])).astype(np.float32))
    return str(tmp_path / "m.onnx"), str(tmp_path / "c.npz")


def test_an_op_form_hlsgen_cannot_quantize_is_exit_8_named_as_the_file_spells_it(tmp_path, capsys):
    rng = np.random.default_rng(1)
    nodes = [helper.make_node("Gemm", ["x", "w"], ["h"], name="fc", transB=1),
             helper.make_node("Softmax", ["h"], ["p"], name="probabilities", axis=1),
             helper.make_node("Gemm", ["p", "w2"], ["y"], name="head", transB=1)]
    model, calib = save(tmp_path, nodes, [1, 8], [1, 4], {"w": rng.standard_normal((6, 8)).astype(np.float32),
                                                          "w2": rng.standard_normal((4, 6)).astype(np.float32)})
    code, _, err = run_cli(capsys, "build", model, "--calib", calib, "-o", str(tmp_path / "o"), "-q",
                           "--accelerator-only")
    assert code == UnsupportedModelError.exit_code
    assert_one_line_error(err, "'probabilities' (Softmax, opset 17)", "at the output", "--accelerator-only")
    assert not any(internal in err for internal in INTERNAL_OPS)
    # without --accelerator-only the host runs the Softmax between the two accelerator segments
    code, out, err = run_cli(capsys, "build", model, "--calib", calib, "-o", str(tmp_path / "o"))
    assert code == 0, err
    assert "accelerator: 100.0% of MACs in 2 segments; host: 1 node (Softmax)" in out


def test_a_layer_that_is_zero_on_every_calibration_sample_builds(tmp_path, capsys):
    """A pruned layer (all-zero weights and bias) has no range of its own: it takes its input's scale,
    with a notice, instead of a degenerate requantization scale (an internal error before)."""
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["h"], name="pruned", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("Add", ["r", "x"], ["y"], name="skip")]
    model, calib = save(tmp_path, nodes, [1, 4, 6, 6], [1, 4, 6, 6],
                        {"w": np.zeros((4, 4, 3, 3), np.float32), "b": np.zeros(4, np.float32)})
    code, _, err = run_cli(capsys, "build", model, "--calib", calib, "-o", str(tmp_path / "o"), "--verify", "csim")
    assert code == 0, err
    assert "is 0 on every calibration sample" in err


def test_inputs_without_a_common_batch_axis_are_exit_8(tmp_path, capsys):
    path = tmp_path / "m.onnx"
    onnx.save(make_model([helper.make_node("Add", ["x", "bias"], ["y"])],
                         [tensor_value("x", [3, 4, 5]), tensor_value("bias", [5])], [tensor_value("y", None)]), path)
    code, _, err = run_cli(capsys, "build", str(path), "--input-range", "0,1", "-o", str(tmp_path / "o"), "-q")
    assert code == UnsupportedModelError.exit_code
    assert_one_line_error(err, "do not share a batch axis", "x (3, 4, 5), bias (5,)")


def test_a_fixed_batch_of_five_is_refused_by_name_not_by_the_samples(tmp_path, capsys):
    """Synthetic and verification samples come in whole batches of the graph's batch size, so what stops
    the build is the one real limit: the HLS design runs one inference per call."""
    path = tmp_path / "m.onnx"
    onnx.save(make_model([helper.make_node("Flatten", ["x"], ["y"])], [tensor_value("x", [5, 4, 3, 2])],
                         [tensor_value("y", None)]), path)
    code, _, err = run_cli(capsys, "build", str(path), "--input-range", "0,1", "-o", str(tmp_path / "o"), "-q")
    assert code == UnsupportedModelError.exit_code
    assert_one_line_error(err, "tensor 'x' has batch 5", "one inference per call")


@pytest.mark.slow
def test_no_conformance_model_ends_in_an_internal_error(tmp_path, capsys):
    """Every stored ONNX conformance model builds or ends in one line with its category's exit code."""
    codes = {}
    for model in sorted((ROOT / "tests" / "data" / "onnx-node-tests").glob("*/model.onnx")):
        code, _, err = run_cli(capsys, "build", str(model), "--input-range", "0,1", "-o",
                               str(tmp_path / model.parent.name), "-q")
        codes[model.parent.name] = code
        assert code != 70 and "Traceback" not in err, (model.parent.name, err)
        if code:
            assert_one_line_error(err)
    assert sum(code == 0 for code in codes.values()) >= 30
