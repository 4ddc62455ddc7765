"""Models the long fuzz profile found wrong, shrunk to their reproducers and kept: each now ends ok or with a
clean rejection, never a mismatch."""
from __future__ import annotations

from dataclasses import replace


from hlsgen.hls.csim import PORTABLE_ENV
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


def test_a_detector_pair_of_heads_on_a_1x1_map_is_bit_exact(tmp_path, monkeypatch):
    """Long seed 6, shrunk: a 1x1 map through a conv, two 1x1 head convs (1 and 2 channels) each made NHWC and
    reshaped to (H*W, c), concatenated on c (a detector's boxes and scores): C-sim gave 0 for element [0, 2]
    (the second head's second channel) where the integer reference has the value (vendor and portable
    headers alike); maps of 4x5 were bit-exact. On a 1x1 map the NHWC Transpose cancels, and the Reshape of
    the 2-channel head (1, 2, 1, 1) -> (1, 1, 2) aliased its map (channel c in bank c) as one channel of two
    pixels (bank 0, words 0 and 1): the mapping let a one-pixel map's Reshape through whatever its channels
    became. It is now refused like any Reshape changing channels that a non-Dense reads, so the Reshape and
    the Concat run on the host and the segment is bit-exact (and has RTL)."""
    monkeypatch.setenv(PORTABLE_ENV, "1")
    conv = {"k": [1, 1], "stride": [1, 1], "dil": [1, 1], "pads": [0, 0, 0, 0], "groups": 1, "bias": False,
            "bn": False, "act": "relu", "out": 4}
    heads = [dict(conv, act="none", out=1), dict(conv, act="none", out=2)]
    spec = ModelSpec(seed=1, shape=(4, 1, 1), layers=(LayerSpec("conv", conv),),
                     outputs=(LayerSpec("head", {"at": None, "convs": heads, "ops": []}),))
    result = check(spec, tmp_path)
    assert result.outcome == "ok", result
