from .graph import ElementwiseStep, Graph, InputSteps, Node, TensorInfo
from .verify import verify

__all__ = ["ElementwiseStep", "Graph", "InputSteps", "Node", "TensorInfo", "verify"]
