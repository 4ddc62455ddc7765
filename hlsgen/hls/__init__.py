"""HLS C++ generation: the integer graph as a dataflow of Jinja-rendered kernels (`emit.write_hls`), and
C simulation with g++ that proves it bit-exact against the integer reference (`verify.csim_build`)."""
from .emit import write_hls

__all__ = ["write_hls"]
