"""Yosys synthesis of the generated RTL: cell counting, nextpnr's report and the .lpf, and (slow) the example's
whole accelerator through synth_xilinx, and through synth_ecp5, nextpnr-ecp5 and ecppack to a bitstream."""
import json
from pathlib import Path

import pytest

from hlsgen.cli import main
from hlsgen.errors import MappingError
from hlsgen.hw import load_target, map_model
from hlsgen.rtl.lattice import best_placement, choose_pins, constraints, critical_path, part_name, synthesize as synth_ecp5
from tests.rtl.program_of import rtl_program
from hlsgen.rtl.render import write_rtl
from hlsgen.rtl.synth import count_cells, synthesize
from tests.hw.models import DIGITS, integer_graph, target_with

CALIB = Path(__file__).resolve().parents[2] / "examples" / "digits" / "calib.npz"


def test_cells_are_counted_as_fpga_resources():
    stat = {"modules": {"\\top": {"num_cells_by_type": {
        "LUT2": 10, "LUT6": 5, "FDRE": 30, "FDSE": 2, "DSP48E2": 4, "RAMB18E2": 3, "RAMB36E2": 2,
        "RAM64M8": 1, "RAM32M": 2, "SRL16E": 7, "CARRY4": 9, "$scopeinfo": 4}}}}
    r = count_cells(stat, "top", "xcup", 1.0)
    assert (r.lut, r.ff, r.dsp, r.bram_18k, r.lutram, r.srl) == (15, 32, 4, 7, 16, 7)


@pytest.mark.slow
def test_the_example_accelerator_synthesizes_for_systolic16x16(tmp_path):
    target = load_target("systolic16x16")
    files = write_rtl(rtl_program(integer_graph("digits"), target), tmp_path / "rtl")
    r = synthesize(list(files.design_sources), files.top, tmp_path / "yosys", list(files.memories))
    pes = target.array.rows * target.array.cols
    assert pes <= r.dsp <= pes + 4 * target.array.cols  # one per PE, a few per requantizer and vector lane
    assert r.bram_18k > 0 and 0 < r.lut < target.device.lut and 0 < r.ff < target.device.ff


def test_nextpnr_report_gives_the_slowest_clocked_path():
    def step(cell_from: str, cell_to: str, delay: float) -> dict:
        return {"from": {"cell": cell_from}, "to": {"cell": cell_to}, "delay": delay}

    report = {"critical_paths": [
        {"from": "<async>", "to": "posedge clk", "path": [step("in", "a", 9.0)]},
        {"from": "posedge clk", "to": "posedge clk", "path": [step("pe.q", "pe.q", 0.4), step("pe.q", "acc.d", 7.1)]},
    ]}
    assert critical_path(report) == {"from": "pe.q", "to": "acc.d", "ns": 7.5}
    assert critical_path({"critical_paths": []}) is None


MAC = """module mac (input wire clk, input wire [7:0] a, input wire [7:0] b, output reg [19:0] acc);
    reg [7:0] a_q, b_q;
    always @(posedge clk) begin
        {a_q, b_q} <= {a, b};
        acc <= acc + a_q * b_q;
    end
endmodule
"""


def test_placer_seeds_run_side_by_side_and_the_fastest_is_kept(tmp_path):
    """A multiply-accumulate through synth_ecp5 and nextpnr-ecp5 with placer seeds 1..3: the work folder ends
    as one run would leave it (the kept seed's configuration, report and log) plus every seed's log."""
    device = load_target("ecp5_8x8").device
    (tmp_path / "mac.v").write_text(MAC)
    ports, _ = synth_ecp5(["mac.v"], "mac", tmp_path, 600)
    (tmp_path / "mac.lpf").write_text(constraints(choose_pins(ports, "clk", device, "mac"), "clk", 125, device.part))
    routed, by_seed = best_placement(tmp_path, device, "mac.lpf", 600, 3)
    assert sorted(by_seed) == [1, 2, 3] and all(f and f > 0 for f in by_seed.values())
    assert routed.fmax_mhz == max(by_seed.values()) and by_seed[routed.seed] == routed.fmax_mhz
    assert routed.seed == min(k for k, f in by_seed.items() if f == routed.fmax_mhz)
    assert json.loads((tmp_path / "pnr.json").read_text())["fmax"]  # the kept seed's report
    assert (tmp_path / "nextpnr.log").read_text() == (tmp_path / f"nextpnr-seed{routed.seed}.log").read_text()
    assert (tmp_path / "top.config").stat().st_size > 0
    assert not [p for p in tmp_path.iterdir() if p.is_dir()]  # no seed folder left


def test_constraints_name_the_clock_and_every_port():
    lpf = constraints({"clk": "P3", "o[0]": "A10"}, "clk", 125, "LFE5U-85F-8BG381C")
    assert 'FREQUENCY PORT "clk" 125 MHz;' in lpf
    assert 'LOCATE COMP "o[0]" SITE "A10";' in lpf and 'IOBUF PORT "o[0]" IO_TYPE=LVCMOS33;' in lpf


def test_ecp5_target_and_its_part():
    target = load_target("ecp5_8x8")
    assert target.device.synth_family == "ecp5" and part_name(target.device) == "LFE5U-85F"
    assert (target.device.dsp, target.device.bram_18k, target.device.lut) == (156, 208, 83640)
    assert load_target("systolic8x8").device.synth_family == "xc7"
    assert load_target("systolic16x16").device.synth_family == "xcup"



def test_pins_are_chosen_among_the_bonded_general_purpose_ones():
    device = load_target("ecp5_8x8").device
    pins = choose_pins({"clk": 1, "rst": 1, "s_axis_tdata": 8, "m_axis_tvalid": 1}, "clk", device, "top")
    assert list(pins) == ["clk", "rst", *(f"s_axis_tdata[{i}]" for i in range(8)), "m_axis_tvalid"]
    assert len(set(pins.values())) == len(pins)  # one pin per bit
    assert pins == choose_pins({"clk": 1, "rst": 1, "s_axis_tdata": 8, "m_axis_tvalid": 1}, "clk", device, "top")
    # CABGA381 bonds 205 PIOs; 140 have no configuration, clock, PLL or reference function
    choose_pins({"clk": 1, "bus": 140}, "clk", device, "top")
    with pytest.raises(MappingError, match="142 port bits, more than the 141 general-purpose pins"):
        choose_pins({"clk": 1, "bus": 141}, "clk", device, "top")
    with pytest.raises(MappingError, match="no clock port 'clk'"):
        choose_pins({"clock": 1}, "clk", device, "top")


def test_the_ecp5_target_holds_the_models_own_top_only():
    """Its EBR holds the buffers (144 of 208 blocks) but not the target's top's program tables as well."""
    graph, target = integer_graph("digits"), load_target("ecp5_8x8")
    assert map_model(graph, target, program="rom").resources["bram_18k"] == 144
    with pytest.raises(MappingError, match="does not fit its device LFE5U-85F-8BG381C: the design needs 352 BRAM_18K"):
        map_model(graph, target, program="external")


def test_a_lattice_device_needs_package_and_speed():
    with pytest.raises(ValueError, match="device.package"):
        target_with("ecp5_8x8", device__package="")
    with pytest.raises(ValueError, match="device.speed"):
        target_with("ecp5_8x8", device__speed=0)
    with pytest.raises(ValueError, match="device.family"):
        target_with("systolic8x8", device__family="virtex2")


@pytest.mark.slow
def test_the_example_routes_and_packs_a_bitstream_on_ecp5(tmp_path):
    """digits on ecp5_8x8: synth_ecp5, nextpnr-ecp5 and ecppack; report.json holds the measured figures."""
    out = tmp_path / "digits_ecp5"
    assert main(["build", str(DIGITS), "--target", "ecp5_8x8", "--calib", str(CALIB), "--bitstream",
                 "-o", str(out), "-q"]) == 0
    synth = json.loads((out / "report.json").read_text())["synth"]
    assert synth["flow"] == "yosys synth_ecp5 + nextpnr-ecp5" and synth["fmax_mhz"] > 0
    assert synth["timing_met"] == (synth["fmax_mhz"] >= 125)
    for key in ("lut", "ff", "dsp", "bram"):
        assert 0 < synth["measured"][key] <= synth["device"][key]
    assert synth["critical_path"]["ns"] > 0
    bit = out / synth["bitstream"]
    data = bit.read_bytes()
    assert len(data) > 100_000 and b"\xff\xff\xbd\xb3" in data[:4096]  # the ECP5 preamble
    lpf = (out / synth["constraints"]).read_text()
    assert 'FREQUENCY PORT "clk" 125 MHz;' in lpf and lpf.count("LOCATE COMP") == 30  # the ROM top's 30 port bits
    report = json.loads((out / "report.json").read_text())
    assert report["total"]["clock"]["mhz"] == synth["fmax_mhz"]
    assert report["total"]["latency_us"] == round(report["total"]["cycles"] / synth["fmax_mhz"], 4)
