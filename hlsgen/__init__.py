"""hlsgen: compile an ONNX CNN into bit-exact HLS C++ and Verilog RTL for a systolic-array accelerator."""
from .errors import HlsgenError
from .model import Model, load_onnx

__all__ = ["HlsgenError", "Model", "load_onnx"]
__version__ = "0.1.0"
