"""Every op hlsgen knows, one module per family; importing this package registers them all."""
from . import activation  # noqa: F401
from . import cast  # noqa: F401
from . import conv  # noqa: F401
from . import dense  # noqa: F401
from . import elementwise  # noqa: F401
from . import normalization  # noqa: F401
from . import pool  # noqa: F401
from . import qlinear, qonnx, quantize  # noqa: F401
from . import resize  # noqa: F401
from . import shape  # noqa: F401
from .registry import IMPORTERS, OPS, NoAttrs, OpDef

__all__ = ["IMPORTERS", "OPS", "NoAttrs", "OpDef"]
