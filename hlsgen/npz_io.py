"""The npz convention shared by `hlsgen run`, calibration and verification.

Keys are the graph's input (or output) names; each array stacks N samples along the batch axis.
A single-input model accepts any one key (a `labels` array is allowed beside it).
"""
from __future__ import annotations

import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from .errors import DataError
from .paths import require_file
from .ir import Graph

LABELS_KEY = "labels"


def read_npz(path: str | os.PathLike) -> dict[str, np.ndarray]:
    p = require_file(path, "file (an .npz)")
    try:
        with np.load(p, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except Exception as exc:  # whatever zipfile and numpy's header parser raise on a malformed file (BadZipFile,
        # zlib.error, ValueError, EOFError, tokenize.TokenError, MemoryError for a header's huge shape, ...)
        text = " ".join(str(exc).split())[:120] or type(exc).__name__
        raise DataError(f"{p}: not a readable .npz file ({text})") from None


def write_npz(path: str | os.PathLike, arrays: dict[str, np.ndarray]) -> None:
    """Write atomically (a reader never sees a half-written file) and reproducibly (fixed zip timestamps,
    so the same arrays always give the same bytes; np.savez stamps the current time)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent, suffix=".npz.tmp")
    try:
        with os.fdopen(fd, "wb") as f, zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as archive:
            for key, value in arrays.items():
                info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
                with archive.open(info, "w") as member:
                    np.lib.format.write_array(member, np.asarray(value), allow_pickle=False)
        os.chmod(tmp, 0o644)  # mkstemp makes it private; a build's files are for everyone who can read the folder
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def match_inputs(graph: Graph, arrays: dict[str, np.ndarray], source: str = "inputs") -> dict[str, np.ndarray]:
    """Pick and check the arrays that feed each graph input (batch axis first, any N >= 1)."""
    data = {k: v for k, v in arrays.items() if k != LABELS_KEY}
    if len(graph.inputs) == 1 and graph.inputs[0] not in data:
        if len(data) != 1:
            raise DataError(
                f"{source}: expected one array for input {graph.inputs[0]!r}, found keys {sorted(arrays)}"
            )
        data = {graph.inputs[0]: next(iter(data.values()))}
    missing = [name for name in graph.inputs if name not in data]
    if missing:
        raise DataError(f"{source}: no array for graph input(s) {missing}; keys present: {sorted(arrays)}")
    feeds = {}
    counts = set()
    for name in graph.inputs:
        array = np.asarray(data[name])
        info = graph.tensors[name]
        steps = graph.input_steps.get(name)
        if steps is not None and steps.takes(array):  # the file's array: its preprocessing makes the graph's
            array = _run_steps(steps, array, name, source)
        declared = graph.input_shapes.get(name)
        if declared is not None and tuple(array.shape[1:]) == tuple(declared[1:]):  # the model file's shape
            array = array.reshape((array.shape[0], *info.shape[1:]))
        if steps is not None and (array.ndim != len(info.shape) or tuple(array.shape[1:]) != info.shape[1:]
                                  or not np.issubdtype(array.dtype, np.floating)):
            raise DataError(f"{source}: array {name!r} has shape {array.shape} and dtype {array.dtype}, expected "
                            f"(N, {', '.join(map(str, steps.shape[1:]))}) {steps.dtype} as the model takes it")
        if array.ndim != len(info.shape) or tuple(array.shape[1:]) != info.shape[1:]:
            raise DataError(
                f"{source}: array {name!r} has shape {array.shape}, expected (N, {', '.join(map(str, (declared or info.shape)[1:]))})"
            )
        if array.shape[0] == 0:
            raise DataError(f"{source}: array {name!r} holds no samples")
        if array.shape[0] % info.shape[0]:
            raise DataError(f"{source}: {array.shape[0]} samples do not split into batches of {info.shape[0]}")
        if not np.can_cast(array.dtype, info.dtype, casting="same_kind"):
            raise DataError(f"{source}: array {name!r} has dtype {array.dtype}, expected {info.dtype}")
        counts.add(array.shape[0])
        feeds[name] = array.astype(info.dtype, copy=False)
    if len(counts) > 1:
        raise DataError(f"{source}: inputs hold different sample counts {sorted(counts)}")
    return feeds


def _run_steps(steps, array: np.ndarray, name: str, source: str) -> np.ndarray:
    """The graph input's values from the file's array (Graph.input_steps), its integers checked in range."""
    if np.issubdtype(np.dtype(steps.dtype), np.integer) and array.size:
        limits = np.iinfo(np.dtype(steps.dtype))
        lo, hi = int(array.min()), int(array.max())
        if lo < limits.min or hi > limits.max:
            raise DataError(f"{source}: array {name!r} holds values in [{lo}, {hi}], outside the {steps.dtype} "
                            "the model takes")
    with np.errstate(all="ignore"):
        return steps.apply(array)


def check_labels(labels: np.ndarray, count: int, source: str) -> np.ndarray:
    """`labels` when they are one integer class per sample, else a DataError naming what they are."""
    if labels.shape != (count,) or not np.issubdtype(labels.dtype, np.integer):
        raise DataError(f"{source}: '{LABELS_KEY}' must be {count} integers (one class per sample), "
                        f"got {labels.dtype} {labels.shape}")
    return labels


def top1_accuracy(logits: np.ndarray, labels: np.ndarray) -> float:
    """Fraction of samples whose arg-max over the last axis equals the label."""
    predictions = np.asarray(logits).reshape(len(labels), -1).argmax(axis=1)
    return float(np.mean(predictions == np.asarray(labels).reshape(-1)))
