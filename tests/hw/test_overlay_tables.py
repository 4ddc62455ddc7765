"""The target's top's program tables (hlsgen.hw.overlay_tables): their capacities come from the target, the
resource estimate charges them as block RAM (only when the program is loaded), and the charged design still
fits every shipped target's device."""
import pytest

from hlsgen.hw import builtin_targets, load_target, map_model
from hlsgen.hw.overlay_tables import capacity, entry_bits
from hlsgen.hw.report import report_json
from hlsgen.hw.resources import bram18, bram_blocks, estimate, fit
from tests.hw.models import integer_graph

TARGETS = sorted(builtin_targets())
# targets whose device cannot hold the program tables beside the buffers: the model's own top only
# (hw_models/ecp5_8x8.yaml: the tables' 201 blocks and the buffers' 144 exceed the LFE5U-85F's 208 DP16KD)
ROM_ONLY = {"ecp5_8x8"}


@pytest.mark.parametrize("name", TARGETS)
def test_the_program_tables_are_charged_as_block_ram_and_fit_the_device(name):
    target = load_target(name)
    tables = capacity(target)
    assert tables.layers >= 1024 and tables.moves == 2 * tables.layers
    # a tap word holds R lanes and a parameter word C: the same lanes, as many words as the array needs
    assert tables.taps == min(48 * 1024 // target.array.rows, 4096) >= 1536
    assert tables.params * target.array.cols == 16 * 1024
    blocks = bram_blocks(target, program_external=True)
    bits = entry_bits(target)
    for table, depth in vars(tables).items():
        assert blocks[f"program_{table}"] == bram18(depth, bits[table]) > 0
    own, loaded = estimate(target), estimate(target, program_external=True)
    assert loaded["bram_18k"] - own["bram_18k"] == sum(blocks[f"program_{t}"] for t in vars(tables)) >= 100
    assert fit(target, loaded)["ok"] == (name not in ROM_ONLY), (loaded["bram_18k"], target.device.bram_18k)


def test_the_report_counts_the_tables_only_in_the_targets_top():
    graph, target = integer_graph("digits"), load_target("systolic8x8")
    own, loaded = (report_json(map_model(graph, target, program=p))["total"] for p in ("rom", "external"))
    assert not any(k.startswith("program_") for k in own["bram_18k_by_memory"])
    assert loaded["bram_18k_by_memory"]["program_layers"] == bram18(1024, entry_bits(target)["layers"])
    assert loaded["resources"]["bram_18k"] == sum(loaded["bram_18k_by_memory"].values())
    assert own["resources"]["bram_18k"] == sum(own["bram_18k_by_memory"].values())
