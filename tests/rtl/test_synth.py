"""Yosys synthesis of the generated RTL: cell counting, and (slow) the example's whole 16x16 accelerator."""
import pytest

from hlsgen.hw import load_target
from tests.rtl.program_of import rtl_program
from hlsgen.rtl.render import write_rtl
from hlsgen.rtl.synth import count_cells, synthesize
from tests.hw.models import integer_graph


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
