"""Tiles of one systolic-array layer, and the per-layer search that chooses them.

Tile sizes: output channels per column tile (<= C), reduction lanes per row tile (input channels x
kernel positions, <= R) and pixels per spatial tile (<= D, the accumulator depth per column). The
search enumerates them, keeps those that fit the accumulator, and scores each with the exact cycle
formula of docs/hardware.md (ties: fewest tiles, i.e. fewest weight reloads, then largest tiles). Under
that formula full array tiles and the fewest spatial tiles are optimal, so the search returns the
document's tiling; tests check both that and that the search takes well under a millisecond per layer.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from .cycles import output_stationary_cycles, spatial_tiles, weight_stationary_cycles
from .target import Target

ACC_BYTES = 4  # 32-bit partial sums in the accumulator buffer
EXTRA_SPATIAL_CANDIDATES = 8  # spatial tile counts tried beyond the fewest that fit


@dataclass(frozen=True)
class ArrayWork:
    """What an array layer computes, independent of the target."""

    groups: int  # groups (grouped conv: chunks of `packed` groups) run one after another (1 in depthwise mode)
    reduction: int  # lanes: Kr = reduction_channels * kh * kw (kh * kw in depthwise mode; a Dense: per pixel)
    out_channels: int  # M per group (every channel in depthwise mode)
    pixels: int  # P = N * H_out * W_out (N for Dense)
    depthwise: bool = False
    channels: int = 1  # input channels per tap (C_in / group; 1 in depthwise mode)
    reduction_channels: int = 1  # lanes per tap: C_pad >= channels (docs/program.md), zero weights past channels
    packed: int = 1  # groups of a grouped conv per chunk, block-diagonal (hlsgen.hw.groups)

    @property
    def macs(self) -> int:
        """The layer's own MACs (padded lanes and packed zero blocks excluded: they cost cycles, not MACs)."""
        u = self.unpadded()
        return u.groups * u.reduction * u.out_channels * u.pixels

    def unpadded(self) -> "ArrayWork":
        """The work without padded lanes or packed groups (a design that does not read the banked
        activation memory: every group on its own)."""
        taps, s = self.reduction // self.reduction_channels, self.packed
        return replace(self, groups=self.groups * s, reduction=taps * self.channels // s,
                       reduction_channels=self.channels // s, channels=self.channels // s,
                       out_channels=self.out_channels // s, packed=1)


@dataclass(frozen=True)
class ArrayTiles:
    work: ArrayWork
    dataflow: str
    row_tile: int  # reduction lanes per row tile (weight-stationary), or the whole reduction (output-stationary)
    col_tile: int  # output channels per column tile
    spatial_tile: int  # pixels per spatial tile (output-stationary: R, one pixel per PE row)
    weight_load: int | None = None  # cycles one weight tile takes from external memory (None: on chip, R)
    weight_latency: int = 0  # the external memory's read latency, paid by the first tile
    weight_hidden: int = 0  # cycles of the row before, behind which the first tile's fetch runs

    @property
    def row_tiles(self) -> int:
        return math.ceil(self.work.reduction / self.row_tile)

    @property
    def col_tiles(self) -> int:
        return math.ceil(self.work.out_channels / self.col_tile)

    @property
    def spatial_tiles(self) -> int:
        return math.ceil(self.work.pixels / self.spatial_tile)

    def tile_pixels(self) -> list[int]:
        return spatial_tiles(self.work.pixels, self.spatial_tiles)

    def cycles(self, rows: int, cols: int) -> int:
        w = self.work
        if self.dataflow == "output_stationary":
            return output_stationary_cycles(rows, cols, w.groups, w.reduction, w.pixels, self.col_tiles)
        return weight_stationary_cycles(rows, cols, w.groups, self.row_tiles, self.col_tiles, self.tile_pixels(),
                                        self.weight_load, self.weight_latency, self.weight_hidden)

    def load_hidden(self, rows: int) -> bool:
        """Double buffering hides the reloads: weight-stationary shadow weights load (R cycles) while a
        spatial tile of >= R pixels streams; output-stationary shadow results drain (R cycles) while a
        reduction of >= R steps streams. Weights from external memory: a tile of at least the load's cycles."""
        if self.dataflow == "output_stationary":
            return self.work.reduction >= rows
        return min(self.tile_pixels()) >= max(rows, self.weight_load or 0)

    def to_json(self, rows: int) -> dict:
        return {
            "groups": self.work.groups, "reduction": self.work.reduction,
            "out_channels": self.work.out_channels, "pixels": self.work.pixels, "depthwise": self.work.depthwise,
            "channels": self.work.channels, "reduction_channels": self.work.reduction_channels,
            "packed_groups": self.work.packed,
            "row_tile": self.row_tile, "col_tile": self.col_tile, "spatial_tile": self.spatial_tile,
            "row_tiles": self.row_tiles, "col_tiles": self.col_tiles, "spatial_tiles": self.spatial_tiles,
            "weight_load": self.weight_load, "weight_latency": self.weight_latency,
            "weight_hidden": self.weight_hidden,
            "double_buffered": "weights" if self.dataflow == "weight_stationary" else "results",
            "load_hidden": self.load_hidden(rows),
        }


def accumulator_depth(target: Target) -> int:
    """D = accumulator bytes / (4 * C): pixels per column, the bound on a spatial tile."""
    return target.buffers.accumulator.bytes // (ACC_BYTES * target.array.cols)


def _candidates(size: int, limit: int) -> list[int]:
    """The full tile (size capped by the array), then halvings of the array dimension."""
    out, t = [min(size, limit)], limit // 2
    while t >= 1:
        if t < size:
            out.append(t)
        t //= 2
    return out


def search_tiles(work: ArrayWork, target: Target) -> ArrayTiles:
    """The tiling with the fewest cycles that fits; None if no spatial tile fits the accumulator."""
    rows, cols, dataflow = target.array.rows, target.array.cols, target.array.dataflow
    if dataflow == "output_stationary":  # partial sums stay in the PEs: the only tiles are the array itself
        return ArrayTiles(work, dataflow, work.reduction, min(work.out_channels, cols), rows)
    depth = accumulator_depth(target)
    if depth < 1:
        return None
    fewest = math.ceil(work.pixels / depth)
    best_key = None
    for count in range(fewest, min(work.pixels, fewest + EXTRA_SPATIAL_CANDIDATES) + 1):
        size = math.ceil(work.pixels / count)
        if size > depth or (count - 1) * size >= work.pixels:
            continue
        stream = sum(max(p, rows) for p in spatial_tiles(work.pixels, count))  # per (group, column, row) tile
        for row_tile in _candidates(work.reduction, rows):
            for col_tile in _candidates(work.out_channels, cols):
                tiles = math.ceil(work.reduction / row_tile) * math.ceil(work.out_channels / col_tile)
                key = (work.groups * tiles * stream, count * tiles, -row_tile, -col_tile, size)
                best_key = key if best_key is None or key < best_key else best_key
    return ArrayTiles(work, dataflow, -best_key[2], -best_key[3], best_key[4])
