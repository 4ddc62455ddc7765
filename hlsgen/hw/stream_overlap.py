"""The first row under the input stream (issue 28, item 3; docs/program.md, "The first row under the input
stream"): the input arrives one element per cycle in [channel][row][col] order, so a first convolution that
waited for all of it (784 cycles for mnist's 28x28 image, 15% of its inference) can start its first spatial
tile as soon as the rows that tile reads are in, and each next tile as soon as its rows are.

The row's spatial tiles are made whole output rows (k rows, `k * out_w` pixels; whole windows of a fused
MaxPool, whose partial maxima the writer keeps for one column tile only), so the input elements tile s
reads grow by a constant: `need + s * step`, with `need = (C_in - 1) * H * W + rows_0 * W` (every channel
but the last whole, then the rows up to tile 0's last window row) and `step = k * stride * W`. The RTL's array
engine checks exactly that before each spatial tile (rtl/hg_array_engine.v); rows past the image wait for
the whole input. `k` is the one whose tiles end the row earliest with the stream arriving at one element per
cycle (ties: the fewest tiles); no overlap when that is not earlier than running after the whole input.

Only a plain convolution qualifies: the first row, on the array, reading the model's one streamed input and
nothing else, its weights on chip, not banded, writing its output into the other activation plane (the
stream's writes and the writer's then take the two planes' write ports), at batch 1 (a batch takes its images
one after another).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from .cycles import spatial_tiles
from .placement import Memory
from .rows import ARRAY, LayerMap
from .target import Target
from .tiling import accumulator_depth

FIRST_TILE = 3  # cycles from the input's first beat to the first row's first tile, besides the weight load (R)
ARRIVAL = 3  # cycles from the beat of the stream's element n - 1 to the engine's seeing n elements written
COMPLETE = 3  # cycles from the input's last beat to the engine's seeing the stream complete


@dataclass(frozen=True)
class StreamOverlap:
    need: tuple[int, int]  # (elements the first spatial tile reads, elements more per next spatial tile)
    hidden: int  # cycles of the first row that run while the input streams in

    def to_json(self) -> dict:
        return {"need": self.need[0], "need_step": self.need[1], "hidden_cycles": self.hidden}


def overlap_first_row(layers: list[LayerMap], memory: Memory, target: Target, input_elements: int,
                      images: int) -> tuple[list[LayerMap], StreamOverlap | None]:
    """The rows with the first one tiled to run under the input stream, and its overlap; or the rows as they
    are and None where the first row does not qualify or gains nothing (module docstring)."""
    geometry = _geometry(layers, memory, target, images)
    if geometry is None:
        return layers, None
    row = layers[0]
    (channels, height, width), (kh, sy, pad, dil), out_w = geometry
    R, C = target.array.rows, target.array.cols
    best = (input_elements + row.cycles, 0, None)  # (end of the row after the first beat, -tiles, choice)
    pixels, depth = row.tiles.work.pixels, accumulator_depth(target)
    window = row.pool[0] if row.pool else 1  # a fused MaxPool's rows: the writer's row buffer holds one block's
    for k in range(window, pixels // out_w + 1, window):
        size = k * out_w
        count = math.ceil(pixels / size)
        if size > depth or math.ceil(pixels / count) != size:  # the tiles' split must be whole rows
            continue
        tiles = replace(row.tiles, spatial_tile=size)
        cycles = tiles.cycles(R, C)  # an array row's cycles are its tiles' (a fused MaxPool adds none)
        first = (channels - 1) * height * width + ((k - 1) * sy - pad + (kh - 1) * dil + 1) * width
        need = (max(first, 1), k * sy * width)  # (0 would tell the target's top there is no overlap)
        end = max(cycles + _delay(tiles, need, input_elements, R), input_elements + COMPLETE)
        key = (end, -size, (tiles, cycles, need))
        if key[:2] < best[:2]:
            best = key
    end, _, choice = best
    if choice is None:
        return layers, None
    tiles, cycles, need = choice
    hidden = input_elements + cycles - end
    return [replace(row, tiles=tiles, cycles=cycles), *layers[1:]], StreamOverlap(need, hidden)


def _delay(tiles, need: tuple[int, int], total: int, rows: int) -> int:
    """Cycles the row's spatial tiles wait for the stream beyond its own schedule, the input's first beat at
    cycle 0: spatial tile s starts at max(its place in the schedule, the cycle element need + s * step - 1 is
    in memory)."""
    w, load = tiles.work, rows  # weights on chip: a tile loads in R cycles
    start, delay = FIRST_TILE + load, 0
    for s, p in enumerate(spatial_tiles(w.pixels, tiles.spatial_tiles)):
        wanted = need[0] + s * need[1]
        ready = wanted + ARRIVAL if wanted <= total else total + COMPLETE
        delay = max(delay, ready - start)
        start += tiles.col_tiles * tiles.row_tiles * max(p, load)
    return delay


def _geometry(layers: list[LayerMap], memory: Memory, target: Target, images: int):
    """((C_in, H, W) of the input, (kh, stride, pad_top, dilation) of the rows, the output width) of a first
    row that qualifies, else None."""
    if images != 1 or target.array.dataflow != "weight_stationary" or not layers:
        return None
    row = layers[0]
    streamed = [m for m in memory.maps if m.birth < 0 and m.dram_base is None]
    if (row.unit != ARRAY or row.kind != "conv" or row.band is not None or row.tiles.weight_load is not None
            or row.tiles.work.groups != 1 or len(row.inputs) != 1 or len(streamed) != 1
            or any(m.birth < 0 and m.dram_base is not None for m in memory.maps)):
        return None
    x, y = memory.placement(row.inputs[0]), memory.placement(row.output)
    if x.name != streamed[0].name or y.dram_base is not None or y.plane == x.plane or len(row.input_shape) != 4:
        return None
    n, channels, height, width = row.input_shape
    conv = row.attrs.conv
    if n != 1 or len(conv.kernel_shape) != 2:
        return None
    (kh, kw), (sy, sx), (dil, dx) = conv.kernel_shape, conv.strides, conv.dilations
    out_w = (width + conv.pads[1] + conv.pads[3] - dx * (kw - 1) - 1) // sx + 1
    if row.tiles.work.pixels % out_w:
        return None
    return (channels, height, width), (kh, sy, conv.pads[0], dil), out_w
