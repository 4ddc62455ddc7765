"""User-facing errors: each carries a one-line message and the process exit code.

Exit codes (the README lists them): 2 bad input (files, models, unsupported ops, data, options, budgets),
3 the design does not fit the target, 4 a required tool is missing or failed, 5 a simulation disagrees with
the integer reference, 70 an internal error, 130 interrupted.
"""
from __future__ import annotations


class HlsgenError(Exception):
    """An error the user can act on; the CLI prints its message and exits with `exit_code`."""

    exit_code = 2


class InputError(HlsgenError):
    """A missing, unreadable or malformed model or data file."""


class UnsupportedModelError(HlsgenError):
    """The model uses ops, attributes or shapes that hlsgen cannot compile."""


class UnsupportedOp:
    """One unsupported node, kept for the report that lists all of them at once."""

    def __init__(self, node: str, op_type: str, opset: int, why: str):
        self.node, self.op_type, self.opset, self.why = node, op_type, opset, why

    def __str__(self) -> str:
        return f"{self.node!r} ({self.op_type}, opset {self.opset}): {self.why}"


class UnsupportedOpsError(UnsupportedModelError):
    def __init__(self, problems: list[UnsupportedOp]):
        self.problems = problems
        listing = "; ".join(str(p) for p in problems)
        super().__init__(f"{len(problems)} unsupported node(s): {listing}")


class GraphInvariantError(Exception):
    """The IR broke one of its invariants: a bug in a pass, never a user error."""


class BudgetError(HlsgenError):
    """No bit-width assignment, not even uniform 8-bit, meets the requested quality budget."""


class MappingError(HlsgenError):
    """A layer does not fit the target: names the layer and the buffer, limit or resource that overflows."""

    exit_code = 3


class ToolError(HlsgenError):
    """A tool the step needs (g++, Verilator) is missing or failed for a reason outside the design."""

    exit_code = 4


class MismatchError(HlsgenError):
    """A simulation's output differs from the integer reference: names the first layer, image and element."""

    exit_code = 5
