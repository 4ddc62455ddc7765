"""Generate the HLS C++ of a model in code and C-simulate it with g++ (no vendor tool)."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx

from hlsgen.frontend import import_model
from hlsgen.hls import write_hls
from hlsgen.hls.csim import CsimResult, compile_csim, run_csim
from hlsgen.hls.emit import EXPECTED_FILE, INPUT_FILE
from hlsgen.hls.overlay.design import overlay_config
from hlsgen.hls.overlay.units import memories
from hlsgen.hw import load_target
from hlsgen.passes import optimize
from hlsgen.quant import BitConfig, QuantizedModel, quantize


def quantize_model(model: onnx.ModelProto, calib: dict[str, np.ndarray], bits: int = 8) -> QuantizedModel:
    graph = import_model(model)
    optimize(graph)
    return quantize(graph, calib, BitConfig(bits, bits))


def generate(quantized: QuantizedModel, inputs: dict[str, np.ndarray], out: Path, target: str = "systolic16x16",
             top: str = "tiny", offchip=None, design: str = "dataflow"):
    """OUT/hls-style sources in `out`, with `inputs` (real values) and their integer reference outputs;
    `design` as write_hls takes it (these helpers' callers test the per-layer kernels unless they say)."""
    int_inputs = quantized.quantize_inputs(inputs)
    return write_hls(out, quantized.graph, load_target(target), top, f"{top}.onnx", int_inputs,
                     quantized.run_int(int_inputs), offchip=offchip, design=design)


def csim(hls_dir: Path, portable: bool = False) -> CsimResult:
    """Compile and run the testbench on the data written with the sources."""
    headers, seconds = compile_csim(hls_dir, hls_dir / "csim.bin", portable)
    return run_csim(hls_dir / "csim.bin", hls_dir / INPUT_FILE, hls_dir / EXPECTED_FILE, headers, seconds)


def generate_and_csim(model: onnx.ModelProto, calib, tmp_path: Path, portable: bool = True, bits: int = 8,
                      **kwargs) -> CsimResult:
    quantized = quantize_model(model, calib, bits)
    generate(quantized, calib, tmp_path / "hls", **kwargs)
    return csim(tmp_path / "hls", portable)


def overlay_memories(quantized, mapping, drop, add=None):
    """The overlay's config and its shared memories with partition `drop` (buffer, Partition) removed and
    `add` placed instead: a design that lost its banking, for the proof to catch."""
    c = overlay_config(quantized.graph, mapping)
    mems = memories(c)
    placed = tuple(p for p in mems.placed if p != drop) + ((add,) if add else ())
    assert len(placed) == len(mems.placed) - (0 if add else 1), f"{drop} is not a partition of the memories"
    return c, replace(mems, placed=placed)
