"""report.html and the text summary of a partitioned build folder."""
from __future__ import annotations

import json
from pathlib import Path

import onnx

from ..paths import replace_text
from ..svg import graph_drawing
from ..templating import make_environment, render_with
from .plan import HOST, Partition


def write_partition_page(out: Path) -> Path:
    out = Path(out)
    report = json.loads((out / "report.json").read_text())
    build = json.loads((out / "build.json").read_text())
    partition = Partition.from_json(report["partition"])
    refusals = report["partition"].get("refusals", {})
    model = onnx.load(str(out / "model.onnx"), load_external_data=False)
    side = {n: "host" for n in partition.host_nodes}
    produced = {t: node.name for node in model.graph.node for t in node.output}
    edges = sorted({(produced[t], node.name) for node in model.graph.node for t in node.input if t in produced})
    drawing = graph_drawing([(n.name, n.op_type) for n in model.graph.node], edges, side)
    host_stage = {n: s.name for s in partition.stages if s.side == HOST for n in s.nodes}
    total = partition.macs_total
    segments = [{"name": name, "folder": s["folder"], "nodes": len(stage.nodes), "inputs": ", ".join(stage.inputs),
                 "outputs": ", ".join(stage.outputs), "macs": f"{s['macs']:,}", "cycles": f"{s['cycles']:,}",
                 "utilization": f"{s['utilization']:.1%}" if s.get("utilization") is not None else "-",
                 "rtl": s.get("rtl") or "none", "verified": ", ".join(s.get("verified", {})) or "-"}
                for stage in partition.segments for name, s in report["segments"].items() if name == stage.name]
    host_ops = sorted({partition.node_ops[n] for n in partition.host_nodes})
    context = {
        "model": Path(build["model"]).stem, "model_file": Path(build["model"]).name, "target": build["target"],
        "summary": partition.summary(), "acc_share": f"{partition.macs_on_accelerator / total:.1%}" if total else "-",
        "macs_acc": f"{partition.macs_on_accelerator:,}", "macs_total": f"{total:,}", "segments": segments,
        "macs_host": f"{total - partition.macs_on_accelerator:,}",
        "accelerator_nodes": sum(len(s.nodes) for s in partition.segments),
        "cycles": f"{report['total']['cycles']:,}", "host_nodes": partition.host_nodes,
        "host_ops": ", ".join(host_ops) or "none",
        "sqnr": [(k, f"{v:.1f} dB") for k, v in report["quality"]["sqnr_db"].items()],
        "host_rows": [{"name": n, "op": partition.node_ops[n], "stage": host_stage[n], "why": refusals.get(n, "-")}
                      for n in partition.host_nodes],
        "graph": drawing, "date": build.get("date", "-"), "sha": build.get("model_sha256", "-")[:16],
    }
    html = render_with(make_environment("report", autoescape=True), "report", "partition.html.j2", **context)
    path = out / "report.html"
    replace_text(path, html)
    return path


def partition_summary(out: Path) -> str:
    """What `hlsgen report` prints of a partitioned build."""
    report = json.loads((Path(out) / "report.json").read_text())
    partition = Partition.from_json(report["partition"])
    quality = ", ".join(f"SQNR {k} {v:.1f} dB" for k, v in report["quality"]["sqnr_db"].items())
    segments = "; ".join(f"{name}: {s['cycles']:,} cycles" for name, s in report["segments"].items())
    return f"{partition.summary()}; {quality}; {segments} ({report['total']['cycles']:,} cycles per inference)"
