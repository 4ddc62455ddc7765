"""An input of more channels than the array has rows, neither dividing nor a multiple of them (40 mel bands on
16 rows), packed at G = R when its R whole copies would crowd the maps out of the activation memory: the input
stream writes channel c into bank c mod 16 at word (c >> 4) * frames + frame, the 1-D Conv reads 48 lanes a
tap (the last 8 with zero weights); C-sim and RTL bit-exact, the RTL at the model's cycles. On systolic16x16 with
64 KiB of activation memory: the shipped 160 KiB hold the 16 whole copies."""
import json

import pytest
import yaml

from bench import build_root
from hlsgen.hw import builtin_targets
from tests.hw.models import mel_frames_model
from verified_build import verified_build


@pytest.mark.csim
@pytest.mark.rtl
def test_forty_mel_bands_packed_sixteen_to_a_word_are_bit_exact(tmp_path, monkeypatch):
    monkeypatch.setenv("HLSGEN_SIM_BUILD", str(build_root()))
    data = yaml.safe_load(builtin_targets()["systolic16x16"].read_text())
    data["buffers"]["input"]["kib"] = 64
    (tmp_path / "small.yaml").write_text(yaml.safe_dump(data))
    verified_build(mel_frames_model(), tmp_path, "mel_frames", "--input-range", "-1,1", "--target",
                   str(tmp_path / "small.yaml"))
    program = json.loads((tmp_path / "build" / "program.json").read_text())
    assert program["memory"]["maps"]["x"]["banks"] == 16 and program["residency"]["feature_maps"] == "on_chip"
    assert {r["tiles"]["reduction_channels"] for r in program["rows"] if r["nodes"] == ["front"]} == {48}
