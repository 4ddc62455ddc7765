"""`hlsgen csim`: prove a build's HLS C++ bit-exact against its integer reference by C simulation."""
from __future__ import annotations

import tempfile
from pathlib import Path

from ..errors import InputError
from ..npz_io import read_npz
from .csim import CsimMismatch, CsimResult, compile_csim, run_csim
from .emit import EXPECTED_FILE, INPUT_FILE, write_test_data


def csim_build(folder: Path, inputs: Path | None = None, portable: bool = False) -> CsimResult:
    """Compile OUT/hls/ and run its testbench: on the test vectors stored with the build, or on the samples
    of `inputs` (an npz, the `hlsgen run` convention) against the integer reference's outputs for them.
    Raises CsimMismatch when any output integer differs."""
    from ..build import load_build

    folder = Path(folder)
    quantized = load_build(folder)
    hls_dir = folder / "hls"
    if not hls_dir.is_dir():
        raise InputError(f"{folder} has no hls/ folder: this build has no HLS C++ (see `hlsgen build`'s warnings)")
    with tempfile.TemporaryDirectory(prefix="hlsgen-csim-") as scratch:
        work = Path(scratch)
        data_in, data_expected = hls_dir / INPUT_FILE, hls_dir / EXPECTED_FILE
        if inputs is not None:
            int_inputs = quantized.quantize_inputs(read_npz(inputs))
            expected = quantized.run_int(int_inputs)
            write_test_data(work, quantized.graph, int_inputs, expected)
            data_in, data_expected = work / INPUT_FILE, work / EXPECTED_FILE
        headers, compile_seconds = compile_csim(hls_dir, work / "csim", portable)
        result = run_csim(work / "csim", data_in, data_expected, headers, compile_seconds)
    if result.mismatches:
        details = "; ".join(line.removeprefix("csim: ") for line in result.log.splitlines()
                            if line.startswith("csim: mismatch") or "left over" in line or "ends after" in line)
        raise CsimMismatch(f"csim: {result.mismatches} of {result.compared} output integers differ from the integer "
                           f"reference ({result.samples} samples, {headers.description}): {details}")
    return result
