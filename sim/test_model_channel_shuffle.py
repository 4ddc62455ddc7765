"""ShuffleNetV2 units (issue 26) built with `hlsgen build --verify csim,rtl`: the channel shuffles and the
chunks' halves are Gathers of channels, taken into the next 1x1 convs' weights, except the half a unit passes
on, which is a 1x1 conv of 0/1 weights writing onto the Concat's grid; the whole model one program, bit-exact in
C-sim and RTL at the performance model's cycles."""
import pytest

from bench import build_root
from tests.rtl.shuffle import shufflenet_model
from verified_build import verified_build


@pytest.mark.csim
@pytest.mark.rtl
def test_channel_shuffles_run_on_the_accelerator_bit_exact_at_the_model_s_cycles(tmp_path, monkeypatch):
    monkeypatch.setenv("HLSGEN_SIM_BUILD", str(build_root()))
    report = verified_build(shufflenet_model(), tmp_path, "shufflenet", "--target", "systolic8x8",
                            "--input-range", "0,1")
    assert (len(report["partition"]["segments"]), report["partition"]["host_nodes"]) == (1, [])
    ops = [layer["op"] for layer in report["layers"]]
    # stem, 3 per unit, head, and one 0/1 copy per unit; no requantization before the Concats
    assert ops.count("QConv") == 1 + 2 * 4 + 1 and ops.count("Concat") == 2 and len(ops) == 12
