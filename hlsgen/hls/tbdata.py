"""The testbench's data files: plain text, one sample per line, values in stream order.

Header line: `hlsgen-data <samples> <values per sample>`; a sample holds its ports' values one port
after the other (inputs in graph-input order, or outputs in graph-output order)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .layout import to_stream

MAGIC = "hlsgen-data"


def write_data(path: Path, arrays: list[np.ndarray]) -> tuple[int, int]:
    """Write samples (each array stacked on axis 0, one per port) and return (samples, values per sample)."""
    rows = np.concatenate([to_stream(np.asarray(a, np.int64)) for a in arrays], axis=1)
    lines = [f"{MAGIC} {rows.shape[0]} {rows.shape[1]}"]
    lines += [" ".join(map(str, row.tolist())) for row in rows]
    path.write_text("\n".join(lines) + "\n")
    return rows.shape
