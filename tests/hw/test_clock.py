"""hlsgen.hw.clock: report.json's times at one clock, the target's until synthesis measures an Fmax."""
from hlsgen.hw import load_target, map_model
from hlsgen.hw.clock import TARGET_CLOCK, at_clock, report_clock
from hlsgen.hw.report import report_json
from tests.hw.models import integer_graph

# report.json's "synth" as the synthesis piece writes it (issue 15's contract), for an ECP5 part
SYNTH = {"flow": "yosys synth_ecp5 + nextpnr-ecp5", "family": "ecp5", "part": "LFE5U-85F-8CABGA381",
         "tools": {"yosys": "0.45", "nextpnr": "0.7"},
         "measured": {"lut": 21_345, "ff": 18_002, "dsp": 64, "bram": 120},
         "device": {"lut": 83_640, "ff": 83_640, "dsp": 156, "bram": 208},
         "estimated": {"lut": 24_000, "ff": 14_000, "dsp": 96, "bram": 110},
         "fmax_mhz": 131.2, "fmax_source": "nextpnr after routing", "clock_target_mhz": 125.0, "timing_met": True,
         "critical_path": {"from": "u_array.pe_3_4.prod_q", "to": "u_array.pe_3_5.acc_q", "ns": 7.62},
         "bitstream": "synth/top.bit", "constraints": "synth/top.lpf",
         "seconds": {"synthesis": 80.1, "place_and_route": 312.5, "bitstream": 9.0}, "logs": "synth/"}


def _report(cycles=1000, clock_mhz=200.0, **total):
    return {"target": {"name": "t", "clock_mhz": clock_mhz}, "total": {"cycles": cycles, **total}}


def test_the_target_clock_until_synthesis_measures_one():
    report = at_clock(_report(cycles=1000, clock_mhz=200.0))
    total = report["total"]
    assert total["clock"] == {"mhz": 200.0, "source": TARGET_CLOCK} == {"mhz": 200.0, "source": "target clock_mhz"}
    assert total["latency_us"] == 5.0 and total["inferences_per_s"] == 200_000.0 == total["images_per_s"]


def test_the_measured_fmax_after_routing_replaces_it():
    report = at_clock(_report(cycles=1312, clock_mhz=125.0) | {"synth": SYNTH})
    total = report["total"]
    assert total["clock"] == {"mhz": 131.2, "source": "measured Fmax (nextpnr after routing)"}
    assert total["latency_us"] == 10.0 and total["inferences_per_s"] == 100_000.0


def test_no_fmax_keeps_the_target_clock():
    xilinx = SYNTH | {"flow": "yosys synth_xilinx", "fmax_mhz": None, "fmax_source": None}
    assert report_clock(_report(clock_mhz=250.0) | {"synth": xilinx}) == {"mhz": 250.0, "source": TARGET_CLOCK}


def test_a_batch_counts_its_images_and_its_run_is_the_latency():
    total = at_clock(_report(cycles=4000, clock_mhz=100.0, batch=8))["total"]
    assert total["latency_us"] == 40.0 and total["inferences_per_s"] == 25_000.0 and total["images_per_s"] == 200_000.0


def test_a_batch_builds_latency_mode_is_timed_at_the_same_clock():
    one = {"cycles": 1250, "utilization": 0.5}
    timed = at_clock(_report(cycles=4000, clock_mhz=125.0, batch=8, latency_mode=one) | {"synth": SYNTH})
    assert timed["total"]["latency_mode"] == one | {"latency_us": round(1250 / 131.2, 4), "images_per_s": 104_960.0}
    assert at_clock(timed) == timed  # idempotent


def test_the_input_is_left_as_it_was_and_other_keys_kept():
    report = _report(cycles=500, macs=7, fit={"ok": True})
    timed = at_clock(report)
    assert "clock" not in report["total"] and timed["total"]["macs"] == 7 and timed["total"]["fit"] == {"ok": True}
    assert at_clock(timed) == timed  # idempotent: the synthesis step recomputes a finished report


def test_report_json_times_are_at_the_target_clock():
    target = load_target("systolic16x16")
    total = report_json(map_model(integer_graph("digits"), target))["total"]
    assert total["clock"] == {"mhz": target.clock_mhz, "source": TARGET_CLOCK}
    assert total["latency_us"] == round(total["cycles"] / target.clock_mhz, 4)
    assert total["inferences_per_s"] == round(target.clock_mhz * 1e6 / total["cycles"], 4)
