"""The directives of the HLS design that the loop IR does not place: the loop IR schedules each layer's
nest (hlsgen.loopir), these schedule what connects the layers in the dataflow top function."""
from __future__ import annotations

from ..loopir import Dataflow, Pipeline, Stream


def top_directives() -> tuple:
    """The layer kernels run concurrently, connected by streams."""
    return (Dataflow(),)


def adapter_directives() -> tuple:
    """The loops that move a layer's input stream into its input buffer, its output buffer into its
    output stream, or a fork's stream into its copies: one value per cycle."""
    return (Pipeline(1),)


def stream_directive(values: int, reconverges: bool) -> Stream:
    """A stream feeding one branch of a fork must hold a whole tensor (the other branch's reader may not
    start before a whole feature map passed: every layer buffers its input); others need 2 slots."""
    return Stream(depth=max(values, 2) if reconverges else 2)
