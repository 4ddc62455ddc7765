"""hlsgen.report_sections: the page's figures from hand-written report.json dicts (with and without
synthesis, as issue 15's contract writes `synth`)."""
from hlsgen.hw.clock import at_clock
from hlsgen.report_sections import (build_rows, clock_label, headline, performance_rows, resource_table,
                                    timing_rows)
from tests.hw.test_clock import SYNTH

RESOURCES = {"dsp": 96, "bram_18k": 110, "lut": 24_000, "ff": 14_000}
BUDGET = {"dsp": 360, "bram_18k": 432, "lut": 70_560, "ff": 141_120}


def _report(**extra) -> dict:
    return at_clock({"target": {"name": "systolic8x8", "rows": 8, "cols": 8, "dataflow": "weight_stationary",
                                "clock_mhz": 125.0, "part": "xczu3eg-sbva484-1-e"},
                     "designs": {"rtl": {"design": "overlay", "program": "rom"}},
                     "total": {"cycles": 2500, "macs": 100_000, "utilization": 0.625, "resources": RESOURCES,
                               "fit": {"ok": True, "budget": BUDGET}, "io_cycles": {"input": 10, "output": 2},
                               "residency": {"weights": "on_chip"}}} | extra)


def test_clock_labels_say_where_the_clock_comes_from():
    assert clock_label(_report()["total"]) == "estimated at target clock 125 MHz"
    assert clock_label(_report(synth=SYNTH)["total"]) == "at measured Fmax 131.2 MHz (nextpnr after routing)"


def test_headline_at_the_clock():
    cards = {c["name"]: c for c in headline(_report(), [{"name": "csim", "css": "ok"}, {"name": "rtl", "css": "na"}])}
    assert cards["latency"]["value"] == "20.00 µs" and cards["throughput"]["value"] == "50,000 images/s"
    assert cards["verification"]["value"] == "bit-exact" and cards["verification"]["note"] == "csim"
    batched = _report()
    batched = at_clock(batched | {"total": batched["total"] | {"batch": 8,
                                                               "latency_mode": {"cycles": 1000, "utilization": 0.2}}})
    cards = {c["name"]: c for c in headline(batched, [])}
    assert cards["throughput"]["value"] == "400,000 images/s" and "cycles per batch of 8 images" in cards
    assert cards["throughput"]["note"].endswith("; batch 1: 125,000 images/s, 8.00 µs")


def test_resources_without_synthesis_are_estimates_against_the_device():
    table = resource_table(_report())
    assert table["columns"] == ["resource", "estimated (model)", "% of device", "device total (xczu3eg-sbva484-1-e)"]
    assert table["rows"][0] == ["DSP", "96", "26.7%", "360"] and table["rows"][3] == ["FF", "14,000", "9.9%", "141,120"]
    assert table["note"] == "" and timing_rows(_report()) == []


def test_resources_with_synthesis_set_measured_beside_estimated():
    table = resource_table(_report(synth=SYNTH | {"measured": SYNTH["measured"] | {"carry": 900}}))
    assert table["columns"][3:] == ["measured (yosys synth_ecp5 + nextpnr-ecp5)", "% of device",
                                    "measured / estimated", "device total (LFE5U-85F-8CABGA381)"]
    assert table["rows"][0] == ["DSP", "96", f"{96 / 156:.1%}", "64", f"{64 / 156:.1%}", "0.67x", "156"]
    assert table["rows"][2] == ["LUT", "24,000", f"{24_000 / 83_640:.1%}", "21,345", f"{21_345 / 83_640:.1%}", "0.89x",
                                "83,640"]
    assert table["note"] == "also measured: carry 900"


def test_timing_of_a_routed_design_and_of_one_without_a_router():
    rows = {name: (value, css) for name, value, css in timing_rows(_report(synth=SYNTH))}
    assert rows["Fmax"] == ("131.2 MHz (nextpnr after routing)", "") and rows["timing"] == ("met", "ok")
    assert rows["critical path"][0] == "u_array.pe_3_4.prod_q → u_array.pe_3_5.acc_q (7.62 ns)"
    assert rows["tool time"][0] == "synthesis 80.1 s, place and route 312.5 s, bitstream 9.0 s"
    assert "placement" not in rows  # one placer seed: nothing to choose from
    seeds = {"seeds": [{"seed": 1, "fmax_mhz": 120.3}, {"seed": 2, "fmax_mhz": 131.2}, {"seed": 3, "fmax_mhz": None}],
             "chosen": 2}
    rows = {name: value for name, value, _ in timing_rows(_report(synth=SYNTH | {"placement": seeds}))}
    assert rows["placement"] == "seed 2, the fastest of seed 1: 120.3 MHz, seed 2: 131.2 MHz, seed 3: -"
    xilinx = SYNTH | {"flow": "yosys synth_xilinx", "family": "xcup", "fmax_mhz": None, "fmax_source": None,
                      "timing_met": None, "critical_path": None, "bitstream": None, "constraints": None,
                      "seconds": {"synthesis": 50.0, "place_and_route": None, "bitstream": None}}
    rows = {name: (value, css) for name, value, css in timing_rows(_report(synth=xilinx))}
    assert rows["Fmax"][1] == "na" and "timing" not in rows and "critical path" not in rows and "bitstream" not in rows
    assert rows["tool time"][0] == "synthesis 50.0 s"


def test_performance_sets_the_rtl_simulation_beside_the_model():
    measured = {"images": 4, "bit_exact": True, "cycles": 3125, "utilization": 0.5, "layers": {}}
    table = performance_rows(_report(rtl_simulation={"without_backpressure": measured,
                                                     "with_backpressure": measured | {"cycles": 5000}}))
    assert table["columns"] == ["measure", "modelled", "measured in RTL simulation (without backpressure)",
                                "measured in RTL simulation (with backpressure)"]
    assert table["rows"] == [["cycles per inference", "2,500", "3,125", "5,000"],
                             ["PE utilization", "62.5%", "50.0%", "50.0%"],
                             ["latency at 125 MHz", "20.00 µs", "25.00 µs", "40.00 µs"],
                             ["images/s at 125 MHz", "50,000", "40,000", "25,000"],
                             ["images simulated, bit-exact", "-", "4, yes", "4, yes"]]


def test_build_rows_name_options_and_inputs():
    build = {"model": "/data/digits.onnx", "target": "systolic8x8", "bits": "auto", "hls_design": "overlay",
             "model_sha256": "ab" * 32, "calib_sha256": None, "date": "2026-01-02T03:04:05Z",
             "date_source": "SOURCE_DATE_EPOCH"}
    rows = dict(build_rows(build, {"verify": ["csim", "rtl"], "program": "auto"}, _report(), "128 synthetic samples"))
    assert rows["model"] == "digits.onnx (sha256 abababababab…)" and rows["calibration"] == "128 synthetic samples"
    assert rows["verify"] == "csim, rtl" and rows["bits"] == "auto" and "batch" not in rows
    assert rows["program"] == "rom (in the model's own top), chosen by --program auto"
    assert rows["date"] == "2026-01-02 03:04:05 UTC (SOURCE_DATE_EPOCH)"
    assert rows["target"] == "systolic8x8: 8x8 weight_stationary array, xczu3eg-sbva484-1-e, 125 MHz"
    assert dict(build_rows(build | {"batch": 8}, {}, _report(), None))["batch"] == "8 (throughput mode)"


def test_the_text_summary_counts_a_batch_builds_cycles_per_batch():
    from hlsgen.report_page import text_summary

    build = {"model": "m/digits.onnx", "target": "systolic8x8", "bits": "8"}
    quant = {"quality": {"sqnr_db": {"y": 30.0}}}
    total = {"cycles": 52_168, "utilization": 0.61, "batch": 8}
    rtl = {"rtl_simulation": {"without_backpressure": {"cycles": 52_216, "utilization": 0.6}}}
    assert "52,168 modelled cycles per batch of 8 images" in text_summary(build, quant, {"total": total})
    batch = text_summary(build, quant, {"total": total, **rtl})
    assert "52,168 modelled / 52,216 RTL cycles per batch of 8 images" in batch and "per inference" not in batch
    one = text_summary(build, quant, {"total": total | {"batch": 1}, **rtl})
    assert "52,168 modelled / 52,216 RTL cycles per inference" in one
