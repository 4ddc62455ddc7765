"""hlsgen.runtime.Accelerator: a build with the target's top runs on the `rtl` backend as on a board (the driver's
register sequence against the Verilated top, inputs and outputs through memory, the program loaded once), equal
to the integer reference; `hlsgen run --backend rtl` likewise; a partitioned model's two segments share one
device, each loaded when its stage runs; a device that does not answer is a one-line DeviceError, never a hang."""
import numpy as np
import onnx
import pytest

from hlsgen.cli import main
from hlsgen.errors import DeviceError
from hlsgen.rtl import control
from hlsgen.runtime import Accelerator
from hlsgen.runtime.driver import Device
from hlsgen.runtime.harness import open_harness
from tests.cli.test_errors import assert_one_line_error, run_cli
from tests.partition.models import images, two_segment_chain
from tests.runtime.test_harness import CALIB, EXAMPLE

pytestmark = pytest.mark.rtl
TEST = EXAMPLE.parent / "test.npz"


@pytest.fixture(scope="module")
def digits(tmp_path_factory):
    out = tmp_path_factory.mktemp("accelerator") / "build"
    assert main(["build", str(EXAMPLE), "--calib", str(CALIB), "--target", "systolic8x8", "--program", "external",
                 "-o", str(out), "-q"]) == 0
    return out


def test_the_rtl_backend_equals_the_reference_back_to_back(digits):
    x = np.load(TEST)["image"][:5]
    with Accelerator(digits, "reference") as reference, Accelerator(digits, "rtl") as rtl:
        want = reference.run(x)["logits"]
        got = rtl.run(x)["logits"]
        assert rtl.last_cycles > 0
        again = rtl.run(x[:2])["logits"]  # the program stays loaded: no second LOAD
    assert np.array_equal(got, want) and np.array_equal(again, want[:2])


def test_hlsgen_run_with_the_rtl_backend(digits, tmp_path, capsys):
    test = tmp_path / "test.npz"
    np.savez(test, **{k: v[:40] for k, v in np.load(TEST).items()})
    code, text, err = run_cli(capsys, "run", str(digits), "--inputs", str(test), "-o", str(tmp_path / "rtl.npz"),
                              "--backend", "rtl")
    assert code == 0, err
    assert "rtl: the device's last inference took" in text and "top-1 accuracy" in text
    assert main(["run", str(digits), "--inputs", str(test), "-o", str(tmp_path / "ref.npz")]) == 0
    assert np.array_equal(np.load(tmp_path / "rtl.npz")["logits"], np.load(tmp_path / "ref.npz")["logits"])


def test_a_partitioned_models_segments_share_one_device(tmp_path):
    onnx.save(two_segment_chain(), tmp_path / "chain.onnx")
    np.savez(tmp_path / "calib.npz", x=images(16, (3, 8, 8)))
    out = tmp_path / "chain_build"
    assert main(["build", str(tmp_path / "chain.onnx"), "--calib", str(tmp_path / "calib.npz"), "-o", str(out),
                 "--target", "systolic8x8", "--program", "external", "-q"]) == 0
    x = {"x": images(3, (3, 8, 8), seed=5)}
    with Accelerator(out, "reference") as reference, Accelerator(out, "rtl") as rtl:
        assert np.array_equal(rtl.run(x)["y"], reference.run(x)["y"])


def test_a_run_that_never_finishes_is_a_timeout(digits):
    platform, base, size = open_harness(digits)
    try:
        device = Device(platform, base, size, timeout_us=1)
        with pytest.raises(DeviceError, match=r"loading the program: no DONE after \d+ us \(CONTROL reads"):
            device.load(*_images(digits))
    finally:
        platform.close()


class Unprogrammed:
    """A bus whose every register reads 0 (an FPGA without its bitstream)."""

    def read(self, offset: int) -> int:
        return 0

    def write(self, offset: int, value: int) -> None:
        pass


def test_a_device_with_the_wrong_id_is_named(digits):
    with pytest.raises(DeviceError, match=f"ID register reads 0x00000000, not {control.ident():#010x}"):
        Device(Unprogrammed(), 0, 1 << 20)


def test_the_pynq_backend_off_a_board_says_why(digits, tmp_path, capsys):
    code, _, err = run_cli(capsys, "run", str(digits), "--inputs", str(TEST), "-o", str(tmp_path / "o.npz"),
                           "--backend", "pynq")
    assert code == DeviceError.exit_code
    assert_one_line_error(err, "--backend pynq runs on a board with PYNQ", "--backend rtl")


def _images(folder):
    from hlsgen.runtime.layout import ModelLayout

    return (ModelLayout.read(folder), (folder / "rtl" / "program.bin").read_bytes(),
            (folder / "rtl" / "weights.bin").read_bytes())


@pytest.mark.slow
def test_a_real_cnn_on_the_rtl_backend_equals_the_reference(tmp_path):
    """MLPerf Tiny's ResNet-8 on the shipped systolic16x16's top, three images back to back."""
    from hlsgen.architectures import ARCHITECTURES, calibration_data

    model = ARCHITECTURES["resnet8"]()
    onnx.save(model, tmp_path / "resnet8.onnx")
    key = model.graph.input[0].name
    np.savez(tmp_path / "calib.npz", **{key: calibration_data(model, n=16, seed=0)})
    out = tmp_path / "build"
    assert main(["build", str(tmp_path / "resnet8.onnx"), "--calib", str(tmp_path / "calib.npz"), "-o", str(out),
                 "--target", "systolic16x16", "--program", "external", "-q"]) == 0
    x = calibration_data(model, n=3, seed=1)
    with Accelerator(out, "reference") as reference, Accelerator(out, "rtl") as rtl:
        want, got = reference.run(x), rtl.run(x)
    assert want.keys() == got.keys() and all(np.array_equal(got[k], want[k]) for k in want)


@pytest.mark.parametrize("name", ["three_outputs", pytest.param("concat_inputs", marks=pytest.mark.slow)])
def test_several_inputs_and_outputs_through_the_targets_top(name, tmp_path):
    """The header's maps: streamed in the stream testbench (--verify rtl) and through memory on the device."""
    import json

    from tests.rtl.multi_output import concat_inputs_model, three_outputs_model

    model = {"three_outputs": three_outputs_model, "concat_inputs": concat_inputs_model}[name]()
    onnx.save(model, tmp_path / f"{name}.onnx")
    out = tmp_path / "build"
    assert main(["build", str(tmp_path / f"{name}.onnx"), "--target", "systolic8x8", "--input-range", "0,1", "-o",
                 str(out), "-q", "--program", "external", "--verify", "rtl"]) == 0
    assert json.loads((out / "report.json").read_text())["rtl_simulation"]["without_backpressure"]["bit_exact"]
    rng = np.random.default_rng(0)
    x = {i.name: rng.random([3] + [d.dim_value for d in i.type.tensor_type.shape.dim][1:]).astype(np.float32)
         for i in model.graph.input}
    with Accelerator(out, "reference") as reference, Accelerator(out, "rtl") as rtl:
        want, got = reference.run(x), rtl.run(x)
    assert len(want) == len(model.graph.output) and all(np.array_equal(got[k], want[k]) for k in want)


@pytest.mark.slow
@pytest.mark.parametrize("name, shape", [("fpn_detector", "input:1x3x64x64"), ("ssd_uint8_nhwc", None)])
def test_torch_exported_detectors_on_the_rtl_backend(name, shape, tmp_path):
    """Whole detectors (tests/data/exporters: host decode heads, the FPN's 9 outputs through memory) on the
    shipped systolic16x16's top, equal to the reference."""
    from pathlib import Path

    data = Path(__file__).resolve().parents[1] / "data" / "exporters"
    out = tmp_path / "build"
    assert main(["build", str(data / f"{name}.onnx"), "--calib", str(data / f"{name}_calib.npz"), "-o", str(out),
                 "--target", "systolic16x16", "--program", "external", "-q",
                 *(["--input-shape", shape] if shape else [])]) == 0
    x = {k: v[:2] for k, v in np.load(data / f"{name}_calib.npz").items()}
    with Accelerator(out, "reference") as reference, Accelerator(out, "rtl") as rtl:
        want, got = reference.run(x), rtl.run(x)
    assert len(want) > 1 and all(np.array_equal(got[k], want[k]) for k in want)
