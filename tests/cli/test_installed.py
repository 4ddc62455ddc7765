"""The installed console script works outside the source tree, with its data files."""
import subprocess
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]


def hlsgen_script() -> str:
    script = Path(sys.executable).parent / "hlsgen"
    assert script.exists(), f"the hlsgen console script is not installed next to {sys.executable}; run `pip install .`"
    return str(script)


def test_console_script_runs_outside_the_repo(tmp_path):
    model = REPO / "examples" / "digits" / "digits.onnx"
    test_set = np.load(REPO / "examples" / "digits" / "test.npz")
    np.savez(tmp_path / "few.npz", image=test_set["image"][:5], labels=test_set["labels"][:5])
    done = subprocess.run(
        [hlsgen_script(), "run", str(model), "--inputs", "few.npz", "-o", "y.npz"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "top-1 accuracy" in done.stdout
    assert np.load(tmp_path / "y.npz")["logits"].shape == (5, 10)


def test_package_finds_its_data_folders(tmp_path):
    code = "from hlsgen.resources import data_dir; print(data_dir('templates')); print(data_dir('hw_models'))"
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert all(Path(line).is_dir() for line in done.stdout.split())
