"""The CI fuzzing run: a fixed-seed `ci` run of 24 random models through float-vs-onnxruntime and C-sim (jobs=2),
and RTL for 8 or more of them (`make fuzz` runs 40 others, `make fuzz-long` 2,000): a few ROM-program models
through `build --verify csim,rtl`, and the models built with `--program external` for systolic8x8 on one
Verilator build of that target's top (the overlay runs model after model, hlsgen.rtl.overlay_sim), all
bit-exact. Zero mismatches and zero crashes."""
from __future__ import annotations

import time
from collections import Counter

from hlsgen.fuzz.campaign import specs
from hlsgen.fuzz.runner import rtl_folders, run_all
from hlsgen.rtl.overlay_sim import run_models

SEED, COUNT, ROM_RTL, OVERLAY_RTL = 0, 24, 2, 8


def test_ci_run(tmp_path):
    start = time.perf_counter()
    chosen = specs(SEED, COUNT, "ci")
    rom = [i for i, s in enumerate(chosen) if s.program == "rom"][:ROM_RTL]
    results = run_all([(s, i in rom) for i, s in enumerate(chosen)], tmp_path / "models", workers=2,
                      timeout=600, keep=True, portable=True)
    outcomes = Counter(r.outcome for r in results)
    failing = [f"seed {r.seed}: {r.outcome}: {r.message}" for r in results if r.outcome in ("mismatch", "crash")]
    assert not failing, "\n".join(failing)
    assert outcomes["ok"] >= 18, outcomes  # a generator that mostly makes rejects tests little
    rom_rtl = [r for r in results if r.rtl and r.outcome == "ok"]

    external = [folder for i, (s, r) in enumerate(zip(chosen, results))
                if s.program == "external" and s.target.builtin == "systolic8x8" and r.outcome == "ok"
                for folder in rtl_folders(tmp_path / "models" / f"model-{i}" / "out")]  # a partition: its segments
    _, runs = run_models(external[:OVERLAY_RTL], tmp_path / "overlay", images=2)
    assert all(run.mismatches == 0 and run.compared > 0 for run in runs), [(str(r.folder), r.mismatches) for r in runs]
    assert len(rom_rtl) + len(runs) >= 8
    print(f"fuzz ci run: {dict(outcomes)}; RTL bit-exact: {len(rom_rtl)} ROM-program builds, {len(runs)} models "
          f"on one overlay build; {time.perf_counter() - start:.0f} s")
