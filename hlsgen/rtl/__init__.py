"""Verilog RTL: the hand-written modules in `rtl/`, the generated per-model top, and their simulation."""
from __future__ import annotations

from pathlib import Path

from ..resources import data_dir


def rtl_dir() -> Path:
    return data_dir("rtl")


def rtl_sources() -> list[Path]:
    """Every hand-written module; Verilator elaborates only what the chosen top instantiates."""
    return sorted(rtl_dir().glob("*.v"))
