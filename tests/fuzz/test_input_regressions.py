"""Every bad input the input fuzzer found crashing hlsgen (exit 70) or answering with the wrong exit code, kept
as a reproducer built in code: each now ends in its category's exit code, one error line and no output."""
import io

import numpy as np
import onnx
import pytest
import yaml
from onnx import TensorProto

from hlsgen.errors import DataError, ModelFileError, TargetError, UnsupportedModelError, UsageError
from hlsgen.fuzz.seeds import load_seeds, npz_bytes, tiny_cnn
from tests.cli.test_errors import assert_one_line_error, run_cli

TINY = tiny_cnn()
SEEDS = load_seeds()


@pytest.fixture
def case(tmp_path, monkeypatch):
    """A folder holding the tiny seed model and its calibration set, as the working directory."""
    (tmp_path / "model.onnx").write_bytes(TINY.onnx_bytes)
    (tmp_path / "calib.npz").write_bytes(TINY.calib_bytes)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _target(edit) -> str:
    data = yaml.safe_load(SEEDS.target_yaml)
    edit(data)
    return yaml.safe_dump(data)


def _build_fails(capsys, case, code: int, *extra: str, fragment: str = "") -> None:
    got, _, err = run_cli(capsys, "build", "model.onnx", "--calib", "calib.npz", "-o", "out", "-q", *extra)
    assert got == code, err
    assert_one_line_error(err, fragment)
    assert not (case / "out").exists() and not list(case.glob(".out.hlsgen-*"))


@pytest.mark.parametrize("content, fragment", [
    (b"\x83\xff\x00garbage", "not UTF-8 text"),  # UnicodeDecodeError
    (_target(lambda d: d["array"].update(cols=True)).encode(), "array.cols must be an integer"),  # bool is an int
    (_target(lambda d: d["array"].update(rows={"value": 16})).encode(), "array.rows must be an integer"),  # TypeError
    (_target(lambda d: d.update(clock_mhz="fast")).encode(), "clock_mhz must be a finite number"),
    (_target(lambda d: d["device"].update(lut=0)).encode(), "device.lut must be positive"),  # ZeroDivisionError
    (_target(lambda d: d["device"].update(ff=-1)).encode(), "device.ff must be positive"),  # exit 3
    (_target(lambda d: d["device"].update(ff=10**18)).encode(), "device.ff must be an integer (at most"),  # exit 0
    (_target(lambda d: d.update(clock_mhz=10**400)).encode(), "clock_mhz must be a finite number"),  # OverflowError
    (SEEDS.target_yaml.replace("rows: 16", "rows: " + "9" * 5000).encode(), "invalid target description"),
    (SEEDS.target_yaml.replace("rows: 16", "rows: " + "9" * 2_000_000).encode(), "more than any target's"),
])
def test_bad_target_file(capsys, case, content, fragment):
    (case / "target.yaml").write_bytes(content)
    _build_fails(capsys, case, TargetError.exit_code, "--target", "target.yaml", fragment=fragment)


@pytest.mark.parametrize("content, fragment", [
    (b"\xb2\x01binary", "not UTF-8 text"),  # UnicodeDecodeError
    (b"bits: " + b"9" * 5000 + b"\n", "not valid YAML"),  # past Python's int-parsing limit: ValueError
    (b"bits: " + b"9" * 2_000_000 + b"\n", "is no build config"),
    (b"[]\n", "must be a mapping"),  # an empty list was taken for an empty config
    (b"calib: calib.npz\nmin_sqnr: .nan\n", "min_sqnr must be a number"),  # exit 0
    (b"calib: calib.npz\nmin_sqnr: 1" + b"0" * 400 + b"\n", "min_sqnr must be a number"),  # OverflowError
    (b"calib: calib.npz\nmax_accuracy_drop: -0.5\n", "max_accuracy_drop must be a number from 0 to 1"),  # exit 0
    (b"calib: calib.npz\nverify: 5\n", "verify must be a list"),  # TypeError
    (b"calib: calib.npz\ndump_ir: 'yes'\n", "dump_ir must be true or false"),
    (b"calib: calib.npz\ntarget: 16\n", "target must be text"),
    (b"calib: calib.npz\nlayers: ''\n", "layers must be a mapping"),  # exit 0: '' was taken for no layers
    (b"1: 2\nfoo: 3\n", "unknown option(s)"),  # keys of mixed types did not sort: TypeError
])
def test_bad_config_file(capsys, case, content, fragment):
    (case / "config.yaml").write_bytes(content)
    got, _, err = run_cli(capsys, "build", "model.onnx", "--config", "config.yaml", "-o", "out", "-q")
    assert got == UsageError.exit_code, err
    assert_one_line_error(err, fragment)
    assert not (case / "out").exists()


@pytest.mark.parametrize("bits", [b"99", b"-8", b"nine", b"[8]"])
def test_a_bad_width_in_the_config_is_an_error_even_under_bits_on_the_command_line(capsys, case, bits):
    (case / "config.yaml").write_bytes(b"calib: calib.npz\nbits: " + bits + b"\n")
    got, _, err = run_cli(capsys, "build", "model.onnx", "--config", "config.yaml", "--bits", "4", "-o", "out", "-q")
    assert got == UsageError.exit_code, err
    assert_one_line_error(err, "bits must be a width from 2 to 8 or 'auto'")


def test_null_in_a_config_is_the_default(capsys, case):
    (case / "config.yaml").write_bytes(b"calib: calib.npz\nverify: null\nlayers: null\ntarget: null\n")
    got, _, err = run_cli(capsys, "build", "model.onnx", "--config", "config.yaml", "-o", "out", "-q")
    assert got == 0, err and (case / "out" / "build.json").is_file()


def _model(edit) -> bytes:
    model = TINY.proto
    edit(model)
    return model.SerializeToString()


def _set_input_dim(value):
    def edit(model):
        model.graph.input[0].type.tensor_type.shape.dim[1].dim_value = value
    return edit


def _zero_batch(model):
    """A zero batch on the input and the output (and no value_info: ONNX's checker compares its batch of 1)."""
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 0
    model.graph.output[0].type.tensor_type.shape.dim[0].dim_value = 0
    del model.graph.value_info[:]


@pytest.mark.parametrize("content, code, fragment", [
    # ONNX's checker raised ValueError (not ValidationError) on an unknown element type
    (_model(lambda m: setattr(m.graph.input[0].type.tensor_type, "elem_type", 99)), ModelFileError.exit_code,
     "checker rejects"),
    # an initializer whose data does not fill its dims: numpy's reshape ValueError
    (_model(lambda m: m.graph.initializer[1].dims.__setitem__(0, 3)), ModelFileError.exit_code,
     "does not hold the data its dims declare"),
    # a zero batch: ZeroDivisionError splitting the samples into batches
    (_model(_zero_batch),
     UnsupportedModelError.exit_code, "empty dimension"),
    # 2**31-1 channels: MemoryError (2 TiB) in the shape annotation
    (_model(_set_input_dim(2**31 - 1)), UnsupportedModelError.exit_code, "more than hlsgen compiles"),
    (_model(_set_input_dim(-3)), ModelFileError.exit_code, "negative dimension"),
])
def test_bad_model_file(capsys, case, content, code, fragment):
    (case / "model.onnx").write_bytes(content)
    _build_fails(capsys, case, code, fragment=fragment)
    got, _, err = run_cli(capsys, "inspect", "model.onnx")
    assert got == code
    assert_one_line_error(err, fragment)


def _set_attribute(node: int, name: str, value):
    def edit(model):
        kept = [a for a in model.graph.node[node].attribute if a.name != name]
        del model.graph.node[node].attribute[:]
        model.graph.node[node].attribute.extend([*kept, onnx.helper.make_attribute(name, value)])
    return edit


@pytest.mark.parametrize("edit, fragment", [
    (_set_attribute(2, "auto_pad", "BOGUS"), "'conv2' (Conv, opset 17): auto_pad 'BOGUS' is none of"),  # ValueError
    (_set_attribute(0, "group", 0), "'conv1' (Conv, opset 17): group 0"),  # ZeroDivisionError
])
def test_attributes_onnx_lets_through_are_unsupported_nodes(capsys, case, edit, fragment):
    (case / "model.onnx").write_bytes(_model(edit))
    _build_fails(capsys, case, UnsupportedModelError.exit_code, fragment=fragment)


def test_a_model_cut_right_after_its_graph_is_a_truncated_file(capsys, case):
    """The prefix without the opset import parses: it was exit 8 ("imports no default-domain opset")."""
    model = TINY.proto
    del model.opset_import[:]
    cut = model.SerializeToString()
    assert TINY.onnx_bytes.startswith(cut)
    (case / "model.onnx").write_bytes(cut)
    _build_fails(capsys, case, ModelFileError.exit_code, fragment="is the file truncated?")


def _with_auto_pad(model):
    model.graph.node[0].attribute.append(onnx.helper.make_attribute("auto_pad", "NOTSET"))


@pytest.mark.parametrize("model, good, flipped", [
    (TINY.onnx_bytes, b"conv2", b"conv\xb2"),  # a node name: TypeError concatenating it (bytes) to a suffix
    (_model(_with_auto_pad), b"NOTSET", b"NOTS\xc5T"),  # a string attribute: UnicodeDecodeError
])
def test_a_flipped_bit_that_breaks_utf8_is_a_corrupt_file(capsys, case, model, good, flipped):
    """Protobuf hands a string field that is not UTF-8 over as bytes."""
    assert good in model
    (case / "model.onnx").write_bytes(model.replace(good, flipped))
    _build_fails(capsys, case, ModelFileError.exit_code, fragment="not UTF-8 text")


def test_a_bit_flipped_npz_header_is_unreadable_data(capsys, case):
    """numpy's header parser raised tokenize.TokenError on a flipped bit of the header's dict."""
    good = bytearray(TINY.calib_bytes)
    at = good.index(b"'descr'")
    good[at + 1] ^= 0x27 ^ 0x28  # a quote becomes '(': the header no longer tokenizes
    (case / "calib.npz").write_bytes(bytes(good))
    _build_fails(capsys, case, DataError.exit_code, fragment="not a readable .npz file")


@pytest.mark.parametrize("labels", [np.zeros(5, np.int64), np.linspace(0, 9, 16), np.array(["a"] * 16),
                                    np.zeros((16, 2), np.int64)])
def test_run_refuses_bad_labels_before_writing(capsys, case, labels):
    """`run` took any labels to its accuracy: a wrong count crashed (ValueError), floats or strings were
    compared, and OUT.npz was written first."""
    (case / "in.npz").write_bytes(npz_bytes({"x": TINY.calib["x"], "labels": labels}))
    got, _, err = run_cli(capsys, "run", "model.onnx", "--inputs", "in.npz", "-o", "out.npz")
    assert got == DataError.exit_code, err
    assert_one_line_error(err, "'labels' must be 16 integers")
    assert not (case / "out.npz").exists()


def test_run_on_a_build_refuses_nan_inputs(capsys, case):
    """The integer reference cast NaN to int64 (garbage, with a RuntimeWarning) and wrote the result."""
    assert run_cli(capsys, "build", "model.onnx", "--calib", "calib.npz", "-o", "good", "-q")[0] == 0
    x = TINY.calib["x"].copy()
    x[0, 0, 0, 0] = np.nan
    (case / "in.npz").write_bytes(npz_bytes({"x": x}))
    got, _, err = run_cli(capsys, "run", "good", "--inputs", "in.npz", "-o", "out.npz")
    assert got == DataError.exit_code, err
    assert_one_line_error(err, "1 NaN value(s)")
    assert not (case / "out.npz").exists()


def test_the_tiny_seed_is_a_valid_model():
    onnx.checker.check_model(onnx.load_model_from_string(TINY.onnx_bytes), full_check=True)
    assert TensorProto.FLOAT == onnx.load_model_from_string(TINY.onnx_bytes).graph.input[0].type.tensor_type.elem_type
    assert np.load(io.BytesIO(TINY.calib_bytes))["x"].shape == (16, 1, 8, 8)


def test_a_target_without_external_memory_builds(capsys, case):
    """The RTL renderer sized the weight DMA's read-ahead from the target's external_memory, which is optional:
    AttributeError on None (the design, built with --verify csim,rtl by hand, is bit-exact)."""
    (case / "target.yaml").write_text(_target(lambda d: d.pop("external_memory")))
    got, _, err = run_cli(capsys, "build", "model.onnx", "--calib", "calib.npz", "--target", "target.yaml",
                          "-o", "out", "-q")
    assert got == 0, err
    assert (case / "out" / "rtl").is_dir() and (case / "out" / "build.json").is_file()


def test_error_messages_keep_brackets(capsys, tmp_path):
    """rich took "[nan, nan]" in a message (and "[best]" in a path) for style tags and printed nothing there."""
    missing = tmp_path / "[best]" / "model.onnx"
    got, _, err = run_cli(capsys, "inspect", str(missing))
    assert got == 6
    assert_one_line_error(err, "[best]")


def test_calibration_that_overflows_float32_inside_the_model(capsys, case):
    """Found through a bit flip in the weights: an activation range of Inf (or NaN, which slipped through the
    running min and max) made TensorQuant raise ValueError (70). Samples near float32's largest value do it too."""
    (case / "calib.npz").write_bytes(npz_bytes({"x": TINY.calib["x"] * np.float32(3e38)}))
    _build_fails(capsys, case, DataError.exit_code, fragment="holds Inf or NaN")


@pytest.mark.parametrize("name, content", [
    ("quant.json", b'{"host_softmax": '),  # JSONDecodeError
    ("float/constants.npz", b""),  # EOFError, which click turned into "interrupted" (exit 130)
    ("integer/graph.json", b"[]"),  # TypeError
    ("integer/constants.json", None),  # a renamed constant: KeyError when the reference ran
])
def test_a_build_folder_whose_files_do_not_read_back(capsys, case, name, content):
    assert run_cli(capsys, "build", "model.onnx", "--calib", "calib.npz", "-o", "good", "-q")[0] == 0
    path = case / "good" / name
    path.write_bytes(content if content is not None else path.read_bytes().replace(b'"conv1_b"', b'"conv1_c"'))
    for argv in (("run", "good", "--inputs", "calib.npz", "-o", "out.npz"), ("report", "good", "-q")):
        if (name.startswith("float") or "constants" in name) and argv[0] == "report":
            continue  # report reads the JSON files only, and of the graphs only the integer one
        got, _, err = run_cli(capsys, *argv)
        assert got == 6, (argv, err)
        assert_one_line_error(err, "is not a readable hlsgen build folder")
    assert not (case / "out.npz").exists()
