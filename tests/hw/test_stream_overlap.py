"""The first row under the input stream (hlsgen.hw.stream_overlap): which rows qualify, the elements each
spatial tile waits for, and the cycles it hides; the RTL meets them (sim/test_model.py, test_sim_command.py)."""
import math

from hlsgen.hw import map_model
from hlsgen.hw.program_io import read_program, write_program
from hlsgen.hw.stream_overlap import ARRIVAL, COMPLETE, FIRST_TILE
from tests.hw.models import integer_graph, target_with


def test_mnists_first_conv_starts_when_its_first_rows_are_in():
    mapping = map_model(integer_graph("mnist-8"), target_with())
    conv1, stream = mapping.layers[0], mapping.stream
    assert conv1.pool == (2, 2) and conv1.tiles.spatial_tile == 2 * 28  # whole pooling windows of rows
    # 28x28x1, 5x5 with padding 2: tile 0 (output rows 0-1) reads input rows 0-3, each next tile 2 more rows
    assert stream.need == (4 * 28, 2 * 28)
    # tile s starts at the later of its place in the schedule and the arrival of its rows: the rows lead
    tiles = conv1.tiles.spatial_tiles
    starts = [FIRST_TILE + 16 + s * 2 * 56 for s in range(tiles)]  # two row tiles of 56 pixels per spatial tile
    delay = max(min(112 + s * 56, 784) + ARRIVAL - start for s, start in enumerate(starts))
    end = max(conv1.cycles + delay, 784 + COMPLETE)
    assert stream.hidden == 784 + conv1.cycles - end > 600
    assert mapping.cycles == 784 + sum(layer.cycles for layer in mapping.layers) + 10 + 4 - stream.hidden


def test_an_rgb_image_waits_for_its_first_two_channels():
    mapping = map_model(integer_graph("vector_ops"), target_with())  # a 3x3 Conv, padding 1, on 3x8x8
    need, step = mapping.stream.need
    rows = mapping.layers[0].tiles.spatial_tile // 8
    assert need == 2 * 64 + (rows - 1 + 2) * 8 and step == rows * 8


def test_a_batch_and_a_first_row_not_on_the_array_wait_for_the_whole_input():
    graph, target = integer_graph("digits"), target_with()
    assert map_model(graph, target).stream is not None
    batched = map_model(graph, target, batch=8)
    assert batched.stream is None and batched.overlapped_cycles == 0
    mobilenet = map_model(integer_graph("mobilenet"), target)  # starts with a depthwise identity copy's QRequant
    first = mobilenet.layers[0]
    assert (mobilenet.stream is None) == (first.unit != "systolic_array" or first.kind != "conv")


def test_the_overlap_is_never_slower_than_waiting(tmp_path):
    for name in ("digits", "mnist-8", "residual", "vector_ops"):
        mapping = map_model(integer_graph(name), target_with("systolic8x8"))
        waited = mapping.input_elements + sum(layer.cycles for layer in mapping.layers)
        assert mapping.overlapped_cycles >= 0
        if mapping.stream is not None:
            tiles = mapping.layers[0].tiles
            assert tiles.work.pixels % tiles.spatial_tile == 0 or math.ceil(
                tiles.work.pixels / tiles.spatial_tiles) == tiles.spatial_tile
            assert mapping.cycles < waited + mapping.output_elements + 4
        write_program(mapping, tmp_path)  # program.json keeps it
        assert read_program(tmp_path, integer_graph(name), target_with("systolic8x8")).stream == mapping.stream
