"""User-facing errors: each carries a one-line message and a distinct process exit code.

The README's exit-code table lists them; `EXIT_CODES` below is that table's source, and a test keeps the
two in step. Codes 3, 4 and 5 predate the others and keep their meaning.
"""
from __future__ import annotations

INTERNAL_ERROR_EXIT = 70  # a bug in hlsgen (EX_SOFTWARE)
INTERRUPTED_EXIT = 130  # Ctrl-C (128 + SIGINT)
TERMINATED_EXIT = 143  # SIGTERM (128 + 15): a job runner or `kill` stopping a build cleans up as Ctrl-C does


STOPPED = {INTERRUPTED_EXIT: "interrupted: nothing was written", TERMINATED_EXIT: "terminated: nothing was written"}


class Terminated(BaseException):
    """SIGTERM arrived: unwinds like KeyboardInterrupt (every cleanup runs), not caught as an error."""
USAGE_EXIT = 2  # a bad option value or config file (click's usage errors use 2 as well)


class HlsgenError(Exception):
    """An error the user can act on; the CLI prints its message on one line and exits with `exit_code`."""

    exit_code = USAGE_EXIT
    what = "a bad command-line option or config file: unknown or out-of-range value, malformed YAML"


class UsageError(HlsgenError):
    """An option value (or a config file entry) that hlsgen cannot use."""


class MappingError(HlsgenError):
    """A layer does not fit the target: names the layer and the buffer, limit or resource that overflows."""

    exit_code = 3
    what = "the design does not fit the target: a layer overflows a buffer or limit, or the device's resources"


class ToolError(HlsgenError):
    """A tool the step needs (g++, Verilator) is missing or failed for a reason outside the design."""

    exit_code = 4
    what = "a tool a step needs (g++, Verilator, Yosys, nextpnr) is missing or failed"


class MismatchError(HlsgenError):
    """A simulation's output differs from the integer reference: names the first layer, image and element."""

    exit_code = 5
    what = "C simulation or RTL simulation differs from the integer reference (names layer, image, element)"


class PathError(HlsgenError):
    """A path that does not exist or is of the wrong kind, or a folder that is not (or must not be) a build."""

    exit_code = 6
    what = "a missing or wrong path: no such file, a directory for a file, not a build folder, -o occupied"


class ModelFileError(HlsgenError):
    """A file that is not a readable, well-formed ONNX model."""

    exit_code = 7
    what = "not a readable ONNX model: truncated or not protobuf, no graph, a graph ONNX itself rejects"


class UnsupportedModelError(HlsgenError):
    """The model uses ops, attributes or shapes that hlsgen cannot compile."""

    exit_code = 8
    what = "a valid model hlsgen cannot compile: unsupported ops (all listed), attributes, opsets, dynamic shapes"


class TargetError(HlsgenError):
    """An unknown target name or an invalid target description."""

    exit_code = 9
    what = "an unknown target name (the closest is suggested) or an invalid target .yaml"


class DataError(HlsgenError):
    """Calibration or input data that does not suit the model: shape, dtype, count, NaN/Inf, labels."""

    exit_code = 10
    what = "calibration or input data that does not fit the model: shape, dtype, no samples, NaN/Inf, labels"


class BudgetError(HlsgenError):
    """No bit-width assignment, not even uniform 8-bit, meets the requested quality budget."""

    exit_code = 11
    what = "--bits auto: not even uniform 8-bit meets the --max-accuracy-drop / --min-sqnr budget"


class DeviceError(HlsgenError):
    """An accelerator (a board, or its simulation) that does not answer as the build expects."""

    exit_code = 12
    what = "a device that does not answer as expected: wrong ID or array, a run that never finishes, no memory I/O"


class UnsupportedOp:
    """One unsupported node, kept for the report that lists all of them at once."""

    def __init__(self, node: str, op_type: str, opset: int, why: str):
        self.node, self.op_type, self.opset, self.why = node, op_type, opset, why

    def __str__(self) -> str:
        opset = f", opset {self.opset}" if self.opset else ""
        return f"{self.node!r} ({self.op_type}{opset}): {self.why}"


class UnsupportedOpsError(UnsupportedModelError):
    def __init__(self, problems: list[UnsupportedOp]):
        self.problems = problems
        listing = "; ".join(str(p) for p in problems)
        super().__init__(f"{len(problems)} unsupported node(s): {listing}")


class GraphInvariantError(Exception):
    """The IR broke one of its invariants: a bug in a pass, never a user error."""


EXIT_CODES: dict[int, str] = {
    0: "success (for csim/sim/--verify: bit-exact)",
    **{cls.exit_code: cls.what for cls in (UsageError, MappingError, ToolError, MismatchError, PathError,
                                           ModelFileError, UnsupportedModelError, TargetError, DataError,
                                           BudgetError, DeviceError)},
    INTERNAL_ERROR_EXIT: "an internal error: a bug in hlsgen (HLSGEN_DEBUG=1 prints the traceback; please report it)",
    INTERRUPTED_EXIT: "interrupted (Ctrl-C); OUT is left as it was",
    TERMINATED_EXIT: "terminated (SIGTERM); OUT is left as it was",
}
