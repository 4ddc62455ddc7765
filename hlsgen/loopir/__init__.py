"""The loop IR: loops, buffers and statements per mapped layer, with scheduling directives.

Usage (HLS generation)::

    from hlsgen.hw import load_target, map_model
    from hlsgen.loopir import layer_nests

    mapping = map_model(quantized.graph, load_target("systolic16x16"))
    for name, nest in layer_nests(mapping).items():      # execution order
        for target, directive in nest.directives():      # e.g. ("pixel", Pipeline(ii=1)),
            ...                                          #      ("row", Unroll(factor=None)),
                                                         #      ("acc", Partition("acc", 2, "cyclic", 16)),
                                                         #      ("window", Stream(depth=2)), (name, Dataflow())
        nest.loop("pixel").extent, nest.buffer("acc").shape   # loop trip counts, buffer shapes
        print(nest_text(nest))                           # the readable form (`hlsgen build --dump-ir`)

`target` is the name of a loop (Pipeline, Unroll), a buffer (Partition, Stream) or the nest itself
(Dataflow). Loop names per layer kind (docs/mapping.md): weight-stationary array `group, spatial,
col_tile, row_tile, {load, load_col}, {pixel, row, col}, {drain, lane}`; output-stationary `group,
pixel_tile, col_tile, k, row, col, drain, lane`; vector unit `pass, q | q_word, q_in, lane`; copies
`beat, lane`. `check(nest)` lists port violations (empty when legal).
"""
from .directives import Dataflow, Partition, Pipeline, Stream, Unroll
from .ir import Access, Buffer, Call, E, Expr, Loop, LoopNest, Stmt
from .legality import check, port_uses
from .nests import checked_nests, layer_nest, layer_nests
from .text import nest_text
from .transform import dataflow, insert, localize, partition, pipeline, reorder, split, stream, tile, unroll


def dump(mapping) -> str:
    """Every layer's nest as text, with the model's cycle figures (OUT/loop_ir.txt)."""
    t = mapping.target
    head = [f"# hlsgen loop IR: model {mapping.graph_name} on {t.name} ({t.array.rows} x {t.array.cols} "
            f"{t.array.dataflow}, {t.clock_mhz:g} MHz); cycles from docs/hardware.md", ""]
    parts = []
    for layer in mapping.layers:
        header = (f"{layer.op} ({layer.kind}) on {layer.unit}: {layer.cycles:,} cycles, {layer.macs:,} MACs")
        parts.append(nest_text(layer_nest(layer, t), header))
    return "\n".join(head) + "\n\n".join(parts) + "\n"


__all__ = ["Access", "Buffer", "Call", "Dataflow", "E", "Expr", "Loop", "LoopNest", "Partition", "Pipeline", "Stmt",
           "Stream", "Unroll", "check", "checked_nests", "dataflow", "dump", "insert", "layer_nest", "layer_nests", "localize",
           "nest_text", "partition", "pipeline", "port_uses", "reorder", "split", "stream", "tile", "unroll"]
