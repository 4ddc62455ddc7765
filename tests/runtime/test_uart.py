"""`hlsgen run DEPLOY --backend uart:PORT`: the host talking to an ECP5 board's firmware over its serial port.
The board is the whole SoC simulated in Verilator (the firmware the bitstream carries, serving the host; its
UART on a TCP port through LiteX's serial2tcp), so the run is the board's, down to the UART's bytes; ports
that do not answer, or answer as something else, are real TCP peers."""
from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

import numpy as np
import pytest

from hlsgen.cli import main
from hlsgen.deploy.boards import board
from hlsgen.deploy.soc_deploy import simulated_board
from hlsgen.errors import DeviceError
from hlsgen.runtime import Accelerator
from tests.cli.test_errors import assert_one_line_error, run_cli
from tests.deploy.test_soc import DIGITS, _require_soc_tools

SAMPLES = 6


@pytest.fixture(scope="module")
def deployed(tmp_path_factory) -> tuple[Path, Path]:
    _require_soc_tools()
    root = tmp_path_factory.mktemp("uart")
    build, deploy = root / "digits_ecp5", root / "ulx3s"
    assert main(["build", str(DIGITS / "digits.onnx"), "--target", "ecp5_8x8", "--calib", str(DIGITS / "calib.npz"),
                 "-o", str(build), "-q"]) == 0
    assert main(["deploy", str(build), "--board", "ulx3s-85f", "-o", str(deploy), "--no-bitstream", "-q"]) == 0
    return build, deploy


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("inputs") / "few.npz"
    test = np.load(DIGITS / "test.npz")
    np.savez(path, **{k: test[k][:SAMPLES] for k in test.files})
    return path


def test_the_simulated_board_answers_hlsgen_run_bit_exact(deployed, inputs, tmp_path, capsys):
    build, deploy = deployed
    with simulated_board(build, board("ulx3s-85f"), tmp_path / "sim") as (url, console):
        # the firmware the bitstream carries, asked for its stored images again: each the integer reference's
        want = np.load(build / "verify" / "int_outputs.npz")["logits"] & 0xFF
        for i, row in enumerate(want[:16]):
            assert f"image {i} out {bytes(int(v) for v in row).hex()} " in console
        code, out, err = run_cli(capsys, "run", str(deploy), "--backend", f"uart:{url}", "--inputs", str(inputs),
                                 "-o", str(tmp_path / "board.npz"))
        assert code == 0, err
        assert "cycles (first input to last output beat)" in out
        with Accelerator(deploy, f"uart:{url}") as accelerator:  # a second session on the same board
            again = accelerator.run(np.load(inputs)["image"][:2])
            model = json.loads((build / "report.json").read_text())["total"]["cycles"]
            assert abs(accelerator.last_cycles - model) <= 0.01 * model
            assert accelerator._device.last_soc_cycles > accelerator.last_cycles
    assert main(["run", str(build), "--inputs", str(inputs), "-o", str(tmp_path / "reference.npz")]) == 0
    board_out, reference = np.load(tmp_path / "board.npz"), np.load(tmp_path / "reference.npz")
    assert board_out["logits"].shape == (SAMPLES, 10)
    np.testing.assert_array_equal(board_out["logits"], reference["logits"])  # the same integers, dequantized
    np.testing.assert_array_equal(again["logits"], reference["logits"][:2])


class Peer:
    """A TCP peer on a free port that answers whatever it is sent with `answer` (None: stays silent)."""

    def __init__(self, answer: bytes | None):
        self.answer = answer
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"socket://127.0.0.1:{self.server.getsockname()[1]}"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        link, _ = self.server.accept()
        with link:
            while link.recv(64):
                if self.answer is not None:
                    link.sendall(self.answer)

    def close(self) -> None:
        self.server.close()


@pytest.mark.parametrize("answer, message", [
    (None, "did not answer hlsgen's identify request within 0.5 s (read nothing)"),
    (b"\r\nLiteX BIOS> ", "answered b'\\r\\nLiteX BIOS> ', not hlsgen's firmware"),
], ids=["silent", "another-program"])
def test_a_port_that_does_not_answer_as_hlsgen_is_a_one_line_error_not_a_hang(deployed, answer, message):
    peer = Peer(answer)
    try:
        with pytest.raises(DeviceError) as raised:
            Accelerator(deployed[1], f"uart:{peer.url}", timeout_s=0.5)
    finally:
        peer.close()
    assert message in str(raised.value) and peer.url in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_board_with_another_accelerator_is_named_with_the_id_it_sent(deployed, inputs, tmp_path, capsys):
    peer = Peer(b"hlsgen-id 0123456789abcdef ecpix5-85f\n")
    try:
        code, _, err = run_cli(capsys, "run", str(deployed[1]), "--backend", f"uart:{peer.url}",
                               "--inputs", str(inputs), "-o", str(tmp_path / "o.npz"))
    finally:
        peer.close()
    assert code == DeviceError.exit_code
    assert_one_line_error(err, peer.url, "runs another accelerator (hlsgen-id 0123456789abcdef on ecpix5-85f)",
                          "gateware/hlsgen_soc.bit")
    assert not (tmp_path / "o.npz").exists()


def test_ports_and_folders_the_uart_backend_cannot_take(deployed, inputs, tmp_path, capsys):
    build, deploy = deployed
    with socket.create_server(("127.0.0.1", 0)) as closed:
        port = closed.getsockname()[1]
    code, _, err = run_cli(capsys, "run", str(deploy), "--backend", f"uart:socket://127.0.0.1:{port}",
                           "--inputs", str(inputs), "-o", str(tmp_path / "o.npz"))
    assert code == DeviceError.exit_code
    assert_one_line_error(err, f"cannot open socket://127.0.0.1:{port}")
    code, _, err = run_cli(capsys, "run", str(build), "--backend", "uart:/dev/ttyUSB0", "--inputs", str(inputs),
                           "-o", str(tmp_path / "o.npz"))
    assert code == 2
    assert_one_line_error(err, "runs a deploy folder for an ECP5 board")
    code, _, err = run_cli(capsys, "run", str(deploy), "--inputs", str(inputs), "-o", str(tmp_path / "o.npz"))
    assert code == 2
    assert_one_line_error(err, "is a deploy folder: run it on its board with --backend uart:PORT")
    code, _, err = run_cli(capsys, "run", str(deploy), "--backend", "uart:", "--inputs", str(inputs),
                           "-o", str(tmp_path / "o.npz"))
    assert code == 2 and "uart:PORT" in err
    assert not (tmp_path / "o.npz").exists()


def test_a_top_with_external_memory_gets_its_weights_and_packed_inputs_over_the_uart(tmp_path, capsys):
    """The host uploads the weight image into the board's DRAM ('W') and packs each input into the feature-map
    image's layout (DEPLOY/model/input_pack.npy) before the firmware copies it there."""
    from tests.deploy.test_soc import small_buffers_target

    _require_soc_tools()
    build, deploy = tmp_path / "digits_small", tmp_path / "ulx3s"
    assert main(["build", str(DIGITS / "digits.onnx"), "--target", str(small_buffers_target(tmp_path)), "--calib",
                 str(DIGITS / "calib.npz"), "-o", str(build), "-q"]) == 0
    assert main(["deploy", str(build), "--board", "ulx3s-85f", "-o", str(deploy), "--no-bitstream", "-q"]) == 0
    images = np.load(DIGITS / "test.npz")["image"][:2]
    with simulated_board(build, board("ulx3s-85f"), tmp_path / "sim") as (url, console):
        assert "the weights are not in DRAM yet" in console  # a board at reset: nothing uploaded
        with Accelerator(deploy, f"uart:{url}") as accelerator:
            got = accelerator.run(images)
    with Accelerator(build) as reference:
        want = reference.run(images)
    np.testing.assert_array_equal(got["logits"], want["logits"])
