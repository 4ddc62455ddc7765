"""Scheduling directives to `#pragma HLS` lines: the only place that spells a pragma.

A directive is a frozen dataclass (Pipeline, Unroll, Partition, Dataflow, Stream, as the loop IR defines
them); it is dispatched on its class name so that the loop IR's classes and the stand-ins of
`hlsgen.hls.directives` map the same way.
"""
from __future__ import annotations


def pragma(directive, variable: str | None = None) -> str:
    """The `#pragma HLS` line for one directive. `variable` is the C name of the buffer or stream a
    Partition or Stream applies to (Partition defaults to its own `buffer` field)."""
    kind = type(directive).__name__
    if kind == "Pipeline":
        return f"#pragma HLS PIPELINE II={int(directive.ii)}"
    if kind == "Unroll":
        factor = getattr(directive, "factor", None)
        return "#pragma HLS UNROLL" if factor is None else f"#pragma HLS UNROLL factor={int(factor)}"
    if kind == "Partition":
        name = variable or directive.buffer
        if directive.kind == "complete":
            return f"#pragma HLS ARRAY_PARTITION variable={name} type=complete dim={int(directive.dim)}"
        return (f"#pragma HLS ARRAY_PARTITION variable={name} type={directive.kind} "
                f"factor={int(directive.factor)} dim={int(directive.dim)}")
    if kind == "Dataflow":
        return "#pragma HLS DATAFLOW"
    if kind == "Inline":
        return "#pragma HLS INLINE"
    if kind == "Dependence":
        return f"#pragma HLS DEPENDENCE variable={variable} type={directive.kind} false"
    if kind == "Stream":
        if variable is None:
            raise ValueError("a Stream directive needs the C name of its stream")
        return f"#pragma HLS STREAM variable={variable} depth={int(directive.depth)}"
    raise ValueError(f"no pragma for directive {directive!r}")
