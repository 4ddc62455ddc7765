"""nextpnr's report as hlsgen.deploy.bitstream reads it: the critical path of the SoC's clock, not the
asynchronous I/O paths reported after it (a log shaped as nextpnr-ecp5 prints it; the routed bitstreams
themselves are the slow test of test_soc.py)."""
from hlsgen.deploy.bitstream import FMAX, critical_path

LOG = """\
Info: Max frequency for clock '$glbnet$crg_clkout': 44.10 MHz (PASS at 40.00 MHz)
Info: Max frequency for clock '$glbnet$crg_clkout': 46.01 MHz (PASS at 40.00 MHz)

Info: Critical path report for clock '$glbnet$crg_clkout' (posedge -> posedge):
Info:       type curr  total name
Info:   clk-to-q  0.40  0.40 Source VexRiscv.CsrPlugin_mcause_TRELLIS_FF_Q.Q
Info:    routing  0.87  1.27 Net VexRiscv.CsrPlugin_mcause[1] (4,33) -> (12,35)
Info:                          Sink VexRiscv.shifter_LUT4_Z.B
Info:      setup  0.18 21.45 Setup VexRiscv.execute_SHIFT_TRELLIS_FF_Q.DI
Info: 11.2 ns logic, 10.1 ns routing

Info: Critical path report for cross-domain path '<async>' -> '<async>':
Info:                          Sink user_led0$tr_io.I
"""


def test_the_soc_clocks_path_runs_from_its_source_to_its_setup_not_to_an_io():
    assert critical_path(LOG, "$glbnet$crg_clkout") == \
        "VexRiscv.CsrPlugin_mcause_TRELLIS_FF_Q.Q -> VexRiscv.execute_SHIFT_TRELLIS_FF_Q.DI"
    assert critical_path(LOG, "other_clock") == ""


def test_each_clocks_last_report_is_the_routed_one():
    clocks = {m[1]: float(m[2]) for m in FMAX.finditer(LOG)}
    assert clocks == {"$glbnet$crg_clkout": 46.01}
