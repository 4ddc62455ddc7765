"""The exporter-made models of tests/data/exporters (torch.onnx.export, see its README) built whole:
each on systolic16x16 with >= 95% of its MACs on the accelerator, its whole-model outputs close to
onnxruntime's, every segment's C++ bit-exact."""
import json
from pathlib import Path

import numpy as np
import onnx
import pytest

from hlsgen.cli import main
from hlsgen.partition.whole import SingleBuild, WholeModel, segment_folder
from hlsgen.quant.report import sqnr_db
from tests.builders import run_ort

DATA = Path(__file__).resolve().parents[1] / "data" / "exporters"
MODELS = ["conv1d_audio", "focus_silu", "cls_head_decode", "shufflenet_block", "fpn_detector", "ssd_uint8_nhwc",
          "espcn_sr", "se_mobilenetv3", "dwsep_audio1d", "unet_decoder", "fpn_bilinear"]
SHAPES = {"fpn_detector": ["--input-shape", "input:1x3x64x64"], "espcn_sr": ["--input-shape", "input:1x1x32x32"]}


def _build(name: str, out: Path, *extra: str) -> dict:
    assert main(["build", str(DATA / f"{name}.onnx"), "--calib", str(DATA / f"{name}_calib.npz"), "-o", str(out),
                 "-q", *SHAPES.get(name, []), *extra]) == 0
    return json.loads((out / "report.json").read_text())


@pytest.mark.parametrize("name", MODELS)
def test_an_exported_model_builds_with_its_macs_on_the_accelerator(name, tmp_path):
    report = _build(name, tmp_path / name)
    partition = report["partition"]
    assert partition["macs_on_accelerator"] >= 0.95 * partition["macs_total"] > 0
    # one layer program with RTL, the host running only what comes before and after it
    segments = report.get("segments") or {name: {"rtl": report["designs"]["rtl"]["design"]}}
    assert len(segments) == 1 and all(s["rtl"] for s in segments.values()), segments
    quality = report.get("quality") or json.loads((tmp_path / name / "quant.json").read_text())["quality"]
    assert min(quality["sqnr_db"].values()) >= 25, quality


@pytest.mark.parametrize("name", ["focus_silu", "cls_head_decode", "fpn_detector", "ssd_uint8_nhwc"])
def test_the_whole_models_outputs_follow_onnxruntime(name, tmp_path):
    out = tmp_path / name
    _build(name, out)
    model = onnx.load(str(DATA / f"{name}.onnx"))
    calib = dict(np.load(DATA / f"{name}_calib.npz"))
    (key,) = calib
    got = WholeModel(out).run(calib)
    assert list(got) == [o.name for o in model.graph.output]
    for i in range(len(calib[key])):
        expected = run_ort(model, {key: calib[key][i : i + 1]})
        for output, value in expected.items():
            assert got[output][i : i + 1].shape == value.shape
            if np.issubdtype(value.dtype, np.floating):
                assert sqnr_db(value, got[output][i : i + 1]) >= 20, (output, i)


@pytest.mark.slow
@pytest.mark.csim
@pytest.mark.rtl
def test_shufflenet_runs_whole_on_the_accelerator_bit_exact_in_csim_and_rtl(tmp_path):
    """ShuffleNetV2: its channel shuffles and chunks are Gathers of channels, in the 1x1 convs' weights or
    (the halves a unit passes on) 1x1 convs of 0/1 weights; the whole model one program, no host node."""
    report = _build("shufflenet_block", tmp_path / "s", "--verify", "csim,rtl")
    assert report["partition"]["host_nodes"] == [] and "segments" not in report
    assert report["verification"]["csim"]["passed"] and report["verification"]["rtl"]["passed"]
    measured = report["rtl_simulation"]["without_backpressure"]
    assert measured["bit_exact"] and measured["cycles"] == measured["cycles_model"]


@pytest.mark.slow
@pytest.mark.rtl
def test_the_super_resolution_net_runs_whole_on_the_rtl(tmp_path):
    """ESPCN: the whole model is one accelerator program (its Tanhs are lookup tables, the Sigmoid after the
    DepthToSpace moves before it; the DepthToSpace at the output is the host's permutation of the output as it
    reads it), bit-exact in C-sim and RTL, and the model's output from the Verilated RTL equal to the integer
    reference's."""
    out = tmp_path / "espcn"
    report = _build("espcn_sr", out, "--verify", "csim,rtl")
    assert report["partition"]["host_nodes"] == [] and report["verification"]["rtl"]["passed"]
    assert json.loads((out / "quant.json").read_text())["host_depth_to_space"]
    calib = {k: v[:2] for k, v in np.load(DATA / "espcn_sr_calib.npz").items()}
    whole = SingleBuild(out)
    rtl, reference = whole.run(calib, "rtl")["output"], whole.run(calib)["output"]
    assert rtl.shape == (2, 1, 96, 96) and np.array_equal(rtl, reference)


def test_the_bilinear_fpn_runs_whole_and_follows_onnxruntime(tmp_path):
    """Its half_pixel Resizes as nearest upsampling and a depthwise Conv, its align_corners one as the vector
    unit's interpolation, the full-resolution logits written band by band on chip: one program, no host node."""
    out = tmp_path / "fpn_bilinear"
    report = _build("fpn_bilinear", out)
    assert report["partition"]["host_nodes"] == [] and "segments" not in report
    model, calib = onnx.load(str(DATA / "fpn_bilinear.onnx")), dict(np.load(DATA / "fpn_bilinear_calib.npz"))
    (key,) = calib
    got = SingleBuild(out).run({key: calib[key][:2]})
    for i in range(2):
        for output, value in run_ort(model, {key: calib[key][i : i + 1]}).items():
            assert sqnr_db(value, got[output][i : i + 1]) >= 30, (output, i)


def test_segments_too_big_for_the_memory_keep_their_joins_and_write_outputs_band_by_band(tmp_path):
    """U-Net with its last ConvTranspose dilated (same output shape; hlsgen decomposes dilation 1 only, so it
    runs on the host): the decoder's skip Concat of that host map and an encoder map stays on the accelerator,
    and the first segment writes the encoder map it hands to the second (a segment output, 64 KiB) band by
    band on chip while its input streams through external memory. C-sim bit-exact (--verify csim)."""
    model = onnx.load(str(DATA / "unet_decoder.onnx"))
    up = next(n for n in model.graph.node if n.name == "/up1/ConvTranspose")
    del up.attribute[:]
    up.attribute.extend([onnx.helper.make_attribute(k, v) for k, v in (("kernel_shape", [4, 4]), ("strides", [2, 2]),
                         ("dilations", [2, 2]), ("pads", [3, 3, 2, 2]))])
    onnx.save(model, str(tmp_path / "unet_host.onnx"))
    assert main(["build", str(tmp_path / "unet_host.onnx"), "--calib", str(DATA / "unet_decoder_calib.npz"), "-o",
                 str(tmp_path / "u"), "-q", "--max-host-macs", "100", "--verify", "csim"]) == 0
    partition = json.loads((tmp_path / "u" / "partition.json").read_text())
    assert list(partition["refusals"]) == ["/up1/ConvTranspose"], partition["refusals"]
    program = json.loads((segment_folder(tmp_path / "u", "segment0") / "program.json").read_text())
    bands = [r["band"] for r in program["rows"] if r["nodes"] == ["/enc1/enc1.0/Conv"]]
    assert len(bands) > 1 and [b["written_row"] for b in bands] == [b["out_rows"][0] for b in bands]
