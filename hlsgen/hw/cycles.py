"""The cycle formulas of docs/hardware.md, exactly; nothing else in hlsgen counts cycles.

Array layers: weight-stationary (the contract) and output-stationary (its own section of the doc).
Vector-unit layers: one formula per op family. Every function takes plain integers so that tests can
check it against the document by hand.
"""
from __future__ import annotations

import math

REQUANT_LATENCY = 6  # operands, partial products, their sum, rounding bias, shift, saturate
RESULT_LATENCY = 9  # banks' answer, PE operands, accumulator read (2), requantizer input, writer (4)
LAYER_OVERHEAD = 4  # the sequencer configures the layer
VECTOR_LATENCY = 11  # read, compute, the lane (7: hg_vector_lane), the writer's 4 stages past the first
STREAM_LATENCY = 4  # the input stream's last write and the output stream's first read (2 cycles)


def spatial_tiles(pixels: int, count: int) -> list[int]:
    """`count` spatial tiles of ceil(pixels / count) pixels each, the last one smaller (none empty)."""
    size = math.ceil(pixels / count)
    tiles = [min(size, pixels - i * size) for i in range(count)]
    if tiles[-1] <= 0:
        raise ValueError(f"{count} tiles of {size} overshoot {pixels} pixels")
    return tiles


def weight_stationary_cycles(rows: int, cols: int, groups: int, row_tiles: int, col_tiles: int,
                             tile_pixels: list[int], load: int | None = None, latency: int = 0,
                             hidden: int = 0) -> int:
    """Per group (a grouped conv's chunk; the groups run one after another, each a pass of its own): `load`
    (R: the weight memory gives a PE row per cycle) + `latency` for the first weight tile, then
    Σ over (spatial, column, row) tiles of max(P_t, load), except the last tile, which streams its
    P_t pixels only (no next weights to wait for) + (R + C - 1) drain + REQUANT_LATENCY + RESULT_LATENCY
    + LAYER_OVERHEAD. Weights in external memory: `load` = the cycles one tile's bytes take at the port's
    sustained rate (at least R), `latency` its read latency (later tiles are prefetched behind compute);
    the first tile's load + latency wait less the `hidden` cycles the row before gave its prefetch, down to
    R (hg_weight_dma walks the next row's tiles while the current one runs)."""
    load = rows if load is None else max(load, rows)
    stream = col_tiles * row_tiles * sum(max(p, load) for p in tile_pixels)
    stream -= max(tile_pixels[-1], load) - tile_pixels[-1]
    saved = max(0, min(hidden, load + latency - rows))
    return groups * (load + latency + stream + (rows + cols - 1) + REQUANT_LATENCY + RESULT_LATENCY
                     + LAYER_OVERHEAD) - saved


def output_stationary_cycles(rows: int, cols: int, groups: int, reduction: int, pixels: int, col_tiles: int) -> int:
    """Σ over (group, pixel tile, column tile) of max(Kr, R) + (R + C - 1) skew + R drain
    + REQUANT_LATENCY + LAYER_OVERHEAD; pixel tiles are ceil(P / R) tiles of R pixels."""
    pixel_tiles = math.ceil(pixels / rows)
    stream = groups * pixel_tiles * col_tiles * max(reduction, rows)
    return stream + (rows + cols - 1) + rows + REQUANT_LATENCY + LAYER_OVERHEAD


def window_pool_cycles(passes: int, pixels: int, taps: int) -> int:
    """MaxPool / average pool that no writer fuses: a window tap per cycle, L * output pixels * kh * kw
    + VECTOR_LATENCY + LAYER_OVERHEAD."""
    return passes * pixels * taps + VECTOR_LATENCY + LAYER_OVERHEAD


def vector_cycles(passes: int, positions: int) -> int:
    """Global pools (positions = input pixels), QAdd, QMul, QRequant,
    QLut (pixels; 1 for Dense-shaped tensors), Resize (output pixels): L * positions + VECTOR_LATENCY
    + LAYER_OVERHEAD."""
    return passes * positions + VECTOR_LATENCY + LAYER_OVERHEAD


def copy_cycles(output_elements: int, lanes: int) -> int:
    """Transpose, and a Concat or Pad along the batch (a Pad also along the channels): ceil(output elements
    / C) + VECTOR_LATENCY + LAYER_OVERHEAD. (A channel Concat and a Pad of pixels: vector_cycles, per input.)"""
    return math.ceil(output_elements / lanes) + VECTOR_LATENCY + LAYER_OVERHEAD


def dma_cycles(transfer: int, latency: int) -> int:
    """A `dma` row (a band of a feature map to or from external memory, the engines idle): the port's
    latency (a load's first beat; a store's last write response) + `transfer`, the bytes at the port's
    sustained rate + LAYER_OVERHEAD."""
    return latency + transfer + LAYER_OVERHEAD


def inference_cycles(input_elements: int, layer_cycles: list[int], output_elements: int) -> int:
    """AXI-Stream in (one element per beat) + Σ layers + AXI-Stream out + STREAM_LATENCY."""
    return input_elements + sum(layer_cycles) + output_elements + STREAM_LATENCY


def ideal_cycles(macs: int, rows: int, cols: int) -> int:
    return math.ceil(macs / (rows * cols))


def utilization(macs: int, cycles: int, rows: int, cols: int) -> float:
    return macs / (cycles * rows * cols) if cycles else 0.0


def two_queue_cycles(rows: list[tuple[int | None, int, int]]) -> list[tuple[int, int]]:
    """(start, end) of every row of a program run on two queues (hlsgen.hw.queues): rows given as (queue 0 or
    1, or None for a row of no queue; its cycles; `wait`). A row starts when the previous row of its queue has
    ended and the first `wait` rows of the other queue have; a row of no queue takes no time."""
    ends: list[list[int]] = [[], []]
    times = []
    for q, cycles, wait in rows:
        if q is None:
            times.append((ends[0][-1] if ends[0] else 0,) * 2)
            continue
        start = max(ends[q][-1] if ends[q] else 0, ends[1 - q][wait - 1] if wait else 0)
        ends[q].append(start + cycles)
        times.append((start, start + cycles))
    return times
