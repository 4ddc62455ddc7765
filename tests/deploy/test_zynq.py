"""`hlsgen deploy` onto Zynq boards: the deploy folder's files, the block design tcl's contents, determinism,
the exit codes of builds the board cannot take, and DEPLOY left as it was when a deploy fails. No Vivado
and no Verilator: the tcl is read, never run."""
from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import hlsgen.deploy.zynq as zynq
from hlsgen.build_folder import load_build
from hlsgen.cli import main
from hlsgen.deploy.boards import board
from hlsgen.errors import MappingError, PathError, TargetError
from hlsgen.npz_io import read_npz
from hlsgen.templating import TemplateError, make_environment, render_with
from tests.cli.test_errors import assert_one_line_error, run_cli

ROOT = Path(__file__).resolve().parents[2]
DIGITS = ROOT / "examples" / "digits"
INTERFACES = ("s_axi_ctrl", "m_axi", "m_axi_fmap", "m_axi_io")


def _build(folder: Path, target: str, program: str) -> Path:
    code = main(["build", str(DIGITS / "digits.onnx"), "--target", target, "--calib", str(DIGITS / "calib.npz"),
                 "--program", program, "-o", str(folder), "-q"])
    assert code == 0
    return folder


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("builds")
    return {"8x8": _build(root / "digits_8x8", "systolic8x8", "external"),
            "16x16": _build(root / "digits_16x16", "systolic16x16", "external"),
            "rom": _build(root / "digits_rom", "systolic8x8", "rom")}


@pytest.fixture(scope="module")
def deployed(builds, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("deploys") / "pynq"
    assert main(["deploy", str(builds["8x8"]), "--board", "pynq-z2", "-o", str(out), "-q"]) == 0
    return out


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_deploy_folder_holds_rtl_images_model_tcl_driver_readme(deployed, builds):
    build = builds["8x8"]
    sources = {p.name for p in (build / "rtl").glob("*.v") if not p.name.endswith("_tb.v")}
    assert {p.name for p in (deployed / "rtl").iterdir()} == sources
    assert "overlay_systolic8x8_top.v" in sources and any((build / "rtl").glob("*_tb.v"))
    for name in sources:
        assert (deployed / "rtl" / name).read_bytes() == (build / "rtl" / name).read_bytes()
    for image in ("program.bin", "weights.bin"):
        assert (deployed / "images" / image).read_bytes() == (build / "rtl" / image).read_bytes()
        assert (deployed / "model" / "rtl" / image).read_bytes() == (build / "rtl" / image).read_bytes()
    for name in ("program.json", "report.json", "build.json", "quant.json", "driver/model.json"):
        assert (deployed / "model" / name).read_bytes() == (build / name).read_bytes()
    for name in ("vivado/build.tcl", "pynq/hlsgen_pynq.py", "README.md", "deploy.json"):
        assert (deployed / name).is_file()
    record = json.loads((deployed / "deploy.json").read_text())
    assert record["board"] == "pynq-z2" and record["bitstream"] == "hlsgen_systolic8x8.bit"
    assert record["control_base"] == "0x43C00000" and record["masters"] == list(INTERFACES[1:])


def test_the_model_folder_runs_the_integer_reference(deployed, builds):
    model = load_build(deployed / "model")
    inputs = read_npz(deployed / "model" / "verify" / "int_inputs.npz")
    expected = read_npz(builds["8x8"] / "verify" / "int_outputs.npz")
    for name, values in model.run_int(inputs).items():
        assert np.array_equal(values, expected[name])


def test_the_tcl_builds_the_pynq_z2_block_design(deployed):
    tcl = (deployed / "vivado" / "build.tcl").read_text()
    assert "set part xc7z020clg400-1" in tcl and "set board_part tul.com.tw:pynq-z2:part0:1.0" in tcl
    assert "create_project -force ip_project" in tcl and "ipx::package_project" in tcl
    assert "xilinx.com:ip:processing_system7" in tcl and "apply_board_preset" in tcl
    assert "CONFIG.PCW_FPGA0_PERIPHERAL_FREQMHZ {150}" in tcl and "processing_system7_0/FCLK_CLK0" in tcl
    for busif in INTERFACES:  # every AXI interface is clocked by clk and wired into the design
        assert f"foreach busif {{{' '.join(INTERFACES)}}}" in tcl
        assert f"accel/{busif}]" in tcl
    assert "ipx::associate_bus_interfaces -busif $busif -clock clk $core" in tcl
    assert "set_bus_parameter $core rst POLARITY ACTIVE_HIGH" in tcl
    assert "[get_bd_pins processing_system7_0/M_AXI_GP0]" not in tcl  # GP0 is an interface, not a pin
    assert "[get_bd_intf_pins processing_system7_0/M_AXI_GP0] [get_bd_intf_pins control_sc/S00_AXI]" in tcl
    assert "CONFIG.NUM_SI {3}" in tcl
    for i, master in enumerate(INTERFACES[1:]):
        assert f"[get_bd_intf_pins accel/{master}] [get_bd_intf_pins memory_sc/S{i:02d}_AXI]" in tcl
    assert "[get_bd_intf_pins memory_sc/M00_AXI] [get_bd_intf_pins processing_system7_0/S_AXI_HP0]" in tcl
    assert "[get_bd_pins accel/irq] [get_bd_pins processing_system7_0/IRQ_F2P]" in tcl
    assert "[get_bd_pins reset/peripheral_reset] [get_bd_pins accel/rst]" in tcl
    assert "-offset 0x43C00000" in tcl and "address.txt" in tcl
    assert "S_AXI_HP0/HP0_DDR_LOWOCM" in tcl
    assert "write_bitstream" in tcl and "$name.hwh" in tcl and "$name.bit" in tcl
    assert "set name hlsgen_systolic8x8" in tcl
    assert "{{" not in tcl and "{%" not in tcl


def test_the_driver_and_readme(deployed):
    driver = (deployed / "pynq" / "hlsgen_pynq.py").read_text()
    ast.parse(driver)
    assert "from hlsgen.runtime import Accelerator" in driver
    assert 'Accelerator(MODEL, backend="pynq", bitstream=BITSTREAM)' in driver
    assert 'BITSTREAM = DEPLOY / "hlsgen_systolic8x8.bit"' in driver and "CONTROL_BASE = 0x43C00000" in driver
    readme = (deployed / "README.md").read_text()
    assert "vivado -mode batch -source vivado/build.tcl" in readme and "Vivado 2023.2" in readme
    assert "python3 pynq/hlsgen_pynq.py --inputs test.npz" in readme and "pip install hlsgen" in readme
    assert "## What was verified and what was not" in readme and "NOT verified" in readme


def test_deploying_twice_writes_the_same_bytes(deployed, builds, tmp_path):
    again = tmp_path / "pynq"  # the same name: the README names the folder
    assert main(["deploy", str(builds["8x8"]), "--board", "pynq-z2", "-o", str(again), "-q"]) == 0
    assert _files(again) == _files(deployed)
    assert main(["deploy", str(builds["8x8"]), "--board", "pynq-z2", "-o", str(again), "-q"]) == 0  # replaces it
    assert _files(again) == _files(deployed)
    assert [p.name for p in tmp_path.iterdir()] == ["pynq"]  # no staging folder left


def test_ultra96_v2_takes_a_systolic16x16_build(builds, tmp_path):
    out = tmp_path / "u96"
    assert main(["deploy", str(builds["16x16"]), "--board", "ultra96-v2", "-o", str(out), "-q"]) == 0
    tcl = (out / "vivado" / "build.tcl").read_text()
    # the board's part (its board files name the -1-i grade); the target's yaml says -1-e, one die and speed
    assert "set part xczu3eg-sbva484-1-i" in tcl and "avnet.com:ultra96v2:part0:1.2" in tcl
    assert "xilinx.com:ip:zynq_ultra_ps_e" in tcl and "CONFIG.PSU__CRL_APB__PL0_REF_CTRL__FREQMHZ {200}" in tcl
    assert "[get_bd_intf_pins zynq_ultra_ps_e_0/M_AXI_HPM0_FPD]" in tcl
    assert "[get_bd_intf_pins zynq_ultra_ps_e_0/S_AXI_HP0_FPD]" in tcl
    assert "[get_bd_pins zynq_ultra_ps_e_0/pl_ps_irq0]" in tcl and "-offset 0xA0000000" in tcl
    assert "SAXIGP2/HP0_DDR_LOW" in tcl and "CONFIG.PSU__SAXIGP2__DATA_WIDTH {128}" in tcl


def test_unknown_board_exits_9_naming_the_boards(capsys, builds, tmp_path):
    code, _, err = run_cli(capsys, "deploy", str(builds["8x8"]), "--board", "pynqz2", "-o", str(tmp_path / "d"))
    assert code == TargetError.exit_code
    assert_one_line_error(err, "'pynqz2'", "did you mean 'pynq-z2'", "pynq-z2, ultra96-v2, zcu102")
    assert not (tmp_path / "d").exists()


def test_a_build_for_another_part_exits_3_naming_the_target(capsys, builds, tmp_path):
    code, _, err = run_cli(capsys, "deploy", str(builds["16x16"]), "--board", "pynq-z2", "-o", str(tmp_path / "d"))
    assert code == MappingError.exit_code
    assert_one_line_error(err, "built for target systolic16x16", "pynq-z2 needs part xc7z020clg400-1",
                          "rebuild with --target systolic8x8")
    assert not (tmp_path / "d").exists()


def test_a_rom_build_exits_3(capsys, builds, tmp_path):
    code, _, err = run_cli(capsys, "deploy", str(builds["rom"]), "--board", "pynq-z2", "-o", str(tmp_path / "d"))
    assert code == MappingError.exit_code
    assert_one_line_error(err, "--program rom", "rebuild with --program external")


@pytest.mark.parametrize("edit, fragment", [
    (lambda total: total["resources"].update(bram_18k=300), "needs 300 BRAM_18K, the device has 280"),
    (lambda total: total["fit"].update(ok=False), "does not fit its target systolic8x8's device"),
])
def test_a_design_that_does_not_fit_exits_3(capsys, builds, tmp_path, edit, fragment):
    build = tmp_path / "build"
    shutil.copytree(builds["8x8"], build)
    report = json.loads((build / "report.json").read_text())
    edit(report["total"])
    (build / "report.json").write_text(json.dumps(report))
    code, _, err = run_cli(capsys, "deploy", str(build), "--board", "pynq-z2", "-o", str(tmp_path / "d"))
    assert code == MappingError.exit_code
    assert_one_line_error(err, fragment, "rebuild with --target systolic8x8")


def test_not_a_build_folder_exits_6(capsys, tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "whole").mkdir()  # a partitioned build's marker alone
    (tmp_path / "whole" / "partition.json").write_text("{}")
    (tmp_path / "edited").mkdir()  # a partition.json that does not read back
    (tmp_path / "edited" / "partition.json").write_text("{}")
    (tmp_path / "edited" / "build.json").write_text("{}")
    for folder, fragment in ((tmp_path / "nope", "no such build folder"), (tmp_path / "empty", "not an hlsgen build"),
                             (tmp_path / "whole", "not an hlsgen build folder (no build.json)"),
                             (tmp_path / "edited", "not a readable hlsgen build folder")):
        code, _, err = run_cli(capsys, "deploy", str(folder), "--board", "pynq-z2", "-o", str(tmp_path / "d"))
        assert code == PathError.exit_code
        assert_one_line_error(err, fragment)


def test_a_failed_deploy_leaves_deploy_as_it_was(capsys, deployed, builds, tmp_path):
    out = tmp_path / "pynq"
    shutil.copytree(deployed, out)
    before = _files(out)
    code, _, _ = run_cli(capsys, "deploy", str(builds["16x16"]), "--board", "pynq-z2", "-o", str(out))
    assert code == MappingError.exit_code and _files(out) == before
    mine = tmp_path / "mine"  # a folder that is no deploy folder is never replaced
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    code, _, err = run_cli(capsys, "deploy", str(builds["8x8"]), "--board", "pynq-z2", "-o", str(mine))
    assert code == PathError.exit_code and _files(mine) == {"notes.txt": b"keep"}
    assert_one_line_error(err, "is not an hlsgen deploy folder")


def test_an_interrupted_deploy_leaves_deploy_as_it_was(deployed, builds, tmp_path, monkeypatch):
    out = tmp_path / "pynq"
    shutil.copytree(deployed, out)
    before = _files(out)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(zynq, "render_with", interrupted)  # after the RTL, images and model were copied
    with pytest.raises(KeyboardInterrupt):
        zynq.deploy(builds["8x8"], board("pynq-z2"), out)
    assert _files(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["pynq"]


def test_the_templates_fail_on_a_missing_variable():
    with pytest.raises(TemplateError, match="zynq_build.tcl.j2"):
        render_with(make_environment("deploy"), "deploy", "zynq_build.tcl.j2", board=board("pynq-z2"))


def test_boards_lists_the_three_boards(capsys):
    code, out, _ = run_cli(capsys, "boards")
    assert code == 0
    for name, part, target in (("pynq-z2", "xc7z020clg400-1", "systolic8x8"),
                               ("ultra96-v2", "xczu3eg-sbva484-1-i", "systolic16x16"),
                               ("zcu102", "xczu9eg-ffvb1156-2-e", "systolic32x32")):
        assert f"{name}:" in out and part in out and f"--target {target} --program external" in out
    assert "512 MiB DDR3" in out and "2 GiB LPDDR4" in out and "4 GiB PS DDR4" in out
