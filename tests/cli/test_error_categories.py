"""Error categories stay honest: a width the hardware cannot hold is exit 3 naming the layer and the width;
exit 8 names the ONNX node and op as the file spells them (never an internal op, never "opset 0")."""
from pathlib import Path

import numpy as np
import onnx
import yaml
from onnx import helper

from hlsgen.errors import MappingError, UnsupportedModelError
from hlsgen.resources import data_dir
from tests.builders import make_model, tensor_value
from tests.cli.test_errors import assert_one_line_error, run_cli

ROOT = Path(__file__).resolve().parents[2]
DIGITS = str(ROOT / "examples" / "digits" / "digits.onnx")
CALIB = str(ROOT / "examples" / "digits" / "calib.npz")
INTERNAL_OPS = ("QConv", "QDense", "QAdd", "QRequant", "QLut", "QAveragePool", "opset 0")


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
    code, _, err = run_cli(capsys, "build", model, "--calib", calib, "-o", str(tmp_path / "o"), "-q")
    assert code == UnsupportedModelError.exit_code
    assert_one_line_error(err, "'probabilities' (Softmax, opset 17)", "at the output")
    assert not any(internal in err for internal in INTERNAL_OPS)


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
