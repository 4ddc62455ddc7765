"""Models the long fuzz profile found wrong, shrunk to their reproducers and kept: each now ends ok or with a
clean rejection, never a mismatch."""
from __future__ import annotations

from dataclasses import replace

from hlsgen.fuzz.runner import check
from hlsgen.fuzz.spec import LayerSpec, ModelSpec, TargetSpec


def test_a_global_pool_of_the_input_in_bands_is_never_two_passes_a_band(tmp_path):
    """Long seed 101061: GlobalMaxPool of an 11x300x6 input read from external memory by the target's top
    ran in 4 bands of 2 passes (11 channels on 8 lanes; a graph input is not split by channels), but the
    engine keeps one pass's totals from band to band: 55 of 781 C-sim outputs were wrong. Such a pool now
    runs in one band (the model's own top: bit-exact) or is refused as not fitting (the target's top)."""
    pools = (LayerSpec("gpool", {"op": "max"}), LayerSpec("gpool", {"op": "avg"}))
    spec = ModelSpec(seed=101061, shape=(11, 300, 6), layers=pools, target=TargetSpec(builtin="systolic8x8"),
                     program="external", samples=11)
    external = check(spec, tmp_path / "external")
    assert external.outcome == "rejected" and external.message.startswith("exit 3: "), external
    own = check(replace(spec, program="rom"), tmp_path / "rom")
    assert own.outcome == "ok", own
