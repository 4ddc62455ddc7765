"""SWEEP/index.html: Pareto plots (latency against DSPs and against LUTs, each point coloured by accuracy)
and the table of every configuration, each linking to its build's own report.html. One self-contained page,
inline SVG, no plotting library (as report.html)."""
from __future__ import annotations

from dataclasses import dataclass
from html import escape
from pathlib import Path

from ..templating import make_environment, render_with
from .table import COLUMNS, case_name

WIDTH, HEIGHT, MARGIN = 460, 300, 56
SHOWN = ("model", "target", "bits", "batch", "verify", "status", "sqnr_db", "int_accuracy", "latency_us",
         "images_per_s", "cycles", "utilization", "dsp", "lut", "bram_18k", "dram_bytes", "weight_bits", "csim", "rtl",
         "fmax_mhz", "seconds")


@dataclass(frozen=True)
class Quality:
    """How a row's accuracy is read: top-1 where every built row has it and it differs between them, else the
    output SQNR (a small model often keeps full top-1 at every width, which would leave nothing to compare)."""

    column: str
    label: str

    @staticmethod
    def of(rows: list[dict]) -> "Quality":
        built = [r for r in rows if r["status"] == "ok"]
        accuracies = {r.get("int_accuracy") for r in built}
        if None not in accuracies and len(accuracies) > 1:
            return Quality("int_accuracy", "top-1 accuracy")
        return Quality("sqnr_db", "SQNR (dB)")


def pareto(rows: list[dict], resource: str, quality: Quality) -> set[str]:
    """Keys of the built rows no other row beats on latency, `resource` and quality at once."""
    points = [(r["latency_us"], r[resource], -r[quality.column], r["key"]) for r in rows
              if r["status"] == "ok" and r.get(resource) is not None]
    return {key for lat, res, q, key in points
            if not any(o[:3] != (lat, res, q) and o[0] <= lat and o[1] <= res and o[2] <= q for o in points)}


def write_index(rows: list[dict], sweep: Path, title: str, files: list[str]) -> Path:
    quality = Quality.of(rows)
    frontier = pareto(rows, "dsp", quality) | pareto(rows, "lut", quality)
    plots = [scatter(rows, resource, label, quality) for resource, label in (("dsp", "DSP"), ("lut", "LUT"))]
    ok = sum(r["status"] == "ok" for r in rows)
    table = [{"cells": [_cell(Path(row["model"]).name)] + [_cell(row.get(c)) for c in SHOWN[1:]], "report": row.get("report"),
              "pareto": row["key"] in frontier,
              "failed": row["status"] != "ok", "error": f"exit {row['exit_code']} {row['category']}: {row['error']}",
              "name": case_name(row)} for row in sorted(rows, key=_order)]
    html = render_with(make_environment("sweep", autoescape=True), "sweep", "index.html.j2", title=title,
                       summary=f"{len(rows)} configurations: {ok} built, {len(rows) - ok} failed",
                       plots=plots, columns=SHOWN, rows=table, quality=quality.label, all_columns=COLUMNS, files=files)
    path = sweep / "index.html"
    path.write_text(html)
    return path


def scatter(rows: list[dict], resource: str, label: str, quality: Quality) -> str:
    """Latency (x) against `resource` (y); colour from red (worst) to green (best quality); the Pareto
    front drawn as a line through its points; each point links to its report."""
    built = [r for r in rows if r["status"] == "ok" and r.get(resource) is not None]
    title = f"latency vs {label} (colour: {quality.label})"
    parts = [f'<svg class="pareto-plot" role="img" aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg" '
             f'width="{WIDTH}" height="{HEIGHT}">', f'<text x="0" y="14" class="title">{escape(title)}</text>']
    if not built:
        parts += ['<text x="60" y="80">no configuration built</text>', "</svg>"]
        return "\n".join(parts)
    xs, ys, qs = ([r[k] for r in built] for k in ("latency_us", resource, quality.column))
    x_of, y_of = _axis(xs, MARGIN, WIDTH - 16), _axis(ys, HEIGHT - 36, 28)
    q_lo, q_hi = min(qs), max(qs)
    parts.append(f'<line x1="{MARGIN}" y1="{HEIGHT - 36}" x2="{WIDTH - 16}" y2="{HEIGHT - 36}" class="axis"/>'
                 f'<line x1="{MARGIN}" y1="28" x2="{MARGIN}" y2="{HEIGHT - 36}" class="axis"/>')
    for value, anchor in ((min(xs), "start"), (max(xs), "end")):
        parts.append(f'<text x="{x_of(value):.1f}" y="{HEIGHT - 22}" text-anchor="{anchor}">{value:,.1f}</text>')
    for value in (min(ys), max(ys)):
        parts.append(f'<text x="{MARGIN - 4}" y="{y_of(value) + 4:.1f}" text-anchor="end">{value:,}</text>')
    parts.append(f'<text x="{(MARGIN + WIDTH) / 2:.0f}" y="{HEIGHT - 6}" text-anchor="middle">latency (us per image)'
                 f'</text><text x="12" y="{HEIGHT / 2:.0f}" transform="rotate(-90 12 {HEIGHT / 2:.0f})" '
                 f'text-anchor="middle">{label}</text>')
    front = sorted((r["latency_us"], r[resource]) for r in built if r["key"] in pareto(built, resource, quality))
    if len(front) > 1:
        path = " ".join(f"{x_of(x):.1f},{y_of(y):.1f}" for x, y in front)
        parts.append(f'<polyline points="{path}" class="front"/>')
    places: dict[tuple[int, int], list[dict]] = {}
    for row in built:  # configurations at the same latency and cost (widths on one array) sit side by side
        places.setdefault((round(x_of(row["latency_us"])), round(y_of(row[resource]))), []).append(row)
    for row in built:
        share = 1.0 if q_hi == q_lo else (row[quality.column] - q_lo) / (q_hi - q_lo)
        place = places[round(x_of(row["latency_us"])), round(y_of(row[resource]))]
        dodge = (place.index(row) - (len(place) - 1) / 2) * 9
        tip = f"{case_name(row)}: {row['latency_us']:,.2f} us, {row[resource]:,} {label}, {quality.label} " \
              f"{row[quality.column]:.4g}"
        dot = (f'<circle cx="{x_of(row["latency_us"]) + dodge:.1f}" cy="{y_of(row[resource]):.1f}" r="5" '
               f'fill="{_colour(share)}" class="point"><title>{escape(tip)}</title></circle>')
        parts.append(f'<a href="{escape(row["report"])}">{dot}</a>' if row.get("report") else dot)
    parts.append(f'<text x="{WIDTH - 16}" y="40" text-anchor="end" class="legend">{quality.label}: '
                 f'<tspan fill="{_colour(0)}">{q_lo:.4g}</tspan> .. '
                 f'<tspan fill="{_colour(1)}">{q_hi:.4g}</tspan></text>')
    parts.append("</svg>")
    return "\n".join(parts)


def _axis(values: list[float], low_px: float, high_px: float):
    lo, hi = min(values), max(values)
    pad = (hi - lo) * 0.1 or max(abs(hi) * 0.1, 1.0)
    lo, hi = lo - pad, hi + pad
    return lambda v: low_px + (v - lo) / (hi - lo) * (high_px - low_px)


def _colour(share: float) -> str:
    """From red (0) through amber to green (1)."""
    bad, mid, good = (184, 69, 90), (224, 160, 44), (79, 154, 91)
    a, b, t = (bad, mid, share * 2) if share < 0.5 else (mid, good, share * 2 - 1)
    return "#" + "".join(f"{round(x + (y - x) * t):02x}" for x, y in zip(a, b))


def _order(row: dict) -> tuple:
    return (row["model"], row["target"], row["status"] != "ok", row.get("latency_us") or 0, row["bits"], row["verify"])


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)
