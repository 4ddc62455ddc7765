"""Load the ONNX conformance cases copied into tests/data/onnx-node-tests (see tests/data/PROVENANCE.md)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

CASES_DIR = Path(__file__).resolve().parent.parent / "data" / "onnx-node-tests"


@dataclass
class Case:
    name: str
    model: onnx.ModelProto
    inputs: list[np.ndarray]
    outputs: list[np.ndarray]


def case_names() -> list[str]:
    return sorted(p.name for p in CASES_DIR.iterdir() if (p / "model.onnx").is_file())


def load_case(name: str) -> Case:
    folder = CASES_DIR / name
    data = folder / "test_data_set_0"

    def tensors(prefix: str) -> list[np.ndarray]:
        files = sorted(data.glob(f"{prefix}_*.pb"), key=lambda p: int(p.stem.split("_")[-1]))
        return [numpy_helper.to_array(onnx.load_tensor(str(f))) for f in files]

    return Case(name, onnx.load(str(folder / "model.onnx")), tensors("input"), tensors("output"))


def relative_error(got: np.ndarray, expected: np.ndarray) -> float:
    """Max abs difference over the max abs expected value (exact match required for all-zero outputs)."""
    got64, exp64 = np.asarray(got, np.float64), np.asarray(expected, np.float64)
    if got64.shape != exp64.shape:
        return float("inf")
    if got64.size == 0:
        return 0.0
    same_inf = np.isinf(exp64) & (got64 == exp64)
    diff = np.where(same_inf, 0.0, np.abs(got64 - exp64))
    scale = np.abs(np.where(np.isinf(exp64), 0.0, exp64)).max()
    return float(diff.max() / scale) if scale > 0 else float(diff.max())
