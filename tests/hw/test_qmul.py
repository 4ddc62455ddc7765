"""A QMul (squeeze-and-excitation's gate product) on the vector unit: a pass per C channels over the map's
pixels, like a QAdd (docs/hardware.md), its two inputs in different activation planes."""
from hlsgen.hw import cycles as cyc
from hlsgen.hw import load_target, map_model
from tests.hw.models import _quantize
from tests.rtl.squeeze_excite import squeeze_excite_model


def test_the_product_runs_on_the_vector_unit_at_the_elementwise_cycles():
    graph = _quantize(squeeze_excite_model())
    mapping = map_model(graph, load_target("systolic8x8"))
    (layer,) = [layer for layer in mapping.layers if layer.op == "QMul"]
    assert (layer.unit, layer.kind, layer.macs) == ("vector_unit", "elementwise", 0)
    assert layer.cycles == cyc.vector_cycles(16 // 8, 8 * 8) == 2 * 64 + 11 + 4
    map_input, gate = (mapping.memory.placement(t) for t in layer.inputs)
    assert map_input.plane != gate.plane
