"""OUT/program.json: the layer program as the build writes it, and read back (`hlsgen sim` and the other
commands that need the schedule read it from the build folder; they never map the model again)."""
from __future__ import annotations

import json
from pathlib import Path

from ..errors import PathError
from ..ir import Graph, InputFold
from .batching import Batching
from .mapping import PROGRAM_SCHEMA, Mapping
from .placement import MapPlacement, Memory
from .rows import Band, BufferUse, LayerMap, Move, Transfer, VectorTiles
from .stream_overlap import StreamOverlap
from .target import Target
from .tiling import ArrayTiles, ArrayWork

PROGRAM_FILE = "program.json"


def write_program(mapping: Mapping, folder: Path) -> None:
    (Path(folder) / PROGRAM_FILE).write_text(json.dumps(mapping.to_json(), indent=1) + "\n")


def read_program(folder: Path, graph: Graph, target: Target) -> Mapping:
    """The layer program of build folder `folder`, whose integer graph is `graph`, for `target`."""
    path = Path(folder) / PROGRAM_FILE
    if not path.is_file():
        raise PathError(f"{folder} has no {PROGRAM_FILE} (built by an older hlsgen?): build it again")
    data = json.loads(path.read_text())
    if data.get("schema") != PROGRAM_SCHEMA or data["target"]["name"] != target.name:
        raise PathError(f"{path} is not a layer program of schema {PROGRAM_SCHEMA} for {target.name}: build again")
    layers = tuple(_row(row, graph, target) for row in data["rows"])
    m = data["memory"]
    maps = tuple(_placement(name, fields, graph) for name, fields in m["maps"].items())
    memory = Memory(maps, dict(m["aliases"]), tuple(m["plane_depth"]), m["depthwise_depth"], m["depthwise_copies"],
                    m["dram_words"])
    cycles, batch = data["cycles"], data["batch"]
    batching = Batching(batch["images"], batch["tail"], tuple(batch["held"]), batch["held_bytes"])
    overlap = data["stream_overlap"]
    stream = None if overlap is None else StreamOverlap((overlap["need"], overlap["need_step"]),
                                                        overlap["hidden_cycles"])
    return Mapping(target, data["model"], layers, cycles["input"] // batching.images,
                   cycles["output"] // batching.images, data["resources"], data["fit"], memory,
                   data["residency"]["weights"] == "external", data["residency"]["program"] == "external",
                   batching if batching.images > 1 else None, stream)


def _row(row: dict, graph: Graph, target: Target) -> LayerMap:
    t = row["tiles"]
    if row["unit"] == "systolic_array":
        work = ArrayWork(t["groups"], t["reduction"], t["out_channels"], t["pixels"], t["depthwise"], t["channels"],
                         t["reduction_channels"], t.get("packed_groups", 1))
        tiles = ArrayTiles(work, target.array.dataflow, t["row_tile"], t["col_tile"], t["spatial_tile"],
                           t["weight_load"], t["weight_latency"], t["weight_hidden"])
    elif t:
        tiles = VectorTiles(t["lanes"], t["channels"], t["passes"], t["positions"])
    else:
        tiles = None
    buffers = tuple(BufferUse(name, used, capacity) for name, (used, capacity) in row["buffers"].items())
    bits = row["bits"]
    return LayerMap(row["name"], row["op"], row["unit"], row["kind"], tuple(row["inputs"]), row["output"],
                    tuple(row["input_shape"]), tuple(row["output_shape"]), row["macs"], row["cycles"], tiles, buffers,
                    row["weight_bytes"], graph.nodes[row["nodes"][0]].attrs if row["nodes"] else None, tuple(row["live"]),
                    (bits["input"], bits["output"], bits["weights"]), tuple(tuple(s) for s in row["input_shapes"]),
                    tuple(row["nodes"]), tuple(row["fused_pool"]) if row["fused_pool"] else None,
                    row["accumulator_bits"] or 0,
                    tuple(Transfer(t["what"], t["direction"], t["bytes"]) for t in row["transfers"]),
                    _band(row["band"]), _move(row["move"]), row["wait"], row["images"])


def _band(b: dict | None) -> Band | None:
    return None if b is None else Band(b["index"], b["count"], tuple(b["out_rows"]), tuple(b["in_rows"]), b["pad_top"],
                                       b["rows_computed"], _pair(b["channels"]),
                                       b.get("written_row", 0))  # older programs: their bands wrote buffers


def _move(m: dict | None) -> Move | None:
    return None if m is None else Move(m["direction"], m["tensor"], m["buffer"], tuple(m["rows"]), m["segments"],
                                       m["segment_words"], m["dram_word"], m["dram_stride"], m["buffer_stride"],
                                       _pair(m["channels"]))


def _pair(values: list | None) -> tuple[int, int] | None:
    return tuple(values) if values else None


def _placement(name: str, f: dict, graph: Graph) -> MapPlacement:
    dw_base = f["depthwise_copy_base"]
    return MapPlacement(name, f["channels"], f["height"], f["width"], graph.quant[f["holds"] or name], f["written_by"],
                        f["last_read_by"], f["array_read"], dw_base is not None, f["banks"].bit_length() - 1,
                        f["plane"], f["base"], dw_base or 0, f["holds"] or "", f["dram_base"], f["images"],
                        InputFold.from_json(f["fold"]) if "fold" in f else None, f["depthwise_pitch"] or 0)
