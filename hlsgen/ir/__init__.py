from .graph import Graph, Node, TensorInfo
from .verify import verify

__all__ = ["Graph", "Node", "TensorInfo", "verify"]
