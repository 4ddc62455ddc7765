"""`hlsgen build` of a model the accelerator runs only in part: each segment a build of its own, the host
stages as ONNX models, and the whole model's quality measured end to end.

OUT/ of a partitioned build:
  build.json, config.yaml   what was built (the marker names `partition`)
  partition.json            the stages in run order, the nodes of each side, MACs
  model.onnx                the whole model, folded (its nodes named as partition.json names them)
  host/<stage>.onnx         each host stage, run by onnxruntime in float
  segments/<segment>/       each accelerator segment: a complete build folder (hls/, rtl/, report.json, ...)
  verify/                   stored inputs and the whole model's outputs (float, and through the integer segments)
  report.json, report.html  the partition, per-output quality, the segments' cycles
"""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx

from ..errors import UnsupportedModelError, UsageError
from ..ir import Graph, TensorInfo
from ..npz_io import top1_accuracy, write_npz
from ..progress import Step
from ..quant.report import sqnr_db
from .onnx_graph import TensorType, input_types, session
from .plan import Partition, stage_model
from .whole import PARTITION_FILE, WholeModel, segment_folder

MAX_HOST_MACS = 0.05  # default of --max-host-macs


def inputs_graph(model: onnx.ModelProto, types: dict[str, TensorType]) -> Graph:
    """A graph of only the model's inputs: what the calibration's checks read of a model."""
    graph = Graph(name="inputs")
    for name, t in input_types(model).items():
        graph.inputs.append(name)
        graph.tensors[name] = TensorInfo(name, t.shape, str(t.dtype))
    return graph


class FloatValues:
    """Any tensor of the (folded) float model on the calibration samples, by onnxruntime, cached."""

    def __init__(self, model: onnx.ModelProto, feeds: dict[str, np.ndarray]):
        self.model, self.feeds = model, feeds
        self.cache: dict[str, np.ndarray] = dict(feeds)

    def __call__(self, names: list[str]) -> dict[str, np.ndarray]:
        wanted = [n for n in dict.fromkeys(names) if n not in self.cache]
        if wanted:
            probe = onnx.ModelProto.FromString(self.model.SerializeToString())
            del probe.graph.output[:]
            probe.graph.output.extend(onnx.ValueInfoProto(name=n) for n in wanted)
            sess = session(probe)
            count = next(iter(self.feeds.values())).shape[0]
            rows = [sess.run(wanted, {k: v[i : i + 1] for k, v in self.feeds.items()}) for i in range(count)]
            for j, name in enumerate(wanted):
                self.cache[name] = np.concatenate([r[j] for r in rows])
        return {n: self.cache[n] for n in names}


HOST_NOTICES = 5  # host nodes a build names with their reason (partition.json lists them all)


def host_notices(partition: Partition, refusals: dict[str, str]) -> list[str]:
    """One notice naming the nodes the host runs and why (the first HOST_NOTICES of them)."""
    named = [f"{n!r} ({partition.node_ops[n]}): {refusals[n]}" for n in partition.host_nodes if n in refusals]
    if not named:
        return []
    more = f"; {len(named) - HOST_NOTICES} more in partition.json" if len(named) > HOST_NOTICES else ""
    return [f"on the host: {'; '.join(named[:HOST_NOTICES])}{more}"]


def check_host_share(partition: Partition, refusals: dict[str, str], max_host_macs: float,
                     accelerator_only: bool) -> None:
    """--accelerator-only and --max-host-macs, before anything is built."""
    host = partition.host_nodes
    if accelerator_only and (host or len(partition.segments) > 1):
        named = "; ".join(f"{n!r} ({partition.node_ops[n]}): {refusals.get(n, 'runs on the host')}" for n in host[:5])
        raise UnsupportedModelError(f"--accelerator-only: {len(host)} node(s) would run on the host: {named}"
                                    + (" ..." if len(host) > 5 else "") + "; drop --accelerator-only to partition")
    total = partition.macs_total
    host_macs = total - partition.macs_on_accelerator
    if total and host_macs / total > max_host_macs:
        heavy = sorted((n for n in host if partition.node_macs[n]), key=lambda n: -partition.node_macs[n])[:3]
        named = ", ".join(f"{n!r} ({partition.node_ops[n]}, {partition.node_macs[n]:,} MACs: "
                          f"{refusals.get(n, 'host')})" for n in heavy)
        raise UnsupportedModelError(f"{host_macs / total:.1%} of the model's MACs would run on the host, more than "
                                    f"--max-host-macs {max_host_macs:.0%}: {named}; raise --max-host-macs to "
                                    "build it anyway")


def build_segments(options, step: Step, model: onnx.ModelProto, types, partition: Partition, values: FloatValues,
                   folder: Path, build_one) -> dict[str, object]:
    """Each segment's build folder under folder/segments/, from its own ONNX model and calibration data."""
    results = {}
    work = folder / "segments"
    work.mkdir(parents=True)
    for segment in partition.segments:
        source = work / f"{segment.name}.onnx"
        onnx.save(stage_model(model, segment, types, Path(options.model).stem), str(source))
        calib = work / f"{segment.name}_calib.npz"
        write_npz(calib, values(list(segment.inputs)))
        seg_options = replace(options, model=source, calib=calib, out=segment_folder(folder, segment.name),
                              input_range=None, max_accuracy_drop=None, input_shapes=(),  # its shapes are fixed
                              min_sqnr_db=options.min_sqnr_db if options.min_sqnr_db is not None else 30.0)
        results[segment.name] = build_one(seg_options, step)
        source.unlink()
        calib.unlink()
    return results


def write_whole(folder: Path, options, model: onnx.ModelProto, types, partition: Partition, refusals: dict,
                values: FloatValues, labels, source: str, results: dict) -> dict:
    """The whole model's files beside its segments; returns the quality measured end to end."""
    onnx.save(model, str(folder / "model.onnx"))
    (folder / "host").mkdir()
    for stage in partition.stages:
        if stage.side == "host":
            onnx.save(stage_model(model, stage, types, Path(options.model).stem), str(folder / "host" / f"{stage.name}.onnx"))
    (folder / PARTITION_FILE).write_text(json.dumps({"partition": partition.to_json(), "refusals": refusals},
                                                    indent=1) + "\n")
    feeds = {k: values.feeds[k] for k in partition.inputs}
    float_out = values(list(partition.outputs))
    whole = WholeModel(folder)
    int_out = whole.run(feeds)
    # SQNR of real-valued outputs; integer outputs (class ids, TopK indices) agree or not, element by element
    real = [k for k in partition.outputs if np.issubdtype(float_out[k].dtype, np.floating)]
    quality = {"samples": int(next(iter(feeds.values())).shape[0]), "data": source,
               "sqnr_db": {k: round(sqnr_db(float_out[k], int_out[k]), 3) for k in real}}
    if len(real) < len(partition.outputs):
        quality["agreement"] = {k: round(float(np.mean(float_out[k] == int_out[k])), 4)
                                for k in partition.outputs if k not in real}
    if labels is not None and len(partition.outputs) == 1:
        (name,) = partition.outputs
        quality["float_accuracy"] = top1_accuracy(float_out[name], labels)
        quality["int_accuracy"] = top1_accuracy(int_out[name], labels)
    count = min(16, quality["samples"])
    write_npz(folder / "verify" / "inputs.npz", {k: v[:count] for k, v in feeds.items()})
    write_npz(folder / "verify" / "float_outputs.npz", {k: v[:count] for k, v in float_out.items()})
    write_npz(folder / "verify" / "outputs.npz", {k: v[:count] for k, v in int_out.items()})
    segments = {}
    for name, result in results.items():
        report = json.loads((segment_folder(folder, name) / "report.json").read_text())
        segments[name] = {"folder": f"segments/{name}", "cycles": report["total"]["cycles"],
                          "utilization": report["total"].get("utilization"),
                          "macs": next(s.macs for s in partition.segments if s.name == name),
                          "rtl": report.get("designs", {}).get("rtl", {}).get("design"),
                          "verified": dict(result.verified)}
    cycles = sum(s["cycles"] for s in segments.values())
    report = {"partition": partition.to_json() | {"refusals": refusals}, "segments": segments,
              "total": {"cycles": cycles, "segments": len(segments)}, "quality": quality}
    (folder / "report.json").write_text(json.dumps(report, indent=1) + "\n")
    return quality


def check_partition_options(options) -> None:
    if options.batch > 1:
        raise UsageError(f"--batch {options.batch}: a model partitioned between host and accelerator runs one image "
                         "per call; build it with --batch 1")
