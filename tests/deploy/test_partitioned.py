"""`hlsgen deploy` of a model partitioned between host and accelerator: one RTL for every segment, each
segment's images, the partitioned model folder the runtime walks (run here with the integer reference), the
driver and README naming the host stages, and the exit codes of segments the board cannot take. No Vivado and
no Verilator."""
from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest

from hlsgen.cli import main
from hlsgen.deploy.checks import MODEL_FILES
from hlsgen.errors import MappingError, PathError
from hlsgen.runtime import Accelerator
from hlsgen.runtime.pynq import _layouts
from tests.cli.test_errors import assert_one_line_error, run_cli
from tests.partition.models import images, two_segment_chain

SEGMENTS = ("segment0", "segment1")
HOST = ("host0", "host1")


def _build(root: Path, name: str, *options: str) -> Path:
    out = root / name
    code = main(["build", str(root / "chain.onnx"), "--calib", str(root / "calib.npz"), *options, "-o", str(out), "-q"])
    assert code == 0
    return out


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("chain")
    onnx.save(two_segment_chain(), root / "chain.onnx")
    np.savez(root / "calib.npz", x=images(16, (3, 8, 8)))
    return {"external": _build(root, "chain_8x8", "--target", "systolic8x8", "--program", "external"),
            "rom": _build(root, "chain_rom", "--target", "systolic8x8", "--program", "rom"),
            "auto": _build(root, "chain_auto", "--target", "systolic8x8"),
            "16x16": _build(root, "chain_16x16", "--target", "systolic16x16", "--program", "external")}


@pytest.fixture(scope="module")
def deployed(builds, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("deploys") / "chain_pynq"
    assert main(["deploy", str(builds["external"]), "--board", "pynq-z2", "-o", str(out), "-q"]) == 0
    return out


def _verilog(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.v")) if not p.name.endswith("_tb.v")}


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_one_rtl_for_every_segment_and_each_segments_images(deployed, builds):
    build = builds["external"]
    rtl = _verilog(build / "segments" / "segment0" / "rtl")
    assert "overlay_systolic8x8_top.v" in rtl
    assert _verilog(build / "segments" / "segment1" / "rtl") == rtl  # one bitstream serves both
    assert _files(deployed / "rtl") == rtl
    assert sorted(p.name for p in (deployed / "images").iterdir()) == list(SEGMENTS)  # no flat images
    for segment in SEGMENTS:
        for image in ("program.bin", "weights.bin"):
            source = (build / "segments" / segment / "rtl" / image).read_bytes()
            assert (deployed / "images" / segment / image).read_bytes() == source
            assert (deployed / "model" / "segments" / segment / "rtl" / image).read_bytes() == source
    record = json.loads((deployed / "deploy.json").read_text())
    assert record["model"] == "chain" and record["top"] == "overlay_systolic8x8_top"
    assert [(s["name"], s["side"]) for s in record["stages"]] == [
        ("segment0", "accelerator"), ("host0", "host"), ("segment1", "accelerator"), ("host1", "host")]


def test_the_model_folder_is_the_partitioned_build_as_the_runtime_reads_it(deployed, builds):
    build, model = builds["external"], deployed / "model"
    for name in ("partition.json", "build.json", "report.json", *(f"host/{h}.onnx" for h in HOST),
                 "verify/inputs.npz", "verify/outputs.npz"):
        assert (model / name).read_bytes() == (build / name).read_bytes(), name
    for segment in SEGMENTS:
        for name in MODEL_FILES:
            path = f"segments/{segment}/{name}"
            assert (model / path).read_bytes() == (build / path).read_bytes(), path
        assert not list((model / "segments" / segment / "rtl").glob("*.v"))  # the Verilog is DEPLOY/rtl's
    assert not (model / "driver").exists()  # the pynq backend takes the layouts of segments/*
    assert len(_layouts(model)) == 2
    x = {"x": images(2, (3, 8, 8), seed=5)}
    on_board = Accelerator(model, "reference").run(x)
    expected = Accelerator(build, "reference").run(x)
    assert list(on_board) == ["y"] and on_board["y"].shape == (2, 4, 8, 8)
    assert np.array_equal(on_board["y"], expected["y"])


def test_the_driver_and_readme_name_the_host_stages(deployed):
    driver = (deployed / "pynq" / "hlsgen_pynq.py").read_text()
    ast.parse(driver)
    assert 'Accelerator(MODEL, backend="pynq", bitstream=BITSTREAM)' in driver
    assert "host0: InstanceNormalization; host1: Exp" in driver and "onnxruntime" in driver
    assert "segment0, segment1" in driver
    readme = (deployed / "README.md").read_text()
    assert "- `host0`: on the CPU, in onnxruntime (float): InstanceNormalization" in readme
    assert "- `segment1`: on the accelerator: Conv, Relu" in readme
    assert "`images/<segment>/program.bin`" in readme and "`host/<stage>.onnx`" in readme
    assert "PyPI has none for 32-bit Arm" in readme and "which runs the host stages" in readme  # Cortex-A9
    assert "- `segment0`: not simulated" in readme
    assert "onnxruntime on the board's CPU running the host stages (host0, host1)" in readme


def test_deploying_twice_writes_the_same_bytes(deployed, builds, tmp_path):
    again = tmp_path / "chain_pynq"
    assert main(["deploy", str(builds["external"]), "--board", "pynq-z2", "-o", str(again), "-q"]) == 0
    assert _files(again) == _files(deployed)


@pytest.mark.parametrize("which", ["rom", "auto"])
def test_a_segment_with_the_models_own_top_exits_3_naming_it(capsys, builds, tmp_path, which):
    code, _, err = run_cli(capsys, "deploy", str(builds[which]), "--board", "pynq-z2", "-o", str(tmp_path / "d"))
    assert code == MappingError.exit_code
    assert_one_line_error(err, "segment0's RTL", "--program rom", "rebuild with --program external")
    assert not (tmp_path / "d").exists()


def test_segments_for_another_part_exit_3_naming_the_segment(capsys, builds, tmp_path):
    code, _, err = run_cli(capsys, "deploy", str(builds["16x16"]), "--board", "pynq-z2", "-o", str(tmp_path / "d"))
    assert code == MappingError.exit_code
    assert_one_line_error(err, "segment0 was built for target systolic16x16", "rebuild with --target systolic8x8")


def _copy(builds, tmp_path) -> Path:
    build = tmp_path / "chain"
    shutil.copytree(builds["external"], build)
    return build


def _edit_report(folder: Path, edit) -> None:
    report = json.loads((folder / "report.json").read_text())
    edit(report)
    (folder / "report.json").write_text(json.dumps(report))


def test_segments_with_other_verilog_exit_3_naming_the_segment(capsys, builds, tmp_path):
    build = _copy(builds, tmp_path)
    top = build / "segments" / "segment1" / "rtl" / "overlay_systolic8x8_top.v"
    top.write_text(top.read_text() + "// another top\n")
    code, _, err = run_cli(capsys, "deploy", str(build), "--board", "pynq-z2", "-o", str(tmp_path / "d"))
    assert code == MappingError.exit_code
    assert_one_line_error(err, "segment1's Verilog differs from segment0's (overlay_systolic8x8_top.v)",
                          "--program external")


def test_segments_without_rtl_exit_3_naming_them(capsys, builds, tmp_path):
    build = _copy(builds, tmp_path)
    for segment in SEGMENTS:
        shutil.rmtree(build / "segments" / segment / "rtl")
        _edit_report(build / "segments" / segment,
                     lambda r: r["designs"].update(rtl={"design": None, "why": "no RTL for this layer"}))
    code, _, err = run_cli(capsys, "deploy", str(build), "--board", "pynq-z2", "-o", str(tmp_path / "d"))
    assert code == MappingError.exit_code
    assert_one_line_error(err, "segments segment0, segment1 have no Verilog RTL", "no RTL for this layer",
                          "rebuild with --program external")


def test_a_segment_that_does_not_fit_exits_3_naming_it(capsys, builds, tmp_path):
    build = _copy(builds, tmp_path)
    _edit_report(build / "segments" / "segment1", lambda r: r["total"]["resources"].update(bram_18k=300))
    code, _, err = run_cli(capsys, "deploy", str(build), "--board", "pynq-z2", "-o", str(tmp_path / "d"))
    assert code == MappingError.exit_code
    assert_one_line_error(err, "segment1's design", "needs 300 BRAM_18K", "rebuild with --target systolic8x8")


@pytest.mark.parametrize("remove, fragment", [
    ("host/host1.onnx", "is not a whole build folder (no host/host1.onnx)"),
    ("segments/segment1/driver/model.json",
     "segment1 is not a whole build folder of this hlsgen (no driver/model.json)"),
    ("segments/segment0/report.json", "segment0 is not a whole build folder (no report.json)"),
])
def test_a_partitioned_build_missing_files_exits_6(capsys, builds, tmp_path, remove, fragment):
    build = _copy(builds, tmp_path)
    (build / remove).unlink()
    code, _, err = run_cli(capsys, "deploy", str(build), "--board", "pynq-z2", "-o", str(tmp_path / "d"))
    assert code == PathError.exit_code
    assert_one_line_error(err, fragment)
