"""Fixtures of the whole-model benches: build folders of the test models, made once per session."""
import os
from pathlib import Path

import pytest

from hlsgen.cli import main
from models import model_files

# The Verilator harness's cache (hlsgen.runtime.harness) beside the benches' builds, not under ~/.cache.
SIM_BUILD = os.environ.get("HLSGEN_SIM_BUILD", str(Path(__file__).resolve().parents[1] / "sim_build"))
os.environ.setdefault("HLSGEN_CACHE", SIM_BUILD)


@pytest.fixture(scope="session")
def build_folder(tmp_path_factory):
    made = {}

    def make(name: str, target: str, batch: int = 1) -> tuple[Path, Path]:
        if (name, target, batch) not in made:
            folder = tmp_path_factory.mktemp(f"{name}_{target}_{batch}")
            model, calib, test = model_files(name, folder)
            out = folder / "build"
            assert main(["build", str(model), "--target", target, "--calib", str(calib), "-o", str(out), "-q",
                         "--batch", str(batch)]) == 0
            made[name, target, batch] = out, test
        return made[name, target, batch]

    return make
