"""The cycle formulas against docs/hardware.md worked by hand, and the tile search against the closed form."""
import math
import random
import time

import pytest

from hlsgen.hw import cycles as cyc
from hlsgen.hw.tiling import ArrayWork, accumulator_depth, search_tiles
from tests.hw.models import target_with


def doc_weight_stationary(R, C, D, groups, Kr, M, P):
    """docs/hardware.md, transcribed independently of hlsgen.hw."""
    Tr, Tc, Ts = math.ceil(Kr / R), math.ceil(M / C), math.ceil(P / D)
    Pt = math.ceil(P / Ts)
    tiles = [Pt] * (Ts - 1) + [P - (Ts - 1) * Pt]
    stream = Tc * Tr * sum(max(p, R) for p in tiles) - (max(tiles[-1], R) - tiles[-1])
    return groups * (R + stream + (R + C - 1) + 6 + 9 + 4)  # each group (chunk of a grouped conv) a pass


def test_weight_stationary_by_hand():
    # digits conv2 on 16x16: Kr = 16*9 = 144 -> 9 row tiles, 32 channels -> 2 column tiles, 64 pixels.
    assert cyc.weight_stationary_cycles(16, 16, 1, 9, 2, [64]) == 16 + 18 * 64 + 31 + 19 == 1218
    # a Dense layer (P = 1 < R): every tile but the last waits R cycles for the next weights
    assert cyc.weight_stationary_cycles(16, 16, 1, 32, 4, [1]) == 16 + 127 * 16 + 1 + 31 + 19
    # three spatial tiles, the last smaller; two groups (a grouped conv's chunks): a pass each
    assert cyc.weight_stationary_cycles(8, 8, 2, 1, 1, [342, 342, 341]) == 2 * (8 + 1025 + 15 + 19)


def test_spatial_tiles():
    assert cyc.spatial_tiles(1024, 2) == [512, 512]
    assert cyc.spatial_tiles(1025, 3) == [342, 342, 341]
    with pytest.raises(ValueError):
        cyc.spatial_tiles(9, 4)  # 3 tiles of 3 already cover 9 pixels


def test_output_stationary_by_hand():
    # Kr = 144 >= R: 4 pixel tiles x 2 column tiles of 144 steps, skew 31, drain 16, 10
    assert cyc.output_stationary_cycles(16, 16, 1, 144, 64, 2) == 8 * 144 + 31 + 16 + 10
    # Kr = 9 < R: each tile waits for the previous results to drain
    assert cyc.output_stationary_cycles(16, 16, 1, 9, 1024, 2) == 64 * 2 * 16 + 31 + 16 + 10


def test_vector_and_copy_and_inference():
    assert cyc.vector_cycles(2, 16) == 2 * 16 + 11 + 4
    # a windowed pool no writer fuses: a tap per cycle (2 passes, 6 output pixels, a 3x3 window)
    assert cyc.window_pool_cycles(2, 6, 9) == 2 * 6 * 9 + 11 + 4
    assert cyc.copy_cycles(1000, 16) == 63 + 15
    assert cyc.inference_cycles(256, [310, 71, 0], 10) == 256 + 381 + 10 + 4
    assert cyc.ideal_cycles(365184, 16, 16) == 1427
    assert cyc.utilization(0, 0, 16, 16) == 0.0


def _random_works(n, seed=0):
    rng = random.Random(seed)
    for _ in range(n):
        depthwise = rng.random() < 0.2
        yield ArrayWork(1 if depthwise else rng.choice([1, 1, 2, 4]), rng.randint(1, 2400), rng.randint(1, 300),
                        rng.choice([1, rng.randint(1, 5000)]), depthwise)


@pytest.mark.parametrize("name", ["systolic8x8", "systolic16x16", "systolic32x32"])
def test_search_returns_the_documents_tiling(name):
    target = target_with(name)
    R, C, D = target.array.rows, target.array.cols, accumulator_depth(target)
    for work in _random_works(300):
        tiles = search_tiles(work, target)
        assert (tiles.row_tile, tiles.col_tile) == (min(work.reduction, R), min(work.out_channels, C))
        assert tiles.spatial_tiles == math.ceil(work.pixels / D) and tiles.spatial_tile <= D
        expected = doc_weight_stationary(R, C, D, work.groups, work.reduction, work.out_channels, work.pixels)
        assert tiles.cycles(R, C) == expected


def test_search_with_a_shallow_accumulator():
    target = target_with(buffers__accumulator__kib=1)  # D = 1024 / 64 = 16 pixels per column
    work = ArrayWork(1, 144, 32, 100)
    tiles = search_tiles(work, target)
    assert accumulator_depth(target) == 16 and tiles.spatial_tiles == 7 and tiles.spatial_tile == 15
    assert tiles.cycles(16, 16) == doc_weight_stationary(16, 16, 16, 1, 144, 32, 100)
    assert not tiles.load_hidden(16)  # a 10-pixel last tile is shorter than the 16-cycle weight load


def test_output_stationary_tiles():
    target = target_with(array__dataflow="output_stationary")
    tiles = search_tiles(ArrayWork(1, 144, 32, 64), target)
    assert (tiles.row_tiles, tiles.col_tiles, tiles.spatial_tiles) == (1, 2, 4)
    assert tiles.cycles(16, 16) == cyc.output_stationary_cycles(16, 16, 1, 144, 64, 2)


def test_search_is_fast():
    target = target_with()
    works = list(_random_works(1000, seed=1))
    start = time.perf_counter()
    for work in works:
        search_tiles(work, target)
    assert time.perf_counter() - start < 1.0


def test_two_queues_start_each_row_when_its_queue_and_its_wait_allow():
    # load 0 (10), compute 0 waits for 1 load (5), load 1 (10) runs beside it, compute 1 waits for 2 loads (5),
    # a Reshape (no queue) takes no time, store 0 waits for 1 compute (3)
    rows = [(1, 10, 0), (0, 5, 1), (1, 10, 0), (0, 5, 2), (None, 0, 0), (1, 3, 1)]
    assert cyc.two_queue_cycles(rows) == [(0, 10), (10, 15), (10, 20), (20, 25), (25, 25), (20, 23)]
