"""Throughput (batch) mode: which rows of the layer program run once for N images, and what that holds on chip.

At batch 1 a Dense layer is weight-load bound: each R x C weight tile takes R cycles to load and then meets
one input vector (the digits model's FC layer uses 6% of a 16x16 array). With `batch: N` the program's rows
split in two, decided here once and read by the performance model and the HLS C++:
- the head (the convolutions and whatever else comes before the tail) runs image by image, N times, exactly
  as at batch 1: a convolution's weights already meet every pixel of its map;
- the tail, the Dense layers at the end of the program (with the Reshapes among them), runs once for the N
  images: it loads each weight tile once and streams the N images' vectors through it (weight-stationary:
  a spatial tile of N pixels instead of 1).
Every map the tail reads or writes holds the N images stacked along its height (hlsgen.hw.placement,
`images`): image n of a map of height H in rows [n H, (n + 1) H), so a tail Dense reads it as a window of
H x W taps moving H rows per image, and the head's writer puts image n's map n H rows down. The maps the
head writes for the tail (`held`) stay on chip while the head runs again; a batch whose maps do not fit
the activation memory with everything else is refused (exit 3) naming the batch and the largest that fits.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..errors import MappingError
from .rows import ARRAY, DMA, NONE, LayerMap, tensor_bytes
from .tiling import search_tiles


@dataclass(frozen=True)
class Batching:
    images: int  # N: images per run of the program (per weight load of the tail)
    tail: int  # rows[tail:] run once for the N images, rows[:tail] once per image
    held: tuple[str, ...] = ()  # maps the head writes (or the input stream) that the tail reads: N kept on chip
    held_bytes: int = 0  # N times their bytes

    def runs(self, index: int) -> int:
        """How often row `index` runs per run of the program."""
        return 1 if index >= self.tail else self.images

    def to_json(self) -> dict:
        return {"images": self.images, "tail": self.tail, "held": list(self.held), "held_bytes": self.held_bytes}


def tail_start(graph, layers: list[LayerMap]) -> int:
    """The first row of the batched tail: the longest suffix of whole-layer Dense and Reshape rows that starts
    at a Dense and writes every model output, whose inputs from the head only it reads and that the head
    computes with its writer (not a copy); len(layers) where there is none (nothing batched)."""
    start = len(layers)
    for i in range(len(layers) - 1, -1, -1):
        row = layers[i]
        if row.band is not None or not ((row.unit == ARRAY and row.kind == "dense") or
                                        (row.unit == NONE and row.kind == "reshape")):
            break
        if row.kind == "dense":
            start = i
    written = {row.output for row in layers[start:]}
    readers = {t: [i for i, row in enumerate(layers) if t in row.inputs] for t in _held(layers, start)}
    producer = {row.output: row for row in layers}
    if not set(graph.outputs) <= written or any(min(rows) < start for rows in readers.values()) or \
            any(t in producer and producer[t].kind == "copy" for t in readers):
        return len(layers)
    return start


def _held(layers: list[LayerMap], tail: int) -> tuple[str, ...]:
    written = {row.output for row in layers[tail:]}
    return tuple(dict.fromkeys(t for row in layers[tail:] for t in row.inputs if t not in written))


def batch_rows(graph, layers: list[LayerMap], target, images: int) -> tuple[list[LayerMap], Batching]:
    """Before the activation memory is fitted: the rows with the tail remapped for `images` images per run,
    and the split."""
    if images == 1:
        return layers, Batching(1, len(layers))
    tail = tail_start(graph, layers)
    rows = [*layers[:tail], *(_batched(row, target, images) for row in layers[tail:])]
    held = _held(layers, tail)
    return rows, Batching(images, tail, held, images * sum(tensor_bytes(graph, t) for t in held))


def _batched(row: LayerMap, target, images: int) -> LayerMap:
    """A tail row computing `images` images' vectors in one run (the weights' streaming is added later)."""
    if row.unit != ARRAY:
        return replace(row, images=images)
    tiles = search_tiles(replace(row.tiles.work, pixels=row.tiles.work.pixels * images), target)
    return replace(row, tiles=tiles, cycles=tiles.cycles(target.array.rows, target.array.cols),
                   macs=tiles.work.macs, images=images)


def check_on_chip(rows: list[LayerMap], memory, batching: Batching) -> None:
    """After the fit: the batch runs with every map on chip (the head runs again from its first row, which
    the copies of a map in external memory, ordered for one image, do not)."""
    if batching.images > 1 and (any(row.unit == DMA for row in rows) or memory.external):
        raise MappingError(f"--batch {batching.images}: the feature maps do not all fit the activation memory "
                           "with the batch's vectors (a batch runs with every map on chip)")
