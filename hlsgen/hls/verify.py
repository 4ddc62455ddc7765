"""`hlsgen csim`: prove a build's HLS C++ bit-exact against its integer reference by C simulation."""
from __future__ import annotations

import re
import tempfile
from pathlib import Path

from ..build_folder import load_build
from ..errors import PathError
from ..ir import Graph
from ..npz_io import read_npz
from ..progress import Step, silent
from .csim import CsimBuildError, CsimMismatch, CsimResult, compile_csim, run_csim
from .emit import EXPECTED_FILE, INPUT_FILE, write_test_data
from .trace import first_difference

IMAGE = re.compile(r"\bimage (\d+)\b")


def csim_build(folder: Path, inputs: Path | None = None, portable: bool = False, step: Step = silent) -> CsimResult:
    """Compile OUT/hls/ and run its testbench: on the test vectors stored with the build, or on the samples
    of `inputs` (an npz, the `hlsgen run` convention) against the integer reference's outputs for them.
    Raises CsimMismatch when any output integer differs, naming the first wrong layer, image and element.
    `step` reports the compilation, the simulation and the trace of a mismatch as they run."""
    folder = Path(folder)
    quantized = load_build(folder)
    hls_dir = folder / "hls"
    if not hls_dir.is_dir():
        raise PathError(f"{folder} has no hls/ folder: this build has no HLS C++ (see `hlsgen build`'s warnings)")
    with tempfile.TemporaryDirectory(prefix="hlsgen-csim-") as scratch:
        work = Path(scratch)
        data_in, data_expected = hls_dir / INPUT_FILE, hls_dir / EXPECTED_FILE
        if inputs is not None:
            int_inputs = quantized.quantize_inputs(read_npz(inputs))
            expected = quantized.run_int(int_inputs)
            write_test_data(work, quantized.graph, int_inputs, expected)
            data_in, data_expected = work / INPUT_FILE, work / EXPECTED_FILE
        with step("g++ compile of the HLS C++"):
            headers, compile_seconds = compile_csim(hls_dir, work / "csim", portable)
        with step("C simulation"):
            result = run_csim(work / "csim", data_in, data_expected, headers, compile_seconds)
        if result.mismatches:
            raise CsimMismatch(_mismatch_text(result, hls_dir, quantized.graph, data_in, work / "trace", portable,
                                              step))
    return result


def _mismatch_text(result: CsimResult, hls_dir: Path, graph: Graph, data_in: Path, work: Path, portable: bool,
                   step: Step) -> str:
    """One line: how many outputs differ, the first wrong value of the first failing image (traced layer by
    layer), then the testbench's own reports of the outputs that differ."""
    details = [line.removeprefix("csim: ") for line in result.log.splitlines()
               if line.startswith("csim: mismatch") or "left over" in line or "ends after" in line]
    images = [int(m.group(1)) for m in map(IMAGE.search, details) if m]
    if not images:
        raise CsimBuildError(f"the C testbench reported {result.mismatches} mismatches but named no image")
    work.mkdir()
    with step(f"C simulation trace of image {images[0]} to find the first wrong layer"):
        where = first_difference(hls_dir, graph, data_in, images[0], work, portable)
    return (f"csim: {result.mismatches} of {result.compared} output integers differ from the integer reference "
            f"({result.samples} images, {result.headers.description}): {where}; " + "; ".join(details))
