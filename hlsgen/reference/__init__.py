from .checks import verify_graph
from .float_executor import annotate_shapes, run_graph

__all__ = ["annotate_shapes", "run_graph", "verify_graph"]
