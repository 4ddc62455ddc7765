"""`hlsgen deploy` onto the ECP5 boards: the whole LiteX SoC (VexRiscv running hlsgen's firmware, the board's
DRAM chip modelled, the UART, the accelerator behind two DMAs) simulated in Verilator on the example's stored
images, bit-exact against the integer reference; the deploy folder; the builds the boards refuse; DEPLOY left
as it was when the simulation disagrees. The bitstream (Yosys + nextpnr-ecp5, minutes) is a slow test."""
from __future__ import annotations

import importlib
import json
import os
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest

from hlsgen import architectures
from hlsgen.cli import main
from hlsgen.deploy import firmware
from hlsgen.deploy.boards import board
from hlsgen.deploy.soc_boards import SOC_BOARDS, same_fabric
from hlsgen.deploy.soc_deploy import deploy_soc
from hlsgen.errors import ToolError
from hlsgen.hw import load_target
from tests.cli.test_errors import assert_one_line_error, run_cli

ROOT = Path(__file__).resolve().parents[2]
DIGITS = ROOT / "examples" / "digits"


def _require_soc_tools():
    if shutil.which(firmware.GCC) is None:
        if os.environ.get("CI"):
            pytest.fail(f"{firmware.GCC} is missing: .ci/run installs Debian's {firmware.GCC_PACKAGE}")
        pytest.skip(f"Debian's {firmware.GCC_PACKAGE} is not installed (apt-get install it); CI installs it")


@pytest.fixture(scope="module")
def build(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("builds") / "digits_ecp5"
    assert main(["build", str(DIGITS / "digits.onnx"), "--target", "ecp5_8x8", "--calib", str(DIGITS / "calib.npz"),
                 "-o", str(folder), "-q"]) == 0
    return folder


@pytest.fixture(scope="module")
def deployed(build, tmp_path_factory) -> tuple[Path, str]:
    _require_soc_tools()
    out = tmp_path_factory.mktemp("deploys") / "ulx3s"
    code = main(["deploy", str(build), "--board", "ulx3s-85f", "-o", str(out), "--simulate", "3", "--no-bitstream"])
    assert code == 0
    return out


@pytest.mark.parametrize("b", SOC_BOARDS, ids=lambda b: b.name)
def test_each_soc_board_names_a_shipped_ecp5_target_a_board_file_and_its_dram(b):
    assert same_fabric(load_target(b.target).device.part, b)
    assert board(b.name) is b
    targets = importlib.import_module(f"litex_boards.targets.{b.litex_target}")
    assert hasattr(targets, "BaseSoC")
    modules = importlib.import_module("litedram.modules")
    assert hasattr(modules, b.sim_dram[0])


def test_fabrics_compare_without_package_and_speed_grade():
    ulx3s, ecpix5 = SOC_BOARDS
    assert same_fabric("LFE5U-85F-8BG381C", ulx3s) and same_fabric("LFE5U-85F-8BG381C", ecpix5)
    assert not same_fabric("LFE5U-45F-8BG381C", ulx3s)
    assert not same_fabric("xczu3eg-sbva484-1-e", ulx3s)


def test_the_whole_soc_answers_bit_exact_in_simulation(deployed, build):
    verdict = json.loads((deployed / "sim" / "verdict.json").read_text())
    assert verdict["bit_exact"] and verdict["images"] == 3 and not verdict["mismatches"]
    # the console's output bytes are the stored integer reference's, image by image
    console = (deployed / "sim" / "console.log").read_text()
    # LiteX's liblitedram brought the DRAM up first, as on the board
    assert "Initializing SDRAM" in console and "Memtest OK" in console
    want = np.load(build / "verify" / "int_outputs.npz")["logits"][:3] & 0xFF
    for i, row in enumerate(want):
        assert f"image {i} out {bytes(int(v) for v in row).hex()} " in console
    # the accelerator's cycles are the RTL's (hlsgen's own testbench: the performance model within 1%), and
    # the firmware's copies and register writes add a little
    model = json.loads((build / "report.json").read_text())["total"]["cycles"]
    assert all(abs(c - model) <= 0.01 * model for c in verdict["accelerator_cycles"])
    assert all(c > a for c, a in zip(verdict["soc_cycles"], verdict["accelerator_cycles"]))


def test_the_deploy_folder_holds_rtl_firmware_gateware_readme(deployed, build):
    sources = {p.name for p in (build / "rtl").iterdir() if p.suffix in (".v", ".mem") and not p.name.endswith("_tb.v")}
    assert {p.name for p in (deployed / "rtl").iterdir()} == sources
    for name in ("firmware.bin", "firmware.elf", "generated/csr.h", "generated/sdram_phy.h", "images.h", "main.c",
                 "crt0.S", "linker.ld", "Makefile"):
        assert (deployed / "firmware" / name).is_file(), name
    # the host's copy of the quantized model, and what it needs to talk to the firmware
    assert (deployed / "model" / "build.json").is_file() and (deployed / "model" / "integer").is_dir()
    gateware = deployed / "gateware"
    soc = (gateware / "hlsgen_soc.v").read_text()
    assert "digits_top" in soc and "VexRiscv" in soc
    assert (gateware / "hlsgen_soc.lpf").is_file() and (gateware / "weights.mem").is_file()
    script = (gateware / "hlsgen_soc.ys").read_text()
    assert "../rtl/digits_top.v" in script and str(deployed.parent) not in script  # runs wherever DEPLOY moves
    readme = (deployed / "README.md").read_text()
    assert "openFPGALoader --board ulx3s" in readme and "bit-exact" in readme
    record = json.loads((deployed / "deploy.json").read_text())
    assert record["board"] == "ulx3s-85f" and record["simulation"]["bit_exact"] and record["bitstream"] is None
    assert record["host"]["model_id"] in (deployed / "firmware" / "images.h").read_text()


def test_a_simulation_that_differs_from_the_reference_writes_nothing(build, tmp_path, capsys):
    _require_soc_tools()
    wrong = tmp_path / "wrong"
    shutil.copytree(build, wrong)
    outputs = dict(np.load(wrong / "verify" / "int_outputs.npz"))
    outputs["logits"] = outputs["logits"].copy()
    outputs["logits"][1, 4] += 1
    np.savez(wrong / "verify" / "int_outputs.npz", **outputs)
    out = tmp_path / "deploy"
    code, _, err = run_cli(capsys, "deploy", str(wrong), "--board", "ulx3s-85f", "-o", str(out), "--simulate", "2",
                           "--no-bitstream", "-q")
    assert code == 5
    assert_one_line_error(err, "whole-SoC simulation differs", "image 1")
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["wrong"]


def test_builds_the_soc_cannot_take_are_refused(build, tmp_path, capsys):
    other = tmp_path / "external"
    shutil.copytree(build, other)
    report = json.loads((other / "report.json").read_text())
    report["designs"]["rtl"]["program"] = "external"
    (other / "report.json").write_text(json.dumps(report))
    code, _, err = run_cli(capsys, "deploy", str(other), "--board", "ecpix5-85f", "-o", str(tmp_path / "d"))
    assert code == 3
    assert_one_line_error(err, "target's top", "--target ecp5_8x8 --program rom")
    report["designs"]["rtl"]["program"], report["target"]["part"] = "rom", "xc7z020clg400-1"
    (other / "report.json").write_text(json.dumps(report))
    code, _, err = run_cli(capsys, "deploy", str(other), "--board", "ulx3s-85f", "-o", str(tmp_path / "d"))
    assert code == 3
    assert_one_line_error(err, "needs an ECP5 85F build")
    code, _, err = run_cli(capsys, "deploy", str(build), "--board", "pynq-z2", "-o", str(tmp_path / "d"),
                           "--simulate", "2")
    assert code == 2 and "apply to the ECP5 boards" in err
    assert not (tmp_path / "d").exists()


def test_a_missing_riscv_gcc_names_its_package(build, tmp_path, monkeypatch):
    monkeypatch.setattr(firmware, "GCC", "riscv64-nonexistent-elf-gcc")
    with pytest.raises(ToolError, match="apt-get install gcc-riscv64-unknown-elf"):
        deploy_soc(build, board("ulx3s-85f"), tmp_path / "d", simulate=1, bitstream=False)
    assert not (tmp_path / "d").exists()


@pytest.mark.slow
@pytest.mark.parametrize("name", [b.name for b in SOC_BOARDS])
def test_each_board_simulates_bit_exact_and_routes_at_its_clock(build, tmp_path, name, monkeypatch):
    _require_soc_tools()
    monkeypatch.chdir(tmp_path)  # DEPLOY named relative to the working folder, as users type it
    out = tmp_path / name
    assert main(["deploy", str(build), "--board", name, "-o", name, "--simulate", "4"]) == 0
    record = json.loads((out / "deploy.json").read_text())
    assert record["simulation"]["bit_exact"]
    figures = record["bitstream"]
    assert figures["fmax_mhz"] >= board(name).sys_clk_mhz
    assert (out / "gateware" / "hlsgen_soc.bit").stat().st_size > 100_000
    assert (out / "gateware" / "hlsgen_soc.svf").is_file()


def small_buffers_target(folder: Path, buffers: tuple[str, ...] = ("input", "weight")) -> Path:
    """ecp5_8x8 with 2 KiB `buffers`: with both, the digits' weights and feature maps go to external memory, the
    input into the feature-map image (the model's own top then has AXI4 masters and registers)."""
    text = (ROOT / "hw_models" / "ecp5_8x8.yaml").read_text()
    for name in buffers:
        text = text.replace(f"{name}: {{kib: 128, banks: 8}}", f"{name}: {{kib: 2, banks: 8}}")
    name = "ecp5_8x8_small_" + "_".join(buffers)
    path = folder / f"{name}.yaml"
    path.write_text(text.replace("name: ecp5_8x8", f"name: {name}"))
    return path


@pytest.fixture(scope="module")
def memory_build(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("builds")
    out = folder / "digits_small"
    assert main(["build", str(DIGITS / "digits.onnx"), "--target", str(small_buffers_target(folder)), "--calib",
                 str(DIGITS / "calib.npz"), "-o", str(out), "-q"]) == 0
    residency = json.loads((out / "report.json").read_text())["total"]["residency"]
    assert residency == {"weights": "external", "feature_maps": "external", "input": "external", "program": "rom"}
    return out


@pytest.fixture(scope="module")
def memory_deployed(memory_build, tmp_path_factory) -> Path:
    _require_soc_tools()
    out = tmp_path_factory.mktemp("deploys") / "ulx3s_memory"
    assert main(["deploy", str(memory_build), "--board", "ulx3s-85f", "-o", str(out), "--simulate", "2",
                 "--no-bitstream", "-q"]) == 0
    return out


def test_a_top_with_external_memory_answers_bit_exact_from_the_dram(memory_deployed, memory_build):
    """The accelerator's AXI4 masters on the DRAM controller (weights preloaded in the simulated DRAM, feature
    maps there, the input packed into them by the firmware's copy), its registers on the SoC bus."""
    verdict = json.loads((memory_deployed / "sim" / "verdict.json").read_text())
    assert verdict["bit_exact"] and verdict["images"] == 2
    console = (memory_deployed / "sim" / "console.log").read_text()
    want = np.load(memory_build / "verify" / "int_outputs.npz")["logits"][:2] & 0xFF
    for i, row in enumerate(want):
        assert f"image {i} out {bytes(int(v) for v in row).hex()} " in console
    soc = (memory_deployed / "gateware" / "hlsgen_soc.v").read_text()
    assert "m_axi_fmap_awaddr" in soc and "s_axi_ctrl_araddr" in soc
    record = json.loads((memory_deployed / "deploy.json").read_text())["host"]
    assert record["weights"] == "rtl/weights.bin" and record["input_pack"] == "model/input_pack.npy"
    assert (memory_deployed / "rtl" / "weights.bin").read_bytes() == (memory_build / "rtl" / "weights.bin").read_bytes()
    assert "#define INPUT_IN_FMAP 1" in (memory_deployed / "firmware" / "images.h").read_text()


def test_a_top_with_external_weights_and_an_input_stream_answers_bit_exact(tmp_path):
    """Weights over AXI4 from the DRAM, the input on the stream from the reader DMA, the registers on the bus."""
    _require_soc_tools()
    build, out = tmp_path / "digits_weights", tmp_path / "deploy"
    assert main(["build", str(DIGITS / "digits.onnx"), "--target", str(small_buffers_target(tmp_path, ("weight",))),
                 "--calib", str(DIGITS / "calib.npz"), "-o", str(build), "-q"]) == 0
    residency = json.loads((build / "report.json").read_text())["total"]["residency"]
    assert residency["weights"] == "external" and residency["input"] == "stream"
    assert main(["deploy", str(build), "--board", "ulx3s-85f", "-o", str(out), "--simulate", "2", "--no-bitstream",
                 "-q"]) == 0
    assert json.loads((out / "sim" / "verdict.json").read_text())["bit_exact"]
    assert json.loads((out / "deploy.json").read_text())["host"]["input_pack"] is None


@pytest.mark.slow
@pytest.mark.parametrize("name", [b.name for b in SOC_BOARDS])
def test_mobilenet_v1_reads_its_weights_and_maps_from_each_boards_dram(tmp_path, name):
    """MLPerf Tiny's visual-wake-words MobileNetV1 (0.25, 96x96) on ecp5_8x8: 218 KB of weights and its feature
    maps in the board's DRAM (SDRAM behind a down-converting port, DDR3 behind an up-converting one)."""
    _require_soc_tools()
    model = architectures.mobilenet_v1(alpha=0.25, size=96, classes=2)
    path, calib = tmp_path / "vww.onnx", tmp_path / "calib.npz"
    onnx.save_model(model, str(path))
    np.savez(calib, **{model.graph.input[0].name: architectures.calibration_data(model, n=8)})
    build, out = tmp_path / "vww_ecp5", tmp_path / "deploy"
    assert main(["build", str(path), "--target", "ecp5_8x8", "--calib", str(calib), "-o", str(build), "-q"]) == 0
    assert main(["deploy", str(build), "--board", name, "-o", str(out), "--simulate", "1", "--no-bitstream", "-q"]) == 0
    assert json.loads((out / "sim" / "verdict.json").read_text())["bit_exact"]
    assert "no stored test images" in (out / "README.md").read_text()  # a packed input is 72 KiB
