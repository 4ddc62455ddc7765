"""hlsgen's host runtime (docs/runtime.md): `Accelerator(OUT, backend=...)` runs a whole build, its host stages
in numpy/onnxruntime and its accelerator program(s) on a backend, loading each program once and then running
inferences back to back:

- `reference`: the integer reference (the one specification of the numerics);
- `csim`: the HLS C++ compiled by g++, proven equal to the reference on the inputs, whose outputs go on;
- `rtl`: the Verilated RTL. A build with the target's top (`--program external`) runs as on a board: the
  C++ harness (hlsgen.runtime.harness: AXI4 memory, AXI4-Lite master) is driven through the driver's register
  sequence (hlsgen.runtime.driver), inputs and outputs through memory. A build with the model's own top runs in
  the stream testbench (`hlsgen sim`'s cocotb flow), proven equal to the reference;
- `pynq`: a Zynq board running PYNQ (hlsgen.runtime.pynq), the same driver over pynq's MMIO and buffers;
- `uart:PORT`: an ECP5 board's SoC (a deploy folder from `hlsgen deploy --board ulx3s-85f|ecpix5-85f`), its
  firmware served over the serial port PORT (hlsgen.runtime.uart), or the same SoC simulated in Verilator.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import UsageError
from ..partition.whole import SingleBuild, WholeModel, is_partitioned, prove, segment_folder
from .layout import ModelLayout
from .uart import DeployedSoc, UartDevice, port_of

BACKENDS = ("reference", "csim", "rtl", "pynq")


class Accelerator:
    """A build folder (one program, or a partitioned model's host stages and segments) on `backend`, or an
    ECP5 board's deploy folder on `uart:PORT`. `device`: keyword options of the device backends (rtl:
    `read_latency`, `mhz`; pynq: `bitstream`; uart: `timeout_s`)."""

    def __init__(self, folder: Path, backend: str = "reference", **device):
        if backend not in BACKENDS and port_of(backend) is None:
            raise UsageError(f"backend {backend!r}: choose one of {', '.join(BACKENDS)} or uart:PORT")
        self.folder, self.backend, self._options = Path(folder), backend, device
        self._platform = None
        self._device = None
        self._programs: dict[Path, ModelLayout] = {}
        if port_of(backend) is not None:
            deploy = DeployedSoc.read(self.folder)
            self.model = SingleBuild(deploy.model)
            self._device = UartDevice(port_of(backend), deploy, **device)  # a port that does not answer says so now
        elif is_partitioned(self.folder):
            self.model = WholeModel(self.folder, segment_run=self._run_segment)
        else:
            self.model = SingleBuild(self.folder)
        if backend == "pynq":
            self._open_device()  # a board that is not there says so now, not at the first inference

    # ---- the whole model ----------------------------------------------------------------------------------

    def run(self, inputs: dict[str, np.ndarray] | np.ndarray) -> dict[str, np.ndarray]:
        """Every output of the model on N samples stacked along axis 0 (floats, as `hlsgen run` writes)."""
        if isinstance(self.model, WholeModel):
            return self.model.run(inputs if isinstance(inputs, dict) else {self.model.inputs[0]: inputs})
        return self._run_segment_folder(self.folder, self.model.quantized, inputs)

    def close(self) -> None:
        if isinstance(self._device, UartDevice):
            self._device.close()
        if self._platform is not None and hasattr(self._platform, "close"):
            self._platform.close()
        self._platform = self._device = None

    def __enter__(self) -> "Accelerator":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def last_cycles(self) -> int:
        """The device's CYCLES after its last run (device backends; 0 otherwise)."""
        return self._device.last_cycles if self._device is not None else 0

    # ---- one accelerator program ------------------------------------------------------------------------

    def _run_segment(self, name: str, ins: dict[str, np.ndarray]) -> list[np.ndarray]:
        folder = segment_folder(self.folder, name)
        quantized = self.model.segment(name)
        outs = self._run_segment_folder(folder, quantized, {t: ins[t] for t in quantized.float_graph.inputs})
        return [outs[t] for t in quantized.float_graph.outputs]

    def _run_segment_folder(self, folder: Path, quantized, arrays) -> dict[str, np.ndarray]:
        if not isinstance(arrays, dict):
            arrays = {quantized.float_graph.inputs[0]: arrays}
        if self.backend in ("reference", "csim") or (self.backend == "rtl" and not _has_target_top(folder)):
            prove(folder, arrays, self.backend)
            return quantized.run(arrays)
        int_feeds = quantized.quantize_inputs(arrays)
        if isinstance(self._device, UartDevice):
            return quantized.dequantize_outputs(self._run_on_uart(quantized, int_feeds))
        return quantized.dequantize_outputs(self._run_on_device(folder, quantized, int_feeds))

    def _run_on_uart(self, quantized, int_feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The integer outputs of N samples, one inference at a time on the board's SoC: a sample's input
        beats (the graph's inputs one after another), its output bytes one integer each."""
        graph = quantized.graph
        count, samples = _samples(graph, int_feeds)
        rows = [np.frombuffer(self._device.run(sample)[0], np.uint8).astype(np.int64) for sample in samples]
        outs, at = {}, 0
        for name in graph.outputs:
            shape = tuple(graph.tensors[name].shape[1:])
            size = int(np.prod(shape))
            raw = np.stack([row[at:at + size] for row in rows]).reshape((count,) + shape)
            outs[name] = raw - 256 * (raw >= 128) if graph.quant[name].signed else raw  # a byte per integer
            at += size
        return outs

    def _run_on_device(self, folder: Path, quantized, int_feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The integer outputs of N samples, one inference at a time on the device (the program loaded once)."""
        layout = self._load(folder)
        graph = quantized.graph
        count, samples = _samples(graph, int_feeds)
        results = [self._device.run((sample & 0xFF).astype(np.uint8).tobytes()) for sample in samples]
        outs, at = {}, 0
        for name, o in zip(graph.outputs, layout.outputs):
            raw = np.frombuffer(b"".join(r[at:at + o.bytes] for r in results), np.uint8).reshape(count, o.bytes)
            values = raw.astype(np.int8 if o.signed else np.uint8).astype(np.int64)
            outs[name] = values.reshape((count,) + tuple(graph.tensors[name].shape[1:]))
            at += o.bytes
        return outs

    def _load(self, folder: Path) -> ModelLayout:
        """Load `folder`'s program unless it is the one the device holds."""
        self._open_device(folder)
        layout = self._programs.get(folder) or ModelLayout.read(folder)
        if self._device.layout is not layout:
            rtl = folder / "rtl"
            self._device.load(layout, (rtl / "program.bin").read_bytes(), (rtl / "weights.bin").read_bytes())
            self._programs[folder] = layout
        return layout

    def _open_device(self, folder: Path | None = None) -> None:
        if self._device is not None:
            return
        from .driver import Device

        if self.backend == "pynq":
            from .pynq import open_pynq

            self._platform, base, size = open_pynq(self.folder, **self._options)
        else:
            from .harness import open_harness

            self._platform, base, size = open_harness(folder or self.folder, **self._options)
        self._device = Device(self._platform, base, size)


def _samples(graph, int_feeds: dict[str, np.ndarray]) -> tuple[int, np.ndarray]:
    """N, and each sample's integer inputs one after another (graph-input order, an element each)."""
    count = len(int_feeds[graph.inputs[0]])
    return count, np.concatenate([np.asarray(int_feeds[t], np.int64).reshape(count, -1) for t in graph.inputs], axis=1)


def _has_target_top(folder: Path) -> bool:
    return (Path(folder) / "driver" / "model.json").is_file()


__all__ = ["Accelerator", "BACKENDS"]
