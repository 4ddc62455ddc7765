"""The testbench's data files: plain text, one sample per line, values in stream order.

Header line: `hlsgen-data <samples> <values per sample>`; a sample holds its ports' values one port
after the other (inputs in graph-input order, or outputs in graph-output order)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .layout import to_stream

MAGIC = "hlsgen-data"
INPUT_FILE, EXPECTED_FILE = "tb_input.dat", "tb_expected.dat"


def write_data(path: Path, arrays: list[np.ndarray]) -> tuple[int, int]:
    """Write samples (each array stacked on axis 0, one per port) and return (samples, values per sample)."""
    rows = np.concatenate([to_stream(np.asarray(a, np.int64)) for a in arrays], axis=1)
    lines = [f"{MAGIC} {rows.shape[0]} {rows.shape[1]}"]
    lines += [" ".join(map(str, row.tolist())) for row in rows]
    path.write_text("\n".join(lines) + "\n")
    return rows.shape


def write_test_data(folder: Path, graph, int_inputs: dict[str, np.ndarray], int_outputs: dict[str, np.ndarray],
                    input_file: str = INPUT_FILE, expected_file: str = EXPECTED_FILE) -> int:
    """The testbench's input and expected-output files (ports in graph order); returns the sample count."""
    samples, _ = write_data(folder / input_file, [int_inputs[t] for t in graph.inputs])
    write_data(folder / expected_file, [int_outputs[t] for t in graph.outputs])
    return samples
