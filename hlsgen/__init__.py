"""hlsgen: compile an ONNX CNN into bit-exact HLS C++ and Verilog RTL for a systolic-array accelerator."""
import os

# The reference executors multiply many small matrices: BLAS threads cost far more than they give there
# (30x slower on a loaded 2-core machine). Set before numpy loads; an explicit user setting wins.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
from .errors import HlsgenError

__all__ = ["HlsgenError", "Model", "load_onnx"]
__version__ = "0.1.0"


def __getattr__(name: str):
    """`Model` and `load_onnx` load numpy, onnx and the compiler on first use, not with the package: the
    console script starts behind its Ctrl-C guard (hlsgen.__main__) before any of that loads."""
    if name in ("Model", "load_onnx"):
        from . import model
        return getattr(model, name)
    raise AttributeError(f"module 'hlsgen' has no attribute {name!r}")
