"""What an input mutator returns: the mutated file and the exit codes hlsgen may answer it with."""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import (DataError, MappingError, ModelFileError, TargetError, UnsupportedModelError,
                      UsageError)

# The error categories the mutants aim at, by the exit code of their class.
CONFIG, FIT, MODEL_FILE, UNSUPPORTED, TARGET, DATA = (UsageError.exit_code, MappingError.exit_code,
                                                       ModelFileError.exit_code, UnsupportedModelError.exit_code,
                                                       TargetError.exit_code, DataError.exit_code)


@dataclass(frozen=True)
class Mutant:
    """`data`, the mutated file's bytes; `category`, the exit code of the error it is meant to produce;
    `also`, other codes that are right answers too (0 when the mutation may leave the file valid);
    `what`, the mutation in words (for the reproducer); `mention`, what the error line must name when the
    answer is `category` (an unsupported node: its name and op, as the file spells them)."""

    data: bytes
    category: int
    what: str
    also: frozenset[int] = frozenset()
    mention: tuple[str, ...] = ()

    @property
    def allowed(self) -> frozenset[int]:
        return self.also | {self.category}
