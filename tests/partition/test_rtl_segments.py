"""Every segment of a partitioned model proven in the RTL, and the whole model run on the Verilated RTL."""
import json

import numpy as np
import onnx
import pytest

from tests.cli.test_errors import run_cli
from tests.partition.models import images, two_segment_chain

pytestmark = pytest.mark.rtl


@pytest.mark.slow
def test_the_whole_model_runs_on_the_rtl_of_its_segments(tmp_path, capsys):
    onnx.save(two_segment_chain(), tmp_path / "chain.onnx")
    np.savez(tmp_path / "calib.npz", x=images(16, (3, 8, 8)))
    np.savez(tmp_path / "test.npz", x=images(3, (3, 8, 8), seed=5))
    out = tmp_path / "chain_build"
    code, text, err = run_cli(capsys, "build", str(tmp_path / "chain.onnx"), "--calib", str(tmp_path / "calib.npz"),
                              "-o", str(out), "--verify", "csim,rtl")
    assert code == 0, err
    assert "accelerator: 100.0% of MACs in 2 segments; host: 2 nodes (InstanceNormalization, Exp)" in text
    report = json.loads((out / "report.json").read_text())
    assert [s["rtl"] for s in report["segments"].values()] == ["overlay", "overlay"]
    assert all(set(s["verified"]) == {"csim", "rtl"} for s in report["segments"].values())
    code, _, err = run_cli(capsys, "run", str(out), "--inputs", str(tmp_path / "test.npz"), "-o",
                           str(tmp_path / "rtl.npz"), "--backend", "rtl")
    assert code == 0, err
    assert run_cli(capsys, "run", str(out), "--inputs", str(tmp_path / "test.npz"), "-o",
                   str(tmp_path / "ref.npz"))[0] == 0
    assert np.array_equal(np.load(tmp_path / "rtl.npz")["y"], np.load(tmp_path / "ref.npz")["y"])
    code, text, _ = run_cli(capsys, "sim", str(out))
    assert code == 0 and "rtl: segment0 bit-exact" in text and "rtl: segment1 bit-exact" in text
