"""OUT/report.html: one self-contained page (inline SVG, no scripts, no network) describing a build,
and the text summary `hlsgen report` prints."""
from __future__ import annotations

import json
from pathlib import Path

import yaml
from markupsafe import Markup

from . import __version__
from .errors import PathError
from .hw.clock import at_clock
from .paths import reading_build, replace_text
from .report_sections import (RESOURCES, build_date, build_rows, clock_label, headline, performance_rows,
                              resource_table, rtl_measured, timing_rows)
from .svg import bar_chart, graph_drawing
from .templating import make_environment, render_with


def _read(out: Path, name: str) -> dict | None:
    path = out / name
    return json.loads(path.read_text()) if path.is_file() else None


def _timed(report: dict | None) -> dict | None:
    """`report` with its times at its clock (hlsgen.hw.clock); one written before total.clock existed
    reads the same."""
    return at_clock(report) if report and "total" in report and "target" in report else report


def _config(out: Path) -> dict:
    """config.yaml: the options as given (a build folder written before it existed has none)."""
    path = out / "config.yaml"
    return (yaml.safe_load(path.read_text()) or {}) if path.is_file() else {}


def page_context(out: Path) -> dict:
    build, quant, report = _read(out, "build.json"), _read(out, "quant.json"), _read(out, "report.json")
    if build is None or quant is None:
        raise PathError(f"{out} is not an hlsgen build folder (no build.json/quant.json); run `hlsgen build` first")
    report = _timed(report)
    graph = json.loads((out / "integer" / "graph.json").read_text())
    layers = (report or {}).get("layers", [])
    tensors = quant["tensors"]
    measured = rtl_measured(report)
    checks = _verification(report)
    columns, rows = _layer_table(report, measured)
    names = [layer["name"] for layer in layers]
    charts = []
    if layers:
        cycles = {"model": [layer["cycles"] for layer in layers]}
        utilization = {"model": [layer["utilization"] for layer in layers]}
        if measured is not None:
            rtl = [measured["layers"].get(name, {}) for name in names]
            cycles["measured in RTL simulation"] = [m.get("cycles", 0) for m in rtl]
            utilization["measured in RTL simulation"] = [m.get("utilization", 0.0) for m in rtl]
        charts.append(bar_chart("Cycles per layer", names, cycles))
        charts.append(bar_chart("PE utilization per layer", names, utilization, percent=True, limit=1.0))
        occupancy = _occupancy(layers)
        if occupancy:
            charts.append(bar_chart("Buffer occupancy (peak over layers)", list(occupancy),
                                    {"used": [u for u, _ in occupancy.values()]}, percent=True, limit=1.0))
        if report and report.get("total", {}).get("resources"):
            charts.append(_resource_chart(report))
    weighted = quant["layers"]
    if weighted:
        charts.append(bar_chart("Bit widths", [layer["name"] for layer in weighted], {
            "weights": [layer["weight_bits"] or 0 for layer in weighted],
            "output activations": [tensors.get(by_output_name(graph, layer["name"]), {}).get("bits", 0)
                                   for layer in weighted]}, unit=" b"))
    node_labels = [(n["name"], f"{n['op']} " + "x".join(map(str, graph["tensors"][n["outputs"][0]]["shape"])))
                   for n in graph["nodes"]]
    produced = {t: n["name"] for n in graph["nodes"] for t in n["outputs"]}
    edges = [(produced[t], n["name"]) for n in graph["nodes"] for t in n["inputs"] if t in produced]
    timed = report is not None and "clock" in report.get("total", {})
    return {
        "model": graph["name"], "target": build["target"], "version": __version__,
        "summary": text_summary(build, quant, report),
        "headline": headline(report, checks) if timed else [],
        "clock_label": clock_label(report["total"]) if timed else "",
        "build_rows": build_rows(build, _config(out), report, quant["quality"].get("data")),
        "date": build_date(build),
        "resources": resource_table(report) if timed else None,
        "timing": timing_rows(report) if report else [],
        "performance": performance_rows(report) if timed else None,
        "verification": checks,
        "quality": _quality(quant["quality"]),
        "graph_svg": Markup(graph_drawing(node_labels, edges)),
        "layer_columns": columns, "layer_rows": rows, "designs": _designs((report or {}).get("designs", {})),
        "charts": [Markup(c) for c in charts],
    }


def _layer_table(report: dict | None, measured: dict | None) -> tuple[list[str], list[list[str]]]:
    """One row per program row, then the totals of one inference (the layers plus the I/O beats)."""
    layers = (report or {}).get("layers", [])
    columns = ["layer", "op", "unit", "output shape", "w/in/out bits", "tiles", "MACs", "DRAM bytes", "model cycles",
               "PE utilization (model)"]
    if measured is not None:
        columns += ["RTL cycles", "PE utilization (RTL)"]
    rows = []
    for layer in layers:
        b = layer.get("bits", {})
        w, a_in, a_out = (str(v) if v else "-" for v in (b.get("weights"), b.get("input"), b.get("output")))
        row = [layer["name"], layer["op"], layer.get("unit", "-"), "x".join(map(str, layer.get("output_shape", []))),
               f"{w}/{a_in}/{a_out}", _tiles(layer.get("tiles") or {}), f"{layer['macs']:,}",
               f"{layer.get('dram_bytes', 0):,}" + (" (memory-bound)" if layer.get("memory_bound") else ""),
               f"{layer['cycles']:,}", f"{layer['utilization']:.1%}" if layer["macs"] else "-"]
        if measured is not None:
            rtl = measured["layers"].get(layer["name"])
            row += ["-", "-"] if rtl is None else [f"{rtl['cycles']:,}",
                                                   f"{rtl['utilization']:.1%}" if layer["macs"] else "-"]
        rows.append(row)
    if layers:
        total = report["total"]
        io = sum(total.get("io_cycles", {}).values())
        row = [f"total per inference (layers + {io:,} I/O cycles)" if total.get("batch", 1) == 1 else
               f"total per batch of {total['batch']} (layers + {io:,} I/O cycles)", "", "", "", "", "",
               f"{total['macs']:,}", f"{total.get('dram_bytes', 0):,}", f"{total['cycles']:,}",
               f"{total['utilization']:.1%}"]
        if measured is not None:
            row += [f"{measured['cycles']:,}", f"{measured['utilization']:.1%}"]
        rows.append(row)
    return columns, rows


def by_output_name(graph: dict, layer: str) -> str:
    node = next((n for n in graph["nodes"] if n["name"] == layer), None)
    return node["outputs"][0] if node else ""


def _tiles(tiles: dict) -> str:
    """Array layers: row x column x spatial tiles; vector layers: passes over the lanes x positions."""
    keys = [k for k in ("row_tiles", "col_tiles", "spatial_tiles") if k in tiles]
    if keys:
        return " x ".join(str(tiles[k]) for k in keys)
    if "passes" in tiles and "positions" in tiles:
        return f"{tiles['passes']} pass x {tiles['positions']} pos"
    return ", ".join(f"{k} {v}" for k, v in tiles.items() if isinstance(v, (int, float))) or "-"


def _occupancy(layers: list[dict]) -> dict[str, tuple[float, int]]:
    peak: dict[str, tuple[float, int]] = {}
    for layer in layers:
        for name, buf in (layer.get("buffers") or {}).items():
            used, capacity = buf.get("used", 0), buf.get("capacity", 0)
            if capacity:
                share = used / capacity
                if share > peak.get(name, (-1, 0))[0]:
                    peak[name] = (share, capacity)
    return peak


def _resource_chart(report: dict) -> str:
    """Shares of the device: the model's estimate, and synthesis's count beside it when it ran."""
    resources, synth = report["total"]["resources"], report.get("synth")
    budget = report["total"].get("fit", {}).get("budget", {}) if isinstance(report["total"].get("fit"), dict) else {}
    device = (synth or {}).get("device") or {}
    keys = [(key, synth_key, label) for key, synth_key, label in RESOURCES if key in resources]

    def share(used, key: str, synth_key: str) -> float:
        have = device.get(synth_key, budget.get(key))
        return used / have if used is not None and have else 0.0

    series = {"estimated (model)": [share(resources[k], k, s) for k, s, _ in keys]}
    if synth:
        measured = synth.get("measured", {})
        series["measured (synthesis)"] = [share(measured.get(s), k, s) for k, s, _ in keys]
    return bar_chart("Resources against the device budget", [label for _, _, label in keys], series, percent=True,
                     limit=1.0)


def _designs(designs: dict) -> list[list[str]]:
    """What each part of the build is: the performance model's machine, the C++'s, the RTL's."""
    rows = []
    if "model" in designs:
        rows.append(["performance model (layers, cycles, resources)", designs["model"], "-", "-", "-", "-"])
    for key, label in (("hls", "HLS C++ (hls/)"), ("rtl", "Verilog RTL (rtl/)")):
        d = designs.get(key)
        if d is None:
            continue
        if d.get("design") is None:
            rows.append([label, f"none: {d.get('why', '')}", "-", "-", "-", "-"])
            continue
        what = d["design"] + (f": {d['note']}" if d.get("note") else "")
        if d.get("program") == "external":  # the target's top: no weight ROM, the program is an image
            what += f" (program in external memory: {d['program_image_bytes']:,}-byte program.bin)"
        rows.append([label, what, f"{d['macs_per_cycle']:,}", f"{d['dsp']:,}" if "dsp" in d else "-",
                     f"{d['bram_18k']:,}" if "bram_18k" in d else "-",
                     f"{d['weight_rom_bits']:,}" if "weight_rom_bits" in d else "-"])
    return rows


def _verification(report: dict | None) -> list[dict]:
    checks = []
    verification = (report or {}).get("verification", {})
    for name in ("csim", "rtl"):
        result = verification.get(name)
        if result is None:
            checks.append({"name": name, "result": "not run", "css": "na", "details": f"run `hlsgen {'csim' if name == 'csim' else 'sim'} OUT`"})
        else:
            ok = result.get("passed", False)
            checks.append({"name": name, "result": "bit-exact" if ok else "MISMATCH", "css": "ok" if ok else "fail",
                           "details": result.get("details", "")})
    return checks


def _quality(measured: dict) -> list[tuple[str, str]]:
    """Measured on the build's calibration samples; the first row names them (real or synthetic)."""
    rows = [("measured on", measured.get("data", f"{measured.get('samples', '-')} calibration samples"))]
    for output, value in measured.get("sqnr_db", {}).items():
        rows.append((f"SQNR of {output}, integer vs float", f"{value:.1f} dB"))
    for key, label in (("float_accuracy", "top-1 accuracy, float"), ("int_accuracy", "top-1 accuracy, integer"),
                       ("argmax_agreement", "argmax agreement, integer vs float")):
        if key in measured:
            rows.append((label, f"{measured[key]:.2%}"))
    return rows


def text_summary(build: dict, quant: dict, report: dict | None) -> str:
    parts = [f"{Path(build['model']).name} for {build['target']} at --bits {build['bits']}"]
    quality = quant["quality"]
    if "int_accuracy" in quality:
        parts.append(f"top-1 float {quality['float_accuracy']:.2%} -> integer {quality['int_accuracy']:.2%}")
    parts += [f"SQNR {k} {v:.1f} dB" for k, v in quality.get("sqnr_db", {}).items()]
    if "data" in quality:
        parts[-1] += f" (on {quality['data']})"
    if report and "total" in report:
        total, measured = report["total"], rtl_measured(report)
        # one run of the program computes the whole batch
        per = f"per batch of {total['batch']} images" if total.get("batch", 1) > 1 else "per inference"
        if measured is not None:
            parts.append(f"{total['cycles']:,} modelled / {measured['cycles']:,} RTL cycles {per}, PE "
                         f"utilization {total['utilization']:.1%} modelled / {measured['utilization']:.1%} RTL")
        else:
            parts.append(f"{total['cycles']:,} modelled cycles {per}, {total['utilization']:.1%} PE utilization")
        if "clock" in total:
            parts.append(f"{total['latency_us']:,.2f} us, {total['images_per_s']:,.0f} images/s "
                         f"{clock_label(total)}")
    return "; ".join(parts)


def write_report_page(out: Path) -> Path:
    with reading_build(Path(out)):
        context = page_context(Path(out))
    html = render_with(make_environment("report", autoescape=True), "report", "report.html.j2", **context)
    path = Path(out) / "report.html"
    replace_text(path, html)
    return path


def summarize(out: Path) -> str:
    """The one-paragraph text summary `hlsgen report` prints."""
    out = Path(out)
    with reading_build(out):
        build, quant = _read(out, "build.json"), _read(out, "quant.json")
        if build is None or quant is None:
            raise PathError(f"{out} is not an hlsgen build folder (no build.json/quant.json); run `hlsgen build` "
                            "first")
        return text_summary(build, quant, _timed(_read(out, "report.json")))


def record_verification(out: Path, check: str, passed: bool, details: str) -> None:
    """Note a simulation's verdict in OUT/report.json (`verification.<check>`) and redraw report.html."""
    path = Path(out) / "report.json"
    report = json.loads(path.read_text()) if path.is_file() else {}
    report.setdefault("verification", {})[check] = {"passed": passed, "details": details}
    rewrite_report(Path(out), report)


def rewrite_report(out: Path, report: dict) -> dict:
    """Replace OUT/report.json by `report` with its times at its clock (hlsgen.hw.clock: a measured Fmax
    once `synth` holds one), each file whole or not at all, and redraw report.html from it. Returns what
    was written."""
    with reading_build(Path(out)):  # an edited report.json is a wrong build folder (6), not a crash
        report = _timed(report)
    replace_text(Path(out) / "report.json", json.dumps(report, indent=1) + "\n")
    write_report_page(Path(out))
    return report
