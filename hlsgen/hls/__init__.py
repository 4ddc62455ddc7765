"""HLS C++ generation (`emit.write_hls`): by default the overlay, the target's accelerator written once and
sequenced by the layer program (`overlay/`); or a dataflow of Jinja-rendered per-layer kernels. C simulation
with g++ proves either bit-exact against the integer reference (`verify.csim_build`)."""
from .emit import write_hls

__all__ = ["write_hls"]
