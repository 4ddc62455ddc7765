"""The clock every time in report.json is computed at, and the one computation of those times: the target's
clock_mhz until synthesis measures an Fmax (report.json's `synth.fmax_mhz`), then that Fmax. Both the build
and `hlsgen synth` (after it adds `synth`) call `at_clock`, so latency and images/s never describe two clocks."""
from __future__ import annotations

TARGET_CLOCK = "target clock_mhz"


def report_clock(report: dict) -> dict:
    """`{"mhz", "source"}`: the measured Fmax where synthesis found one, else the target's clock."""
    synth = report.get("synth") or {}
    if synth.get("fmax_mhz"):
        how = synth.get("fmax_source") or synth.get("flow") or "synthesis"
        return {"mhz": float(synth["fmax_mhz"]), "source": f"measured Fmax ({how})"}
    return {"mhz": float(report["target"]["clock_mhz"]), "source": TARGET_CLOCK}


def at_clock(report: dict) -> dict:
    """`report` with `total.clock`, `total.latency_us` (one run of the program), `total.inferences_per_s`
    (runs per second) and `total.images_per_s` (runs x `total.batch` images, 1 unless --batch) at
    `report_clock(report)`. The other keys are kept as they are; `report` itself is not changed."""
    total = report["total"]
    clock = report_clock(report)
    cycles, images = total["cycles"], total.get("batch", 1)
    runs = clock["mhz"] * 1e6 / cycles if cycles else 0.0
    timed = {"clock": clock, "latency_us": round(cycles / clock["mhz"], 4), "inferences_per_s": round(runs, 4),
             "images_per_s": round(images * runs, 4)}
    if "latency_mode" in total:  # a batch build's figures at batch 1, at the same clock
        one = total["latency_mode"]
        timed["latency_mode"] = one | {"latency_us": round(one["cycles"] / clock["mhz"], 4),
                                       "images_per_s": round(clock["mhz"] * 1e6 / one["cycles"], 4)}
    return report | {"total": total | timed}
