"""Throughput (batch) mode: which rows of the layer program run once for N images, and what that holds on chip.

At batch 1 a Dense layer is weight-load bound: each R x C weight tile takes R cycles to load and then meets
one input vector (the digits model's FC layer uses 6% of a 16x16 array). With `batch: N` the program's rows
split in two, decided here once and read by the performance model:
- the head (the convolutions and whatever else is not the tail) runs image by image, N times, exactly as at
  batch 1: a convolution's weights already meet every pixel of its map;
- the tail, the Dense layers at the end of the program (and the Reshapes and Dense-shaped elementwise rows
  among them), runs once for the N images: it loads each weight tile once and streams the N images' vectors
  through it (weight-stationary: a spatial tile of N pixels instead of 1).
The N images' tail inputs wait on chip while the head runs again, and every map the tail writes has N
vectors: `check_fit` charges both against the activation memory (exit 3, naming the batch, if they do not fit).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..errors import MappingError
from . import cycles as cyc
from .mapping import ARRAY, DMA, NONE, VECTOR, LayerMap, VectorTiles, _external_weights, tensor_bytes
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


def tail_start(layers: list[LayerMap]) -> int:
    """The first row of the batched tail: the longest suffix of whole-layer Dense, Reshape and Dense-shaped
    elementwise rows that starts at a Dense (len(layers): no tail, nothing batched)."""
    start = len(layers)
    for i in range(len(layers) - 1, -1, -1):
        row = layers[i]
        if row.unit == DMA or row.band is not None or not _batchable(row):
            break
        if row.kind == "dense":
            start = i
    return start


def _batchable(row: LayerMap) -> bool:
    if row.unit == ARRAY:
        return row.kind == "dense"
    if row.unit == NONE:
        return row.kind == "reshape"
    return row.unit == VECTOR and row.kind == "elementwise" and len(row.output_shape) == 2


def batch_program(graph, layers: list[LayerMap], target, images: int) -> tuple[list[LayerMap], Batching]:
    """The rows with the tail remapped for `images` images per run, and the split."""
    if images == 1:
        return layers, Batching(1, len(layers))
    tail = tail_start(layers)
    rows = [*layers[:tail], *(_batched(row, target, images) for row in layers[tail:])]
    written = {row.output for row in layers[tail:]}
    held = tuple(dict.fromkeys(t for row in layers[tail:] for t in row.inputs if t not in written))
    return rows, Batching(images, tail, held, images * sum(tensor_bytes(graph, t) for t in held))


def _batched(row: LayerMap, target, images: int) -> LayerMap:
    """A tail row computing `images` images' vectors in one run."""
    R, C = target.array.rows, target.array.cols
    if row.unit == ARRAY:
        tiles = search_tiles(replace(row.tiles.work, pixels=row.tiles.work.pixels * images), target)
        batched = replace(row, tiles=tiles, cycles=tiles.cycles(R, C), macs=tiles.work.macs, images=images)
        return _external_weights(batched, target) if row.tiles.weight_load is not None else batched
    if row.unit == VECTOR:
        tiles = VectorTiles(row.tiles.lanes, row.tiles.channels, row.tiles.passes, row.tiles.positions * images)
        return replace(row, tiles=tiles, cycles=cyc.vector_cycles(tiles.passes, tiles.positions), images=images)
    return replace(row, images=images)


def check_fit(graph, rows: list[LayerMap], batching: Batching, target) -> None:
    """The activation memory holds, beside what a row needs at batch 1, the other N - 1 images' copies of the
    maps the batch keeps: while the head runs, the tail inputs of the images done; while the tail runs, every
    map it reads or writes. Too many: MappingError naming the row that fits the fewest and that number."""
    n, capacity = batching.images, target.buffers.input.bytes
    if n == 1:
        return
    tail_maps = {t for row in rows[batching.tail:] for t in (*row.inputs, row.output)}
    fewest = None  # (images that fit, row, its kept maps, bytes per image)
    for i, row in enumerate(rows):
        kept = batching.held if i < batching.tail else tuple(t for t in row.live if t in tail_maps)
        per_image = sum(tensor_bytes(graph, t) for t in kept)
        if per_image:
            fits = 1 + max(0, capacity - row.buffers[0].used) // per_image
            fewest = min(fewest, (fits, i, kept, per_image)) if fewest else (fits, i, kept, per_image)
    if fewest is not None and fewest[0] < n:
        fits, i, kept, per_image = fewest
        raise MappingError(f"--batch {n}: row {rows[i].name!r} needs {rows[i].buffers[0].used + (n - 1) * per_image:,} "
                           f"bytes of activation memory with the {n} images' {', '.join(kept)} kept on chip, more "
                           f"than buffers.input = {target.buffers.input.kib} KiB of {target.name}; use --batch "
                           f"{fits} or less")
