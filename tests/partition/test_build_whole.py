"""`hlsgen build` of a model the accelerator runs in part: segments, host stages, the whole model's outputs."""
import json

import numpy as np
import onnx
import pytest

from hlsgen.partition.whole import WholeModel
from hlsgen.quant.report import sqnr_db
from tests.builders import run_ort
from tests.cli.test_errors import assert_one_line_error, run_cli
from tests.partition.models import detector, heavy_host_op, images


@pytest.fixture(scope="module")
def model_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("whole")
    onnx.save(detector(), folder / "detector.onnx")
    onnx.save(heavy_host_op(), folder / "heavy.onnx")
    np.savez(folder / "calib.npz", x=images(32))
    np.savez(folder / "test.npz", x=images(6, seed=9))
    return folder


@pytest.fixture(scope="module")
def built(model_files):
    from hlsgen.cli import main

    out = model_files / "det_build"
    assert main(["build", str(model_files / "detector.onnx"), "--calib", str(model_files / "calib.npz"), "-o",
                 str(out), "--verify", "csim", "-q"]) == 0
    return out


def test_the_build_holds_segments_host_stages_and_the_partition(built):
    for name in ("build.json", "partition.json", "model.onnx", "host/host0.onnx", "host/host1.onnx", "report.html",
                 "segments/segment0/report.json", "segments/segment1/hls", "verify/inputs.npz"):
        assert (built / name).exists(), name
    report = json.loads((built / "report.json").read_text())
    partition = report["partition"]
    assert partition["segments"] == ["segment0", "segment1"]
    assert partition["host_nodes"] == ["inorm", "exp", "decode", "rmax"]
    assert partition["accelerator_nodes"] == 7 and partition["macs_on_accelerator"] == partition["macs_total"] > 0
    assert report["total"]["cycles"] == sum(s["cycles"] for s in report["segments"].values())
    assert all(s["verified"]["csim"] for s in report["segments"].values())
    assert set(report["quality"]["sqnr_db"]) == {"boxes", "scores", "best"}
    assert min(report["quality"]["sqnr_db"].values()) >= 25
    page = (built / "report.html").read_text()
    assert 'class="node host"' in page and "segments/segment1/report.html" in page


def test_run_gives_the_whole_models_outputs(built, model_files, tmp_path, capsys):
    code, out, _ = run_cli(capsys, "run", str(built), "--inputs", str(model_files / "test.npz"),
                           "-o", str(tmp_path / "y.npz"))
    assert code == 0 and "outputs boxes, scores, best" in out
    got = dict(np.load(tmp_path / "y.npz"))
    test = np.load(model_files / "test.npz")["x"]
    expected = {k: np.concatenate([run_ort(detector(), {"x": test[i : i + 1]})[k] for i in range(len(test))])
                for k in ("boxes", "scores", "best")}
    for name, value in expected.items():
        assert got[name].shape == value.shape
        assert sqnr_db(value, got[name]) >= 25, name
    again = WholeModel(built).run({"x": test})
    assert all(np.array_equal(again[k], got[k]) for k in got)


@pytest.mark.csim
def test_run_on_the_csim_backend_proves_each_segment(built, model_files, tmp_path, capsys):
    code, _, _ = run_cli(capsys, "run", str(built), "--inputs", str(model_files / "test.npz"),
                         "-o", str(tmp_path / "c.npz"), "--backend", "csim")
    assert code == 0
    reference = WholeModel(built).run(dict(np.load(model_files / "test.npz")))
    assert all(np.array_equal(np.load(tmp_path / "c.npz")[k], v) for k, v in reference.items())
    code, out, _ = run_cli(capsys, "csim", str(built))
    assert code == 0 and "segment0 bit-exact" in out and "segment1 bit-exact" in out


def test_accelerator_only_names_the_host_nodes(model_files, tmp_path, capsys):
    out = tmp_path / "no"
    code, _, err = run_cli(capsys, "build", str(model_files / "detector.onnx"), "--calib",
                           str(model_files / "calib.npz"), "-o", str(out), "--accelerator-only", "-q")
    assert code == 8
    assert_one_line_error(err)
    assert "'inorm' (InstanceNormalization" in err and "'exp' (Exp" in err and "--accelerator-only" in err
    assert not out.exists()


def test_a_partition_over_the_host_mac_budget_is_refused(model_files, tmp_path, capsys):
    out = tmp_path / "heavy"
    code, _, err = run_cli(capsys, "build", str(model_files / "heavy.onnx"), "--input-range", "0,1", "-o", str(out), "-q")
    assert code == 8
    assert_one_line_error(err)
    assert "'up' (ConvTranspose" in err and "--max-host-macs" in err
    assert not out.exists()
    code, out_text, _ = run_cli(capsys, "build", str(model_files / "heavy.onnx"), "--input-range", "0,1", "-o",
                                str(out), "--max-host-macs", "100")
    assert code == 0 and "accelerator: " in out_text and "host: 1 node (ConvTranspose)" in out_text
    assert json.loads((out / "report.json").read_text())["partition"]["host_nodes"] == ["up"]


def test_a_model_whole_on_the_accelerator_keeps_its_layout(model_files, tmp_path):
    from hlsgen.cli import main

    model = detector(middle_host=False)
    # only the heads' post-processing is left out: cut the model at the head convolutions
    keep = [n for n in model.graph.node if n.name in {"conv1", "relu1", "same", "conv2", "relu2", "head_box"}]
    del model.graph.node[:]
    model.graph.node.extend(keep)
    del model.graph.output[:]
    model.graph.output.extend([onnx.helper.make_tensor_value_info("h1", onnx.TensorProto.FLOAT, ["N", 4, 16, 16])])
    onnx.save(model, tmp_path / "plain.onnx")
    out = tmp_path / "plain_build"
    assert main(["build", str(tmp_path / "plain.onnx"), "--calib", str(model_files / "calib.npz"), "-o", str(out),
                 "-q"]) == 0
    assert (out / "quant.json").is_file() and not (out / "partition.json").exists()
    partition = json.loads((out / "report.json").read_text())["partition"]
    assert partition["host_nodes"] == [] and partition["segments"] == ["segment0"]
