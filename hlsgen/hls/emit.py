"""Write OUT/hls/: the top function, one kernel header per layer, weights headers, the self-checking
testbench with its data, run_hls.tcl, a README and the portable headers."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np

from .. import __version__
from ..hw import Target, map_model
from ..ir import Graph
from .cnames import initializer, storage_type
from .design import Design, build_design, check_batch
from .render import render
from .overlay import OverlayDesign, write_overlay
from .tbdata import EXPECTED_FILE, INPUT_FILE, write_test_data

INCLUDE_DIR = Path(__file__).resolve().parent / "include"
PORTABLE_HEADERS = ("hlsgen_ap_int.h", "hlsgen_stream.h")


def write_hls(out: Path, graph: Graph, target: Target, top: str, source: str, int_inputs: dict[str, np.ndarray],
              int_outputs: dict[str, np.ndarray], mapping=None, offchip: frozenset[str] | None = None,
              design: str = "overlay") -> Design | OverlayDesign:
    """Render the HLS sources of integer graph `graph` into `out` (created), with `int_inputs` and the
    integer reference's `int_outputs` (arrays keyed by graph input/output name) as testbench data.
    `design` "overlay": the target's accelerator sequenced by the layer program `mapping` (hlsgen.hw.map_model,
    computed when not given; every weight on chip); "dataflow": one kernel per layer around its loop nest,
    `offchip` see design.build_design."""
    check_batch(graph)
    if design == "overlay":
        return write_overlay(out, graph, mapping or map_model(graph, target), top, source, int_inputs, int_outputs)
    if design != "dataflow":
        raise ValueError(f"unknown HLS design {design!r} (overlay or dataflow)")
    design = build_design(graph, target, top, mapping, offchip)
    top = design.top
    (out / "kernels").mkdir(parents=True, exist_ok=True)
    (out / "weights").mkdir(exist_ok=True)
    (out / "portable").mkdir(exist_ok=True)
    common = {"version": __version__, "top": top, "source": source, "target": target.name}
    _write(out / "hlsgen_ops.h", render("hlsgen_ops.h.j2", **common))
    for kernel in design.kernels:
        stem = kernel.fn[2:] if kernel.fn.startswith("k_") else kernel.fn
        weights_header = f"{stem}.h" if kernel.arrays else ""
        if kernel.arrays:
            _write_weights(out / "weights" / weights_header, kernel.layer, kernel.k.get("op", ""), kernel.arrays)
        if kernel.offchip is not None:
            kernel.offchip.header = f"{stem}_wmem.h"
            _write_weights(out / "weights" / kernel.offchip.header, kernel.layer, "off-chip weights",
                           [kernel.offchip.data])
        kernel.header = f"{stem}.h"
        _write(out / "kernels" / kernel.header,
               render("kernel.h.j2", **common, k=kernel.k, h=kernel.h, file=kernel.header, family=kernel.template,
                      guard=_guard(f"kernels_{stem}.h"), weights_header=weights_header))
    ports = [vars(p) for p in design.ports]
    offchip = [_offchip_entry(o) for o in design.offchip]
    _write(out / f"{top}.h", render("top.h.j2", **common, guard=_guard(f"{top}.h"), types=design.types,
                                    ports=ports, offchip=offchip))
    _write(out / f"{top}.cpp", render("top.cpp.j2", **common, ports=ports, offchip=offchip,
                                      kernel_headers=[k.header for k in design.kernels],
                                      top_pragmas=design.top_pragmas, streams=design.streams, calls=design.calls))
    samples = write_test_data(out, graph, int_inputs, int_outputs)
    _write(out / f"{top}_tb.cpp", render(
        "testbench.cpp.j2", **common, ports=ports, offchip=offchip, offchip_headers=[o["header"] for o in offchip],
        inputs_per_sample=sum(p.count for p in design.ports if p.direction == "input"),
        outputs_per_sample=sum(p.count for p in design.ports if p.direction == "output"),
        input_file=INPUT_FILE, expected_file=EXPECTED_FILE))
    tcl = dict(common, part=target.device.part, clock_mhz=f"{target.clock_mhz:g}",
               period_ns=f"{1000.0 / target.clock_mhz:.3f}", input_file=INPUT_FILE, expected_file=EXPECTED_FILE)
    _write(out / "run_hls.tcl", render("run_hls.tcl.j2", **tcl))
    _write(out / "README.md", render("README.md.j2", **tcl, ports=ports, offchip=offchip, samples=samples))
    for name in PORTABLE_HEADERS:
        shutil.copyfile(INCLUDE_DIR / name, out / "portable" / name)
    return design


def _offchip_entry(o) -> dict:
    return {"port": o.port, "t": o.t, "size": o.size, "layer": o.layer, "data": o.data.name, "header": o.header}


def _write_weights(path: Path, layer: str, op: str, arrays) -> None:
    entries = [{"name": a.name, "ctype": a.ctype, "storage": storage_type(a.values), "dims": a.dims,
                "comment": a.comment, "init": initializer(a.values)} for a in arrays]
    _write(path, render("weights.h.j2", version=__version__, guard=_guard(f"weights_{path.name}"), file=path.name,
                        layer=layer, op=op, arrays=entries))


def _guard(name: str) -> str:
    return "HLSGEN_" + re.sub(r"[^0-9A-Za-z]", "_", name).upper()


def _write(path: Path, text: str) -> None:
    path.write_text(text)
