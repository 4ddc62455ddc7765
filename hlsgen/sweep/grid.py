"""The configurations of a sweep: the product of its axes, from the command line or a YAML grid."""
from __future__ import annotations

import itertools
from dataclasses import dataclass, fields
from pathlib import Path

import yaml

from ..build import BuildOptions
from ..config import BITS_VALUES, MAX_BATCH
from ..errors import UsageError
from ..paths import require_file

VERIFY_CHECKS = ("csim", "rtl")
GRID_KEYS = {"targets", "bits", "batch", "verify", "synth"}


@dataclass(frozen=True)
class Config:
    """One point of the design space: what `hlsgen build` is asked to do for it."""

    target: str
    bits: str
    batch: int = 1
    verify: tuple[str, ...] = ()
    synth: bool = False

    def label(self) -> str:
        parts = [Path(self.target).stem, f"bits {self.bits}"]
        if self.batch > 1:
            parts.append(f"batch {self.batch}")
        if self.verify:
            parts.append("verify " + ",".join(self.verify))
        if self.synth:
            parts.append("synth")
        return ", ".join(parts)


@dataclass(frozen=True)
class Axes:
    targets: tuple[str, ...]
    bits: tuple[str, ...] = ("8",)
    batch: tuple[int, ...] = (1,)
    verify: tuple[tuple[str, ...], ...] = ((),)  # each entry one verify setting: (), ("csim",), ...
    synth: tuple[bool, ...] = (False,)

    def configs(self) -> list[Config]:
        _check(self)
        return [Config(t, b, n, v, s)
                for t, b, n, v, s in itertools.product(self.targets, self.bits, self.batch, self.verify, self.synth)]


def parse_list(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))


def parse_verify(settings: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """One setting per `--verify` (`csim,rtl`: both checks; `none`): repeating the option sweeps it."""
    return tuple(dict.fromkeys(_verify_setting(s) for s in settings)) or ((),)


def load_grid(path: str | Path) -> dict:
    """A YAML grid: `targets`, `bits`, `batch`, `verify` (each setting a list of checks) and `synth` as lists."""
    p = require_file(path, "grid file (YAML)")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"{p}: not valid YAML ({(str(exc).splitlines() or [type(exc).__name__])[0]})") from None
    if not isinstance(data, dict) or set(map(str, data)) - GRID_KEYS:
        raise UsageError(f"{p}: a grid maps some of {sorted(GRID_KEYS)} to lists of values")
    grid = {key: value if isinstance(value, list) else [value] for key, value in data.items()}
    try:
        axes = {"targets": tuple(map(str, grid.get("targets", []))), "bits": tuple(map(str, grid.get("bits", ["8"]))),
                "batch": tuple(map(int, grid.get("batch", [1]))), "synth": tuple(map(bool, grid.get("synth", [False]))),
                "verify": tuple(_verify_setting(v) for v in grid.get("verify", [[]]))}
    except (TypeError, ValueError) as exc:
        raise UsageError(f"{p}: {exc}") from None
    return axes


def _verify_setting(value) -> tuple[str, ...]:
    if value in (None, "none", "", []):
        return ()
    return tuple(value) if isinstance(value, list) else parse_list(str(value))


def _check(axes: Axes) -> None:
    if not axes.targets:
        raise UsageError("no targets to sweep: give --targets A,B (or `targets:` in the grid)")
    bad_bits = [b for b in axes.bits if b not in BITS_VALUES]
    if bad_bits:
        raise UsageError(f"--bits {','.join(bad_bits)}: each setting is a width from 2 to 8 or 'auto'")
    bad_batch = [n for n in axes.batch if not 1 <= n <= MAX_BATCH]
    if bad_batch:
        raise UsageError(f"--batch {bad_batch[0]}: each setting is from 1 to {MAX_BATCH}")
    bad_checks = sorted({c for setting in axes.verify for c in setting} - set(VERIFY_CHECKS))
    if bad_checks:
        raise UsageError(f"--verify takes csim and/or rtl, not {', '.join(bad_checks)}")
    if any(axes.synth) and "synth" not in {f.name for f in fields(BuildOptions)}:
        raise UsageError("--synth: this hlsgen has no synthesis step in `hlsgen build` yet; sweep without --synth")
