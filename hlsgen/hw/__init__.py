from .mapping import Mapping, map_model
from .report import format_table, report_json
from .rows import LayerMap
from .target import Target, builtin_targets, load_target

__all__ = ["LayerMap", "Mapping", "Target", "builtin_targets", "format_table", "load_target", "map_model", "report_json"]
