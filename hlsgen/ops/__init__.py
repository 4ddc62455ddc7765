"""Every op hlsgen knows, one module per family; importing this package registers them all."""
from . import conv  # noqa: F401
from .registry import IMPORTERS, OPS, NoAttrs, OpDef

__all__ = ["IMPORTERS", "OPS", "NoAttrs", "OpDef"]
