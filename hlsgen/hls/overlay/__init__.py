"""The HLS C++ as one accelerator: the target's R x C array, vector unit and memories written once,
sequenced by the layer program (hlsgen.hw.Mapping)."""
from .design import OverlayDesign, write_overlay

__all__ = ["OverlayDesign", "write_overlay"]
