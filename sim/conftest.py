"""Fixtures of the whole-model benches: build folders of the test models, made once per session."""
from pathlib import Path

import pytest

from hlsgen.cli import main
from models import model_files


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
