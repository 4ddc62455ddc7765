"""The hardware engineer's sections of report.html, each a pure function of the build's records
(report.json, build.json, config.yaml): the headline figures at the clock, the build's options and inputs,
the resources against the device (and against synthesis when `hlsgen synth` ran), timing, and the model's
performance beside the RTL simulation's. The times all come from hlsgen.hw.clock."""
from __future__ import annotations

from pathlib import Path

from .hw.clock import TARGET_CLOCK, at_clock

# report.json's resource names: the model's estimate (total.resources), synthesis (synth.*), the label
RESOURCES = (("dsp", "dsp", "DSP"), ("bram_18k", "bram", "BRAM (18 Kib blocks)"), ("lut", "lut", "LUT"),
             ("ff", "ff", "FF"))


def clock_label(total: dict) -> str:
    clock = total["clock"]
    if clock["source"] == TARGET_CLOCK:
        return f"estimated at target clock {clock['mhz']:g} MHz"
    how = clock["source"].removeprefix("measured Fmax ").strip("()")
    return f"at measured Fmax {clock['mhz']:g} MHz ({how})"


def headline(report: dict, checks: list[dict]) -> list[dict]:
    """The figures at the top of the page: value, what it is, and how it was obtained."""
    total, measured = report["total"], rtl_measured(report)
    label = clock_label(total)
    batch = total.get("batch", 1)
    run = f"per batch of {batch} images" if batch > 1 else "per inference"
    cycles_note = "modelled" + (f"; {measured['cycles']:,} measured in RTL simulation" if measured else "")
    passed = [c["name"] for c in checks if c["css"] == "ok"]
    failed = [c["name"] for c in checks if c["css"] == "fail"]
    verdict = ("MISMATCH", "fail", ", ".join(failed)) if failed else \
        ("bit-exact", "ok", ", ".join(passed)) if passed else ("not verified", "na", "no simulation ran")
    return [
        {"name": "latency", "value": f"{total['latency_us']:,.2f} µs", "note": f"{run}, {label}", "css": ""},
        {"name": "throughput", "value": f"{total['images_per_s']:,.0f} images/s",
         "note": (f"batch {batch}, " if batch > 1 else "batch 1 (latency mode), ") + label
         + (f"; batch 1: {one['images_per_s']:,.0f} images/s, {one['latency_us']:,.2f} µs"
            if (one := total.get("latency_mode")) else ""), "css": ""},
        {"name": "clock", "value": f"{total['clock']['mhz']:g} MHz", "note": total["clock"]["source"], "css": ""},
        {"name": "cycles " + run, "value": f"{total['cycles']:,}", "note": cycles_note, "css": ""},
        {"name": "PE utilization", "value": f"{total['utilization']:.1%}",
         "note": "modelled" + (f"; {measured['utilization']:.1%} in RTL simulation" if measured else ""), "css": ""},
        {"name": "verification", "value": verdict[0], "note": verdict[2], "css": verdict[1]},
    ]


def rtl_measured(report: dict | None, mode: str = "without_backpressure") -> dict | None:
    """What `hlsgen sim` measured (report.json's rtl_simulation), if it ran in that mode."""
    return ((report or {}).get("rtl_simulation") or {}).get(mode)


def build_rows(build: dict, config: dict, report: dict | None, data: str | None) -> list[tuple[str, str]]:
    """The build's options and inputs, as `hlsgen build` was given them and as it resolved them."""
    target = (report or {}).get("target", {})
    total = (report or {}).get("total", {})
    rows = [("target", f"{build['target']}" + (f": {target['rows']}x{target['cols']} {target['dataflow']} array, "
                                                 f"{target['part']}, {target['clock_mhz']:g} MHz" if target else "")),
            ("bits", str(build["bits"])),
            ("program", _program(config, report)),
            ("residency", ", ".join(f"{k.replace('_', ' ')} {v.replace('_', '-')}"
                                    for k, v in total.get("residency", {}).items()) or "-"),
            ("HLS design", build.get("hls_design", "-") + (", chosen by --hls-design auto"
                                                          if config.get("hls_design") == "auto" else "")),
            ("verify", ", ".join(config.get("verify") or []) or "none")]
    batch = build.get("batch", config.get("batch", total.get("batch")))
    if batch is not None:
        rows.append(("batch", f"{batch}" + (" (throughput mode)" if batch > 1 else " (latency mode)")))
    rows.append(("model", _file(build["model"], build.get("model_sha256"))))
    calib = config.get("calib")
    rows.append(("calibration", _file(calib, build.get("calib_sha256")) if calib else (data or "none")))
    if build.get("date"):
        why = ("SOURCE_DATE_EPOCH" if build.get("date_source") == "SOURCE_DATE_EPOCH" else
               "the newest input file's time: builds are byte-identical for the same inputs; "
               "SOURCE_DATE_EPOCH sets it")
        rows.append(("date", f"{build_date(build)} ({why})"))
    return rows


def build_date(build: dict) -> str:
    """build.json's date (hlsgen.provenance), as the page prints it."""
    return build.get("date", "").replace("T", " ").replace("Z", " UTC")


def _program(config: dict, report: dict | None) -> str:
    rtl = ((report or {}).get("designs") or {}).get("rtl") or {}
    where = {"external": "external (the target's top loads program.bin)", "rom": "rom (in the model's own top)"}
    resolved = rtl.get("program")
    asked = config.get("program", "auto")
    if resolved is None:
        return asked
    return where.get(resolved, resolved) + (f", chosen by --program {asked}" if asked == "auto" else "")


def _file(path: str, digest: str | None) -> str:
    return Path(path).name + (f" (sha256 {digest[:12]}…)" if digest else "")


def resource_table(report: dict) -> dict:
    """Columns and rows of absolute counts: the model's estimate, synthesis when it ran, and the device's
    totals, each share of the device beside it."""
    total, synth = report["total"], report.get("synth")
    estimated = total.get("resources", {})
    fit = total.get("fit") if isinstance(total.get("fit"), dict) else {}
    device = (synth or {}).get("device") or {}
    budget = fit.get("budget", {})
    part = (synth or {}).get("part") or report.get("target", {}).get("part", "")
    columns = ["resource", "estimated (model)", "% of device"]
    if synth:
        columns += [f"measured ({synth['flow']})", "% of device", "measured / estimated"]
    columns.append(f"device total ({part})")
    rows = []
    for key, synth_key, label in RESOURCES:
        if key not in estimated:
            continue
        have = device.get(synth_key, budget.get(key))
        row = [label, f"{estimated[key]:,}", _share(estimated[key], have)]
        if synth:
            got = synth.get("measured", {}).get(synth_key)
            row += ["-" if got is None else f"{got:,}", _share(got, have),
                    f"{got / estimated[key]:.2f}x" if got is not None and estimated[key] else "-"]
        row.append("-" if have is None else f"{have:,}")
        rows.append(row)
    extras = {k: v for k, v in ((synth or {}).get("measured") or {}).items()
              if k not in {s for _, s, _ in RESOURCES}}
    note = ", ".join(f"{k} {v:,}" if isinstance(v, int) else f"{k} {v}" for k, v in extras.items())
    return {"columns": columns, "rows": rows, "note": f"also measured: {note}" if note else ""}


def _share(used: int | None, have: int | None) -> str:
    return f"{used / have:.1%}" if used is not None and have else "-"


def timing_rows(report: dict) -> list[tuple[str, str, str]]:
    """Synthesis, place and route and the bitstream (report.json's `synth`): (what, value, css class)."""
    synth = report.get("synth")
    if not synth:
        return []
    tools = synth.get("tools") or {}
    met = synth.get("timing_met")
    rows = [("flow", synth["flow"], ""), ("part", f"{synth['part']} ({synth['family']})", ""),
            ("tools", ", ".join(f"{k} {v}" for k, v in tools.items() if v) or "-", ""),
            ("clock constraint", f"{synth['clock_target_mhz']:g} MHz", "")]
    if synth.get("fmax_mhz"):
        rows.append(("Fmax", f"{synth['fmax_mhz']:g} MHz ({synth.get('fmax_source') or 'measured'})", ""))
    else:
        rows.append(("Fmax", "not measured (no place and route for this family)", "na"))
    placement = synth.get("placement")
    if placement and len(placement["seeds"]) > 1:
        tried = ", ".join(f"seed {p['seed']}: {p['fmax_mhz']:g} MHz" if p["fmax_mhz"] else f"seed {p['seed']}: -"
                          for p in placement["seeds"])
        rows.append(("placement", f"seed {placement['chosen']}, the fastest of {tried}", ""))
    if met is not None:
        rows.append(("timing", "met" if met else "NOT met", "ok" if met else "fail"))
    path = synth.get("critical_path")
    if path:
        rows.append(("critical path", f"{path['from']} → {path['to']} ({path['ns']:g} ns)", ""))
    for key, label in (("bitstream", "bitstream"), ("constraints", "constraints")):
        if synth.get(key):
            rows.append((label, synth[key], ""))
    seconds = synth.get("seconds") or {}
    rows.append(("tool time", ", ".join(f"{k.replace('_', ' ')} {v:,.1f} s" for k, v in seconds.items()
                                        if v is not None) or "-", ""))
    rows.append(("logs", synth.get("logs", "synth/"), ""))
    return rows


def performance_rows(report: dict) -> dict:
    """The model's figures beside the RTL simulation's (without and with backpressure, where run)."""
    total = report["total"]
    mhz = total["clock"]["mhz"]
    modes = [(mode, rtl_measured(report, mode)) for mode in ("without_backpressure", "with_backpressure")]
    modes = [(mode, m) for mode, m in modes if m]
    columns = ["measure", "modelled"] + [f"measured in RTL simulation ({mode.replace('_', ' ')})"
                                         for mode, _ in modes]
    batch = total.get("batch", 1)

    def at(cycles: int) -> list[str]:  # the one computation of times (hlsgen.hw.clock), at these cycles
        timed = at_clock(report | {"total": {"cycles": cycles, "batch": batch}})["total"]
        return [f"{timed['latency_us']:,.2f} µs", f"{timed['images_per_s']:,.0f}"]

    rows = [["cycles per inference" if batch == 1 else f"cycles per batch of {batch}"],
            ["PE utilization"], [f"latency at {mhz:g} MHz"], [f"images/s at {mhz:g} MHz"]]
    for m in [total] + [m for _, m in modes]:
        for row, value in zip(rows, [f"{m['cycles']:,}", f"{m['utilization']:.1%}", *at(m["cycles"])]):
            row.append(value)
    if modes:
        rows.append(["images simulated, bit-exact", "-",
                     *(f"{m['images']}, {'yes' if m['bit_exact'] else 'NO'}" for _, m in modes)])
    return {"columns": columns, "rows": rows}
