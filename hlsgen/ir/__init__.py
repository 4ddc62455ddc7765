from .graph import ElementwiseStep, Graph, InputSteps, Node, TensorInfo
from .input_fold import InputFold
from .verify import verify

__all__ = ["ElementwiseStep", "Graph", "InputFold", "InputSteps", "Node", "TensorInfo", "verify"]
