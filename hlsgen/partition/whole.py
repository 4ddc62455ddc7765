"""Run a whole partitioned model: host stages in onnxruntime (float), accelerator segments on a backend.

A partitioned build folder holds `partition.json`, the host stages as `host/<stage>.onnx` and each segment
as a build folder of its own under `segments/<segment>/`. Backends of a segment:
- `reference`: the integer reference (the one specification of the accelerator's numerics);
- `csim`: the segment's HLS C++ compiled by g++ runs on the segment's integer inputs and must reproduce the
  integer reference's outputs bit for bit (else MismatchError, exit 5); those proven integers go on;
- `rtl`: the same with the segment's Verilated RTL.
Tensors cross a boundary quantized with the segment's input scales and dequantized with its output scales."""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np

from ..build_folder import load_build
from ..errors import DataError, PathError, UsageError
from ..npz_io import LABELS_KEY, write_npz
from .onnx_graph import session
from .plan import ACCELERATOR, Partition

PARTITION_FILE = "partition.json"
BACKENDS = ("reference", "csim", "rtl")


def is_partitioned(folder: Path) -> bool:
    return (Path(folder) / PARTITION_FILE).is_file()


def segment_folder(folder: Path, segment: str) -> Path:
    return Path(folder) / "segments" / segment


class WholeModel:
    """A partitioned build folder, loaded once, run on any number of samples."""

    def __init__(self, folder: Path, segment_run=None):
        """`segment_run(name, inputs) -> outputs`: runs the accelerator segments (hlsgen.runtime.Accelerator's
        device backends); without it, `run`'s backend proves them against the integer reference."""
        self.folder, self.segment_run = Path(folder), segment_run
        try:
            self.partition = Partition.from_json(json.loads((self.folder / PARTITION_FILE).read_text())["partition"])
        except (OSError, ValueError, KeyError) as exc:
            raise PathError(f"{self.folder / PARTITION_FILE} is not readable ({type(exc).__name__}); rebuild "
                            "the folder with `hlsgen build`") from None
        self._sessions: dict[str, object] = {}
        self._segments: dict[str, object] = {}

    @property
    def inputs(self) -> list[str]:
        return list(self.partition.inputs)

    @property
    def outputs(self) -> list[str]:
        return list(self.partition.outputs)

    def segment(self, name: str):
        if name not in self._segments:
            self._segments[name] = load_build(segment_folder(self.folder, name))
        return self._segments[name]

    def feeds(self, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The whole model's inputs from an npz's arrays (one input: any one key)."""
        data = {k: v for k, v in arrays.items() if k != LABELS_KEY}
        if len(self.inputs) == 1 and self.inputs[0] not in data and len(data) == 1:
            data = {self.inputs[0]: next(iter(data.values()))}
        missing = [n for n in self.inputs if n not in data]
        if missing:
            raise DataError(f"inputs: no array for graph input(s) {missing}; keys present: {sorted(arrays)}")
        counts = {np.asarray(data[n]).shape[0] for n in self.inputs}
        if len(counts) != 1:
            raise DataError(f"inputs hold different sample counts {sorted(counts)}")
        return {n: np.asarray(data[n]) for n in self.inputs}

    def run(self, arrays: dict[str, np.ndarray], backend: str = "reference", step=None) -> dict[str, np.ndarray]:
        """Every output of the model on N samples stacked along axis 0."""
        if backend not in BACKENDS:
            raise UsageError(f"--backend {backend!r}: choose one of {', '.join(BACKENDS)}")
        env = dict(self.feeds(arrays))
        for stage in self.partition.stages:
            ins = {t: env[t] for t in stage.inputs}
            if stage.side == ACCELERATOR and self.segment_run is not None:
                outs = self.segment_run(stage.name, ins)
            elif stage.side == ACCELERATOR:
                outs = self._run_segment(stage.name, ins, backend, step)
            else:
                outs = self._run_host(stage.name, ins, stage.outputs)
            env.update(dict(zip(stage.outputs, outs)))
        return {name: env[name] for name in self.outputs}

    def _run_host(self, name: str, ins: dict[str, np.ndarray], outputs) -> list[np.ndarray]:
        if name not in self._sessions:
            import onnx

            self._sessions[name] = session(onnx.load(str(self.folder / "host" / f"{name}.onnx")))
        sess = self._sessions[name]
        declared = {i.name: i for i in sess.get_inputs()}
        count = next(iter(ins.values())).shape[0]
        rows = []
        for i in range(count):  # the folded model runs one sample at a time (its batch axis is pinned to 1)
            feed = {}
            for t, v in ins.items():
                sample = v[i : i + 1]
                shape = declared[t].shape
                feed[t] = sample.reshape(shape) if list(sample.shape) != list(shape) else sample
                feed[t] = feed[t].astype(_ORT_TYPES.get(declared[t].type, feed[t].dtype), copy=False)
            rows.append(sess.run(list(outputs), feed))
        return [np.concatenate([r[k] for r in rows]) for k in range(len(outputs))]

    def _run_segment(self, name: str, ins: dict[str, np.ndarray], backend: str, step) -> list[np.ndarray]:
        quantized = self.segment(name)
        feeds = {t: ins[t] for t in quantized.float_graph.inputs}
        prove(segment_folder(self.folder, name), feeds, backend)
        outs = quantized.run(feeds)
        return [outs[t] for t in quantized.float_graph.outputs]


class SingleBuild:
    """A build folder whose whole model is one accelerator program, run as `WholeModel` runs a segment."""

    def __init__(self, folder: Path):
        self.folder, self.quantized = Path(folder), load_build(folder)

    def run(self, arrays: dict[str, np.ndarray], backend: str = "reference") -> dict[str, np.ndarray]:
        if backend not in BACKENDS:
            raise UsageError(f"--backend {backend!r}: choose one of {', '.join(BACKENDS)}")
        prove(self.folder, arrays, backend)
        return self.quantized.run(arrays)


def prove(folder: Path, feeds: dict[str, np.ndarray], backend: str) -> None:
    """Run the build's C++ (csim) or RTL (rtl) on `feeds`: every output integer must equal the integer
    reference's (else MismatchError, exit 5), so the reference's outputs are the hardware's."""
    if backend == "reference":
        return
    with tempfile.TemporaryDirectory(prefix="hlsgen-run-") as scratch:
        path = Path(scratch) / "inputs.npz"
        write_npz(path, feeds)
        if backend == "csim":
            from ..hls.verify import csim_build

            csim_build(folder, inputs=path)
        else:
            from ..rtl.sim import sim_build_dir, simulate

            if not (Path(folder) / "rtl").is_dir():
                raise UsageError(f"--backend rtl: {folder} has no Verilog RTL (its build says why: report.json "
                                 "designs.rtl); use --backend csim")
            simulate(folder, inputs=path, build_root=sim_build_dir())


_ORT_TYPES = {"tensor(float)": np.float32, "tensor(uint8)": np.uint8, "tensor(int8)": np.int8,
              "tensor(int64)": np.int64, "tensor(int32)": np.int32, "tensor(double)": np.float64}
