"""OUT/report.json (the performance model's output; keys are stable, docs/mapping.md lists them) and a
plain-text per-layer table for the CLI and bench/mapping.py."""
from __future__ import annotations

from .clock import at_clock
from .cycles import ideal_cycles, utilization
from .mapping import Mapping
from .queues import attributed
from .resources import bram_blocks

SCHEMA = 1


def _round(x: float) -> float:
    return round(x, 4)


def report_json(mapping: Mapping, designs: dict | None = None) -> dict:
    """The report of layer program `mapping`; `designs`: what the build's HLS C++ and RTL are ("hls",
    "rtl" summaries), so that every figure says which design it describes."""
    t = mapping.target
    rows, cols = t.array.rows, t.array.cols
    layers = []
    for i, (layer, share) in enumerate(zip(mapping.layers, attributed(list(mapping.layers)))):
        runs = mapping.runs(i)  # a batch's head row runs once per image: its figures are the batch's
        macs, cycles = runs * layer.macs, runs * share
        layers.append({
            "name": layer.name, "nodes": list(layer.nodes), "op": layer.op, "unit": layer.unit, "kind": layer.kind,
            "inputs": list(layer.inputs), "output": layer.output,
            "input_shape": list(layer.input_shape), "output_shape": list(layer.output_shape),
            "tiles": layer.tiles.to_json(rows) if hasattr(layer.tiles, "work") else
                     (layer.tiles.to_json() if layer.tiles else {}),
            "macs": macs, "cycles": cycles, "ideal_cycles": ideal_cycles(macs, rows, cols),
            "utilization": _round(utilization(macs, cycles, rows, cols)),
            "runs": runs, "images": layer.images,  # per run of the program: runs x images = its batch
            "buffers": {b.name: b.to_json() for b in layer.buffers},
            "weight_bytes": layer.weight_bytes,
            "dram_bytes": runs * layer.dram_bytes,  # moved through the external memory port
            "memory_bound": _memory_bound(layer, rows),
            "bits": dict(zip(("input", "output", "weights"), layer.bits)),  # weights 0: the layer has none
        })
    peak = max(mapping.layers, key=lambda layer: layer.buffers[0].used, default=None)
    total = {
        "macs": mapping.macs, "cycles": mapping.cycles, "ideal_cycles": mapping.ideal_cycles,
        "utilization": _round(mapping.utilization),
        "layer_cycles": mapping.layer_cycles,
        "array_cycles": _unit_cycles(mapping, "systolic_array"),
        "vector_cycles": _unit_cycles(mapping, "vector_unit"),
        "io_cycles": {"input": mapping.images * mapping.input_elements,
                      "output": mapping.images * mapping.output_elements},
        # cycles of the first row that run while the input streams in (hlsgen.hw.stream_overlap), not in layer_cycles
        "stream_overlap_cycles": mapping.overlapped_cycles,
        "batch": mapping.images,  # at_clock times one run of `batch` images
        "cycles_per_image": _round(mapping.cycles / mapping.images),
        "weight_bytes": sum(layer.weight_bytes for layer in mapping.layers),
        "weight_storage": _weight_storage(mapping),
        "dram_bytes": sum(mapping.runs(i) * layer.dram_bytes for i, layer in enumerate(mapping.layers)),
        "dram_bytes_by_what": {what: sum(mapping.runs(i) * t.bytes for i, layer in enumerate(mapping.layers)
                                         for t in layer.transfers if t.what == what)
                               for what in ("weights", "feature_maps")},
        "dma_cycles": _unit_cycles(mapping, "dma"),
        "residency": mapping.residency,
        "peak_activation_bytes": peak.buffers[0].used if peak else 0,
        "peak_activation_layer": peak.name if peak else None,
        "resources": dict(mapping.resources), "bram_18k_by_memory": bram_blocks(t, mapping.program_external),
        "fit": mapping.fit,
    }
    target = {"name": t.name, "rows": rows, "cols": cols, "dataflow": t.array.dataflow, "clock_mhz": t.clock_mhz,
              "part": t.device.part}
    described = {"model": f"overlay: one {rows}x{cols} systolic array, a {cols}-lane vector unit and the writer, "
                          "sequenced by the layer program (program.json); `layers` and `total` describe it"}
    return at_clock({"schema": SCHEMA, "model": mapping.graph_name, "target": target,
                     "designs": described | (designs or {}), "layers": layers, "total": total})


def _unit_cycles(mapping: Mapping, unit: str) -> int:
    return sum(mapping.runs(i) * layer.cycles for i, layer in enumerate(mapping.layers) if layer.unit == unit)


def _memory_bound(layer, rows: int) -> bool:
    """A copy of a feature-map band (the engines wait for it), or a tile that waits for its weights from
    external memory longer than the on-chip load would take it."""
    if layer.unit == "dma":
        return True
    load = getattr(layer.tiles, "weight_load", None)
    return load is not None and not layer.tiles.load_hidden(rows) and load > rows


def _weight_storage(mapping: Mapping) -> dict:
    """Weight bits at the widths quantization chose, against 8 bits per weight."""
    chosen = at_8 = 0
    for layer in mapping.layers:
        if layer.weight_bits:
            count = layer.macs // max(layer.tiles.work.pixels, 1)  # weights: one MAC per weight per pixel
            chosen += count * layer.weight_bits
            at_8 += count * 8
    return {"bits": chosen, "bits_at_8": at_8, "saved_fraction": round(1 - chosen / at_8, 4) if at_8 else 0.0}


def format_program(mapping: Mapping) -> str:
    """OUT/program.txt: the layer program's rows and the activation memory's maps, as text."""
    t = mapping.target
    lines = [f"# layer program of {mapping.graph_name} on {t.name} ({t.array.rows}x{t.array.cols} "
             f"{t.array.dataflow}): the schedule the performance model, the HLS C++ and the RTL all read", "",
             f"{'#':>3} {'row':<24} {'unit':<7} {'kind':<12} {'tiles (Tr x Tc x Ts | passes)':<30} "
             f"{'bits in/out/w/acc':<18} {'cycles':>9}  reads -> writes"]
    for i, layer in enumerate(mapping.layers):
        tiles = layer.tiles
        if hasattr(tiles, "work"):
            shape = f"{tiles.row_tiles} x {tiles.col_tiles} x {tiles.spatial_tiles} (P_t {tiles.spatial_tile})"
        elif tiles is not None:
            shape = f"{tiles.passes} pass(es) x {tiles.positions}"
        elif layer.move is not None:
            shape = f"{layer.move.segments} x {layer.move.segment_words} words, rows {layer.move.rows[0]}..{layer.move.rows[1]}"
        else:
            shape = "-"
        unit = {"systolic_array": "array", "vector_unit": "vector", "dma": "dma"}.get(layer.unit, "-")
        bits = "/".join(str(b) for b in (*layer.bits, layer.acc_bits))
        pool = f" (MaxPool {layer.pool[0]}x{layer.pool[1]} in the writer)" if layer.pool else ""
        lines.append(f"{i:>3} {layer.name[:24]:<24} {unit:<7} {layer.kind:<12} {shape:<30} {bits:<18} "
                     f"{layer.cycles:>9,}  {', '.join(layer.inputs)} -> {layer.output}{pool}")
    memory = mapping.memory
    lines += ["", f"activation memory: 2 planes x {t.array.rows} banks, {memory.plane_depth[0]:,} + "
                  f"{memory.plane_depth[1]:,} words per bank; depthwise window memory {memory.dw_copies} banks x "
                  f"{memory.dw_depth:,} words",
              f"{'map':<28} {'C x H x W':<16} {'bits':>4} {'plane':>5} {'base':>7} {'banks':>5} {'words':>7}  rows"]
    for m in memory.maps:
        plane, base = ("dram", m.dram_base) if m.dram_base is not None else (m.plane, m.base)
        lines.append(f"{m.name[:28]:<28} {f'{m.channels}x{m.height}x{m.width}':<16} {m.quant.bits:>4} {plane:>5} "
                     f"{base:>7,} {m.banks:>5} {m.words:>7,}  {m.birth}..{m.death}")
    aliases = ", ".join(f"{a} = {b}" for a, b in sorted(memory.aliases.items()))
    if aliases:
        lines.append(f"aliases (Reshape): {aliases}")
    return "\n".join(lines) + "\n"


def format_table(mapping: Mapping, only_array: bool = False) -> str:
    """One line per layer: unit, tiles, MACs, cycles, utilization; then the totals."""
    t = mapping.target
    rows, cols = t.array.rows, t.array.cols
    lines = [f"{'layer':<20} {'op':<13} {'unit':<7} {'tiles (Tr x Tc x Ts | passes)':<30} {'MACs':>11} "
             f"{'cycles':>9} {'util':>6}"]
    for layer in mapping.layers:
        if only_array and layer.unit != "systolic_array":
            continue
        tiles = layer.tiles
        if hasattr(tiles, "work"):
            shape = f"{tiles.row_tiles} x {tiles.col_tiles} x {tiles.spatial_tiles} (P_t {tiles.spatial_tile})"
            if tiles.work.groups > 1:
                shape += f" x {tiles.work.groups} groups"
        elif tiles is not None:
            shape = f"{tiles.passes} pass(es) x {tiles.positions}"
        else:
            shape = "-"
        unit = {"systolic_array": "array", "vector_unit": "vector", "dma": "dma"}.get(layer.unit, "-")
        op = layer.op + ("/dw" if layer.kind == "depthwise" else "")
        util = utilization(layer.macs, layer.cycles, rows, cols)
        lines.append(f"{layer.name[:20]:<20} {op:<13} {unit:<7} {shape:<30} {layer.macs:>11,} {layer.cycles:>9,} "
                     f"{util:>6.1%}")
    beats = mapping.images * (mapping.input_elements + mapping.output_elements)
    lines.append(f"{'total (+ ' + str(beats) + ' I/O beats)':<73}"
                 f"{mapping.macs:>11,} {mapping.cycles:>9,} {mapping.utilization:>6.1%}")
    lines.append(f"ideal {mapping.ideal_cycles:,} cycles; {mapping.cycles / t.clock_mhz:,.1f} us at {t.clock_mhz:g} MHz "
                 f"({mapping.images * t.clock_mhz * 1e6 / mapping.cycles:,.0f} images/s)"
                 if mapping.cycles else "no cycles")
    if mapping.images > 1:
        lines.append(f"batch {mapping.images}: rows from {mapping.layers[mapping.batching.tail].name!r} on run once "
                     f"for the {mapping.images} images, the rows before once per image"
                     if mapping.batching.tail < len(mapping.layers) else
                     f"batch {mapping.images}: no Dense tail to batch; every row runs once per image")
    return "\n".join(lines)
