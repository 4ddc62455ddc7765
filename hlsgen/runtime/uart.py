"""The `uart:PORT` backend: a deploy folder for an ECP5 board (`hlsgen deploy BUILD --board ulx3s-85f`), whose
SoC's firmware (templates/firmware/main.c) serves the host over its serial port. PORT is anything pyserial
opens: /dev/ttyUSB0 on a board, socket://127.0.0.1:N for the simulated SoC (hlsgen.deploy.soc_sim.serving).

The protocol, one command byte at a time: 'I' is answered by the line "hlsgen-id ID BOARD" (ID: the
accelerator's, in DEPLOY/deploy.json); 'W' (an accelerator that reads its weights from the board's DRAM:
once, when the device is opened) is followed by DEPLOY/rtl/weights.bin and answered by 'K'; 'R' is followed
by the input's words and is answered by 'O', the output bytes and two little-endian 32-bit counts (the
accelerator's cycles, the whole inference's). The firmware answers '+' after each BLOCK bytes of what
follows 'W' or 'R' but the last. An input that lives in the accelerator's feature-map image is packed by the
host as the deploy folder's table says (DEPLOY/model/input_pack.npy). Every read has a deadline: a port that does not
answer, or answers as something else, is a one-line DeviceError naming the port and what it read."""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import DeviceError, UsageError

TIMEOUT_S = 10.0  # a board answers 'I' within milliseconds, once its firmware has run the stored images
PREFIX = "uart:"


@dataclass(frozen=True)
class DeployedSoc:
    """What the host needs of a deploy folder for an ECP5 board (its deploy.json)."""

    folder: Path
    board: str
    model_id: str
    in_words: int
    in_width: int
    out_bytes: int
    block: int
    baud: int
    weights: Path | None = None  # the weight image the host uploads ('W'), or None
    input_pack: Path | None = None  # the packing table of an input in the feature-map image, or None

    @property
    def model(self) -> Path:
        """The build's quantized model, copied into the deploy folder (quantize in, dequantize out)."""
        return self.folder / "model"

    @classmethod
    def read(cls, folder: Path) -> "DeployedSoc":
        record = Path(folder) / "deploy.json"
        host = json.loads(record.read_text()).get("host") if record.is_file() else None
        if not host:
            raise UsageError(f"--backend uart:PORT runs a deploy folder for an ECP5 board (hlsgen deploy BUILD "
                             f"--board ulx3s-85f -o DEPLOY); {folder} is not one")
        files = {key: Path(folder) / host[key] if host.get(key) else None for key in ("weights", "input_pack")}
        return cls(Path(folder), host["board"], host["model_id"], int(host["in_words"]), int(host["in_width"]),
                   int(host["out_bytes"]), int(host["block"]), int(host["baud"]), **files)


def port_of(backend: str) -> str | None:
    """PORT of a `uart:PORT` backend, else None."""
    return backend[len(PREFIX):] if backend.startswith(PREFIX) else None


class UartDevice:
    """The board's firmware behind `port`, identified as `deploy`'s accelerator when opened."""

    def __init__(self, port: str, deploy: DeployedSoc, timeout_s: float = TIMEOUT_S):
        import serial

        if not port:
            raise UsageError("--backend uart:PORT needs a port: uart:/dev/ttyUSB0, or uart:socket://HOST:N")
        self.port, self.deploy, self.timeout_s = port, deploy, timeout_s
        self.last_cycles = 0
        self.last_soc_cycles = 0
        try:
            self._pack = None if deploy.input_pack is None else np.load(deploy.input_pack)  # (source, constant)
        except OSError as exc:
            raise UsageError(f"cannot read {deploy.input_pack}: {exc.strerror or exc}; deploy again") from None
        try:
            self._serial = serial.serial_for_url(port, baudrate=deploy.baud, timeout=timeout_s, write_timeout=timeout_s)
        except (serial.SerialException, ValueError, OSError) as exc:
            raise DeviceError(f"cannot open {port}: {exc}") from None
        try:
            self._identify()
            if deploy.weights is not None:
                self._upload_weights()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        self._serial.close()

    def run(self, beats: np.ndarray) -> tuple[bytes, int, int]:
        """One image's input beats through the accelerator: its output bytes, the accelerator's cycles and the
        whole inference's (the firmware's copy of the input, the registers, the wait, the read back)."""
        from ..deploy.firmware import pack_words

        if self._pack is not None:
            beats = self._packed(np.asarray(beats, np.int64).ravel())
        words = pack_words(beats, self.deploy.in_width)
        data = np.asarray(words, "<u4").tobytes()
        if len(words) != self.deploy.in_words:
            raise UsageError(f"an image of {len(words)} words, where {self.deploy.folder}'s accelerator takes "
                             f"{self.deploy.in_words}")
        self._serial.reset_input_buffer()  # what the firmware printed meanwhile (a terminal's key, a reset)
        self._send(b"R", data, "the input")
        answer = self._read(1 + self.deploy.out_bytes + 8, "the output of an inference")
        if answer[:1] == b"N":
            raise DeviceError(f"{self.port}'s firmware has no weights in DRAM (a board reset since they were "
                              "uploaded?): run again")
        if answer[:1] != b"O":
            raise DeviceError(f"{self.port} answered {answer[:40]!r} to an inference, not 'O' and "
                              f"{self.deploy.out_bytes} output bytes")
        outputs = answer[1:1 + self.deploy.out_bytes]
        self.last_cycles, self.last_soc_cycles = (int(v) for v in np.frombuffer(answer[-8:], "<u4"))
        return outputs, self.last_cycles, self.last_soc_cycles

    def _packed(self, flat: np.ndarray) -> np.ndarray:
        """The input's bytes as the accelerator's feature-map image holds them (hlsgen.hw.dram.pack_gather)."""
        source, constant = self._pack
        if flat.size <= source.max():
            raise UsageError(f"an input of {flat.size} elements, where {self.deploy.folder}'s accelerator takes "
                             f"{source.max() + 1}")
        return np.where(source >= 0, flat[np.maximum(source, 0)] & 0xFF, constant)

    def _upload_weights(self) -> None:
        """The weight image into the board's DRAM ('W'), where the accelerator reads it."""
        try:
            image = self.deploy.weights.read_bytes()
        except OSError as exc:
            raise DeviceError(f"cannot read {self.deploy.weights}: {exc.strerror or exc}") from None
        self._send(b"W", image, "the weights")
        self._expect(b"K", "its 'K' after the weights")

    # ---- the link -----------------------------------------------------------------------------------------

    def _send(self, command: bytes, data: bytes, what: str) -> None:
        """`command`, then `data` a block at a time, each block but the last answered by the firmware's '+'."""
        self._write(command)
        for at in range(0, len(data), self.deploy.block):
            self._write(data[at:at + self.deploy.block])
            if at + self.deploy.block < len(data):
                self._expect(b"+", f"its '+' after a block of {what}")

    def _identify(self) -> None:
        self._serial.reset_input_buffer()
        self._write(b"I")
        deadline, seen = time.monotonic() + self.timeout_s, b""
        while time.monotonic() < deadline:
            seen += self._serial.readline()
            lines = seen.decode("ascii", "replace").splitlines()
            answer = next((line.split() for line in lines if line.startswith("hlsgen-id ")), None)
            if answer and seen.endswith(b"\n"):
                break
        else:
            if not seen:
                raise DeviceError(f"{self.port} did not answer hlsgen's identify request within "
                                  f"{self.timeout_s:g} s (read nothing): is the board programmed with "
                                  f"{self.deploy.folder}/gateware/hlsgen_soc.bit, and is {self.port} its serial port?")
            raise DeviceError(f"{self.port} answered {seen[-60:]!r}, not hlsgen's firmware: program the board with "
                              f"{self.deploy.folder}/gateware/hlsgen_soc.bit")
        got = answer[1] if len(answer) > 1 else ""
        if got != self.deploy.model_id:
            raise DeviceError(f"{self.port} runs another accelerator (hlsgen-id {got or '?'}"
                              f"{' on ' + answer[2] if len(answer) > 2 else ''}), not {self.deploy.folder}'s "
                              f"{self.deploy.model_id}: program the board with "
                              f"{self.deploy.folder}/gateware/hlsgen_soc.bit")

    def _write(self, data: bytes) -> None:
        import serial

        try:
            self._serial.write(data)
            self._serial.flush()
        except (serial.SerialException, OSError) as exc:
            raise DeviceError(f"cannot write to {self.port}: {exc}") from None

    def _read(self, count: int, what: str) -> bytes:
        import serial

        try:
            data = self._serial.read(count)
        except (serial.SerialException, OSError) as exc:
            raise DeviceError(f"cannot read {self.port}: {exc}") from None
        if len(data) < count:
            raise DeviceError(f"{self.port} sent {len(data)} of the {count} bytes of {what} within "
                              f"{self.timeout_s:g} s (read {data[:40]!r})")
        return data

    def _expect(self, token: bytes, what: str) -> None:
        got = self._read(len(token), what)
        if got != token:
            raise DeviceError(f"{self.port} answered {got!r} where hlsgen's firmware sends {what}")
