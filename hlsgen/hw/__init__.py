from .target import Target, builtin_targets, load_target

__all__ = ["Target", "builtin_targets", "load_target"]
