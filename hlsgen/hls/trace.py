"""Find the first layer whose C-simulated output differs from the integer reference: rerun one image
through the testbench built with -DHLSGEN_TRACE, where top.cpp logs every layer's output tensor, and
compare each tensor with the reference's in call (topological) order."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..ir import Graph
from ..reference import run_graph
from .csim import CsimBuildError, compile_csim, run_csim
from .emit import EXPECTED_FILE, INPUT_FILE, write_test_data
from .layout import AXES

TRACE_ENV = "HLSGEN_TRACE_FILE"


@dataclass(frozen=True)
class LayerTrace:
    layer: str
    tensor: str
    values: np.ndarray  # int64, stream (row-major) order


def first_difference(hls_dir: Path, graph: Graph, inputs_file: Path, image: int, work: Path,
                     portable: bool = False) -> str:
    """'first wrong value: image I, layer L (tensor T): element [...] csim v, reference w' for image `image`
    of the data file `inputs_file`, or a sentence saying every layer matches. Compiles and runs in `work`
    (an empty folder)."""
    feeds = read_image(inputs_file, graph, image)
    reference = run_graph(graph, feeds, keep_all=True)
    write_test_data(work, graph, feeds, {t: reference[t] for t in graph.outputs})
    headers, _ = compile_csim(hls_dir, work / "csim_trace", portable, trace=True)
    log = work / "trace.txt"
    result = run_csim(work / "csim_trace", work / INPUT_FILE, work / EXPECTED_FILE, headers, env={TRACE_ENV: str(log)})
    traces = read_trace(log) if log.is_file() else []
    if not traces:
        raise CsimBuildError("the C testbench built with -DHLSGEN_TRACE logged no layer")
    for t in traces:
        difference = compare(t, np.asarray(reference[t.tensor], np.int64))
        if difference:
            return f"first wrong value: image {image}, layer {t.layer} (tensor {t.tensor}): {difference}"
    if result.mismatches:  # e.g. an input stream not read to its end
        return f"image {image}: every layer's output matches the integer reference"
    return f"image {image}: every layer matches the integer reference; the expected outputs differ from it"


def compare(trace: LayerTrace, want: np.ndarray) -> str | None:
    """The first element where `trace` differs from the reference tensor `want` (batch 1), or None."""
    flat = want.reshape(-1)
    common = min(flat.size, trace.values.size)
    wrong = np.flatnonzero(trace.values[:common] != flat[:common])
    if wrong.size:
        i = int(wrong[0])
        index = ", ".join(str(int(j)) for j in np.unravel_index(i, want.shape[1:]))
        axes = f" ({AXES[want.ndim].removeprefix('N, ')})" if want.ndim in AXES else ""
        return f"element [{index}]{axes} csim {int(trace.values[i])}, reference {int(flat[i])}"
    if trace.values.size != flat.size:
        return f"csim wrote {trace.values.size} values, the reference tensor has {flat.size}"
    return None


def read_image(path: Path, graph: Graph, image: int) -> dict[str, np.ndarray]:
    """One image of a testbench input file (see tbdata), each graph input shaped as the graph declares."""
    lines = Path(path).read_text().splitlines()
    values = np.array(lines[1 + image].split(), np.int64)
    feeds, start = {}, 0
    for t in graph.inputs:
        shape = graph.shape(t)
        count = int(np.prod(shape))
        feeds[t] = values[start:start + count].reshape(shape)
        start += count
    return feeds


def read_trace(path: Path) -> list[LayerTrace]:
    """The lines 'layer<TAB>tensor<TAB>count<TAB>v0 v1 ...' of a traced run, in call order."""
    traces = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        fields = line.split("\t")
        values = fields[3].split() if len(fields) == 4 else []
        if len(fields) != 4 or not fields[2].isdigit() or len(values) != int(fields[2]):
            raise CsimBuildError(f"{path}: unreadable trace line {line[:80]!r}")
        traces.append(LayerTrace(fields[0], fields[1], np.array(values, np.int64)))
    return traces
