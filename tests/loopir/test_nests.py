"""Layer nests: legal on every target, executing exactly the layer's MACs, with directives the HLS
generator can apply, and a readable dump."""
import pytest

from hlsgen.hw import map_model
from hlsgen.hw.cycles import LAYER_OVERHEAD, REQUANT_LATENCY, RESULT_LATENCY
from hlsgen.loopir import Dataflow, Partition, Pipeline, Stream, Unroll, check, dump, layer_nests
from tests.hw.models import integer_graph, target_with
from tests.loopir.helpers import instances

TARGETS = {
    "ws16": lambda: target_with(),
    "ws8": lambda: target_with("systolic8x8"),
    "ws32": lambda: target_with("systolic32x32"),
    "os16": lambda: target_with(array__dataflow="output_stationary"),
}


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("model", ["digits", "mnist-8", "residual", "mobilenet", "vector_ops"])
def test_every_nest_is_legal(model, target):
    nests = layer_nests(map_model(integer_graph(model), TARGETS[target]()))
    for nest in nests.values():
        assert check(nest) == [], nest.name


def _macs(nest) -> int:
    """MAC statement instances (the `+= a * b` statements) the nest executes."""
    return sum(count for key, count in instances(nest).items()
               if len(key) == 4 and key[-1][0] == key[-2][0] == "acc")  # reads a, b, acc; writes acc


@pytest.mark.parametrize("target", ["ws16", "ws8", "os16"])
def test_array_nests_execute_exactly_the_layer_macs(target):
    mapping = map_model(integer_graph("vector_ops"), TARGETS[target]())
    nests = layer_nests(mapping)
    for layer in mapping.layers:
        if layer.unit == "systolic_array":
            assert _macs(nests[layer.name]) == layer.macs, layer.name


def test_depthwise_nest_executes_its_macs():
    mapping = map_model(integer_graph("mobilenet"), target_with())
    layer = next(l for l in mapping.layers if l.kind == "depthwise" and l.macs < 300_000)
    nest = layer_nests(mapping)[layer.name]
    assert _macs(nest) == layer.macs
    assert nest.buffer("window").shape == (9, 16)  # per-column windows: tap x channel


def test_weight_stationary_stream_matches_the_cycle_formula():
    mapping = map_model(integer_graph("digits"), target_with())
    layer = mapping.layer("conv2+pool2")
    nest = layer_nests(mapping)[layer.name]
    t = layer.tiles
    trips = 1
    for name in ("group", "spatial", "col_tile", "row_tile", "pixel"):
        trips *= nest.loop(name).extent
    # every pixel iteration is one cycle (II=1); the formula adds the load, drain, requant, result path and
    # overhead (64 pixels per tile: no tile waits for weights)
    assert layer.cycles == 16 + trips + (16 + 16 - 1) + REQUANT_LATENCY + RESULT_LATENCY + LAYER_OVERHEAD
    assert nest.directives_on("pixel") == [Pipeline(1)]
    assert nest.directives_on("row") == nest.directives_on("col") == [Unroll()]
    assert (nest.loop("row").extent, nest.loop("col").extent) == (t.row_tile, t.col_tile)


def test_directives_apply_to_existing_names():
    mapping = map_model(integer_graph("mobilenet"), target_with())
    for name, nest in layer_nests(mapping).items():
        loops = {l.name for l in nest.loops()}
        buffers = {b.name for b in nest.buffers}
        for target, directive in nest.directives():
            if isinstance(directive, (Pipeline, Unroll)):
                assert target in loops
            elif isinstance(directive, (Partition, Stream)):
                assert target in buffers and getattr(directive, "buffer", target) == target
            else:
                assert isinstance(directive, Dataflow) and target == name


def test_dump_is_readable():
    mapping = map_model(integer_graph("digits"), target_with())
    text = dump(mapping)
    assert text.startswith("# hlsgen loop IR: model digits on systolic16x16")
    for layer in mapping.layers:
        assert f"nest {layer.name}: {layer.op}" in text and f"{layer.cycles:,} cycles" in text
    assert text.count("legality: ok") == len(mapping.layers)
    assert "acc[pixel][col] += window[row] * pe_w[row][col]" in text
    assert "# pipeline II=1" in text and "# unroll" in text and "partition dim 2 cyclic 16" in text


def test_reshape_has_an_empty_nest():
    mapping = map_model(integer_graph("mnist-8"), target_with())
    nests = layer_nests(mapping)
    reshapes = [l.name for l in mapping.layers if l.op == "Reshape"]
    for name in reshapes:
        assert nests[name].body == () and "aliases" in nests[name].notes[0]
