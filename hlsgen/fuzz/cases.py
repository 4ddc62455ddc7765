"""One input-fuzzing case: which mutator, on which seed, through which `hlsgen` command, drawn from
(seed, index) alone so that any split of the cases over worker processes draws the same ones."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from . import mutate_files, mutate_onnx
from .mutant import Mutant
from .seeds import Seeds

MODEL, CALIB, TARGET_FILE, CONFIG_FILE = "model.onnx", "calib.npz", "target.yaml", "config.yaml"
OUT, OUT_NPZ = "out", "out.npz"
BUILD_VARIANTS = (("--bits", "4"), ("--bits", "6"), ("--program", "external"), ("--hls-design", "dataflow"),
                  ("--dump-ir",), ("--json",))
BAD_BUILD = "build"  # a copy of the prepared build with one file mutated
GOOD = "good"  # the prepared build folder that `run`, `csim` and `sim` read, beside the cases


@dataclass(frozen=True)
class Mutator:
    name: str
    kind: str  # which file it mutates: onnx, calib, target, config, or one of a build folder's
    mutate: Callable[..., Mutant]


MUTATORS: tuple[Mutator, ...] = (
    *(Mutator(f.__name__, "onnx", f) for f in mutate_onnx.ONNX_MUTATORS),
    *(Mutator(f.__name__, "calib", f) for f in mutate_files.CALIB_MUTATORS),
    *(Mutator(f.__name__, "target", f) for f in mutate_files.TARGET_MUTATORS),
    *(Mutator(f.__name__, "config", f) for f in mutate_files.CONFIG_MUTATORS),
    Mutator("build_file", "build", mutate_files.build_file),
)


@dataclass(frozen=True)
class Case:
    index: int
    mutator: str
    mutant: Mutant
    files: dict  # file name in the case folder -> bytes
    argv: tuple[str, ...]  # `hlsgen` arguments, run inside the case folder (GOOD names the prepared build)
    prebuilt: bool  # OUT holds a copy of the prepared build before the command runs
    build_copy: bool = False  # BAD_BUILD holds a copy of the prepared build before `files` are written

    @property
    def command(self) -> str:
        if self.argv[0] != "run":
            return self.argv[0]
        return "run-model" if self.argv[1].endswith(".onnx") else "run-build"


def draw_case(seeds: Seeds, seed: int, index: int, good: str) -> Case:
    """Case `index`: the mutators take turns; everything else comes from the generator of (seed, index).
    `good` is the path of the prepared build folder (of the first seed model)."""
    rng = np.random.default_rng([seed, index])
    mutator = MUTATORS[index % len(MUTATORS)]
    on_good = mutator.kind == "calib" and rng.random() < 0.4  # through run/csim/sim on the prepared build
    model = seeds.models[0] if on_good or mutator.kind == "build" else seeds.models[int(rng.integers(len(seeds.models)))]
    files = {MODEL: model.onnx_bytes, CALIB: model.calib_bytes}
    build = ("build", MODEL, "--calib", CALIB, "-o", OUT, "-q")
    if mutator.kind == "onnx":
        mutant = mutator.mutate(rng, model)
        files[MODEL] = mutant.data
        argv = _choose(rng, (build, build, build, build, ("inspect", MODEL), ("run", MODEL, "--inputs", CALIB, "-o", OUT_NPZ)))
    elif mutator.kind == "calib":
        mutant = mutator.mutate(rng, model)
        files[CALIB] = mutant.data
        if on_good:
            commands = [("run", good, "--inputs", CALIB, "-o", OUT_NPZ)]
            if mutator.mutate in mutate_files.REFUSED_INPUTS:  # refused before any g++ or Verilator run
                commands += [("csim", good, "--inputs", CALIB, "-q"), ("sim", good, "--inputs", CALIB, "-q")]
            argv = _choose(rng, commands)
        else:
            argv = _choose(rng, (build, build, ("run", MODEL, "--inputs", CALIB, "-o", OUT_NPZ)))
    elif mutator.kind == "build":
        name, mutant = mutator.mutate(rng, {n: (Path(good) / n).read_bytes() for n in mutate_files.BUILD_FILES})
        files = {CALIB: model.calib_bytes, f"{BAD_BUILD}/{name}": mutant.data}
        argv = _choose(rng, (("run", BAD_BUILD, "--inputs", CALIB, "-o", OUT_NPZ), ("report", BAD_BUILD, "-q")))
        return Case(index, mutator.name, mutant, files, argv, False, build_copy=True)
    elif mutator.kind == "target":
        mutant = mutator.mutate(rng, seeds.target_yaml)
        files[TARGET_FILE] = mutant.data
        argv = (*build, "--target", TARGET_FILE)
    else:
        mutant = mutator.mutate(rng, seeds.config)
        files[CONFIG_FILE] = mutant.data
        argv = ("build", MODEL, "--config", CONFIG_FILE, "-o", OUT, "-q")
    if argv[0] == "build" and rng.random() < 0.25:  # the bad file meets another path through the build
        argv = (*argv, *_choose(rng, BUILD_VARIANTS))
    prebuilt = argv[0] == "build" and rng.random() < 0.25
    return Case(index, mutator.name, mutant, files, argv, prebuilt)


def _choose(rng: np.random.Generator, commands):
    return tuple(commands[int(rng.integers(len(commands)))])
