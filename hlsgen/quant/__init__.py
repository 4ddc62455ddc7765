"""Post-training quantization and the integer reference that specifies the hardware."""
from .lower import BitConfig
from .model import QuantizedModel, quantize
from .params import TensorQuant, WeightQuant

__all__ = ["BitConfig", "QuantizedModel", "TensorQuant", "WeightQuant", "quantize"]
