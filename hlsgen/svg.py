"""Small inline-SVG drawings for the HTML report: bar charts and the fused graph. No plotting library:
the page must be self-contained and byte-for-byte reproducible."""
from __future__ import annotations

from html import escape

import networkx as nx

PALETTE = ("#3b6ea8", "#e08a2c", "#4f9a5b", "#b8455a", "#7b5ea7")


CHART_WIDTH = 1000  # viewBox units: the chart scales to its container's width (width 100%), text with it


def bar_chart(title: str, labels: list[str], series: dict[str, list[float]], unit: str = "",
              limit: float | None = None, percent: bool = False) -> str:
    """Grouped horizontal bars, one group per label and one bar per series; `limit` draws a budget line."""
    row_h, bar_gap, left = 8 + 12 * len(series), 4, 170
    width = CHART_WIDTH - left - 90  # room for the longest bar's value
    height = 40 + row_h * len(labels) + 20 * len(series)
    peak = max([v for values in series.values() for v in values] + [limit or 0, 1e-12])
    parts = [f'<svg class="chart" role="img" aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg" '
             f'viewBox="0 0 {CHART_WIDTH} {height}" width="100%" preserveAspectRatio="xMinYMin meet">',
             f'<text x="0" y="16" class="title">{escape(title)}</text>']
    for i, label in enumerate(labels):
        y0 = 30 + i * row_h
        parts.append(f'<text x="{left - 6}" y="{y0 + row_h / 2 + 4:.1f}" text-anchor="end">{escape(label[:26])}</text>')
        for j, (name, values) in enumerate(series.items()):
            value = values[i]
            w = max(width * value / peak, 0.5)
            text = f"{value:.1%}" if percent else f"{value:,.0f}{unit}"
            parts.append(f'<rect x="{left}" y="{y0 + j * 12}" width="{w:.1f}" height="{12 - bar_gap}" '
                         f'fill="{PALETTE[j % len(PALETTE)]}"><title>{escape(name)}: {text}</title></rect>')
            parts.append(f'<text x="{left + w + 4:.1f}" y="{y0 + j * 12 + 8}" class="value">{text}</text>')
    if limit is not None:
        x = left + width * limit / peak
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="26" y2="{30 + row_h * len(labels)}" class="limit"/>')
    legend_y = 38 + row_h * len(labels)
    for j, name in enumerate(series):
        parts.append(f'<rect x="{left}" y="{legend_y + j * 18}" width="10" height="10" '
                     f'fill="{PALETTE[j % len(PALETTE)]}"/>'
                     f'<text x="{left + 16}" y="{legend_y + j * 18 + 9}">{escape(name)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def graph_drawing(nodes: list[tuple[str, str]], edges: list[tuple[str, str]],
                  classes: dict[str, str] | None = None) -> str:
    """Nodes (name, label) in topological layers, left to right; edges as lines; `classes` adds a CSS class to
    a node's box (e.g. where it runs)."""
    g = nx.DiGraph()
    g.add_nodes_from(name for name, _ in nodes)
    g.add_edges_from(edges)
    labels = dict(nodes)
    layers = list(nx.topological_generations(g))
    box_w, box_h, gap_x, gap_y = 150, 40, 40, 14
    pos = {}
    for x, layer in enumerate(layers):
        for y, name in enumerate(sorted(layer, key=list(labels).index)):
            pos[name] = (10 + x * (box_w + gap_x), 10 + y * (box_h + gap_y))
    width = 20 + len(layers) * (box_w + gap_x)
    height = 20 + max((len(layer) for layer in layers), default=1) * (box_h + gap_y)
    parts = [f'<svg class="graph" role="img" aria-label="fused graph" xmlns="http://www.w3.org/2000/svg" '
             f'width="{width}" height="{height}">']
    for a, b in edges:
        (xa, ya), (xb, yb) = pos[a], pos[b]
        parts.append(f'<line x1="{xa + box_w}" y1="{ya + box_h / 2}" x2="{xb}" y2="{yb + box_h / 2}" class="edge"/>')
    for name, label in nodes:
        x, y = pos[name]
        css = f"node {classes[name]}" if classes and name in classes else "node"
        parts.append(f'<g><rect x="{x}" y="{y}" width="{box_w}" height="{box_h}" rx="5" class="{css}"/>'
                     f'<text x="{x + 6}" y="{y + 16}" class="node-name">{escape(name[:20])}</text>'
                     f'<text x="{x + 6}" y="{y + 32}" class="node-op">{escape(label[:24])}</text></g>')
    parts.append("</svg>")
    return "\n".join(parts)
