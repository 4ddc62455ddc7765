"""Hardware targets: `hw_models/*.yaml` loaded into frozen dataclasses and validated on load."""
from __future__ import annotations

import difflib
import typing
from dataclasses import MISSING, dataclass, fields
from pathlib import Path
from typing import Any

import yaml

from ..errors import TargetError
from ..resources import data_dir

DATAFLOWS = ("weight_stationary", "output_stationary")
MAX_FILE_BYTES = 1 << 20  # a target description is a few hundred bytes; a bigger file is not one
MAX_INT = 2**31 - 1  # every count and width ends up in 32-bit C++ and Verilog parameters


@dataclass(frozen=True)
class ArrayShape:
    rows: int
    cols: int
    dataflow: str = "weight_stationary"


@dataclass(frozen=True)
class Widths:
    operand_bits: int
    accumulator_bits: int


@dataclass(frozen=True)
class Buffer:
    kib: int
    banks: int

    @property
    def bytes(self) -> int:
        return self.kib * 1024


@dataclass(frozen=True)
class Buffers:
    input: Buffer
    weight: Buffer
    accumulator: Buffer


@dataclass(frozen=True)
class TopMemory:
    """How the target's own top (`--program external`, one activation memory for every model) splits each
    bank of buffers.input: these fractions to plane 0 and plane 1, the rest to the depthwise window memory
    (hlsgen.hw.overlay_memory)."""

    plane0: float = 0.375
    plane1: float = 0.125


@dataclass(frozen=True)
class ExternalMemory:
    """DRAM behind one AXI4 master port: what the mapping puts there when it does not fit on chip."""

    data_bits: int  # AXI4 data width
    bytes_per_cycle: float  # sustained, at the accelerator's clock
    read_latency: int  # cycles from a read request to its first beat

    def transfer_cycles(self, nbytes: int) -> int:
        return -(-nbytes * 1000 // round(self.bytes_per_cycle * 1000))


# Device families hlsgen synthesizes for (hlsgen.rtl.synth_flow): Yosys' synth_xilinx families, and the Lattice
# ECP5, which nextpnr also places and routes. Part-number prefixes name the family when a target does not.
FAMILIES = ("xc7", "xcup", "ecp5")
LATTICE = ("ecp5",)
PART_FAMILIES = (("xc7", "xc7"), ("xczu", "xcup"), ("xcvu", "xcup"), ("xcku", "xcup"), ("xcau", "xcup"),
                 ("xck26", "xcup"), ("lfe5", "ecp5"))


@dataclass(frozen=True)
class Device:
    part: str
    dsp: int
    bram_18k: int  # 18 Kib blocks: RAMB18 on Xilinx parts, DP16KD (ECP5) or EBR (Nexus) on Lattice ones
    lut: int
    ff: int
    family: str = ""  # one of FAMILIES; "": from the part number
    package: str = ""  # Lattice parts: what nextpnr places the IOs in (e.g. CABGA381)
    speed: int = 0  # Lattice parts: the speed grade nextpnr times against (ECP5: 6, 7 or 8); 0: none given

    @property
    def synth_family(self) -> str:
        """The family synthesis targets: the one given, else the part number's; "" when neither says."""
        part = self.part.lower()
        return self.family or next((family for prefix, family in PART_FAMILIES if part.startswith(prefix)), "")


@dataclass(frozen=True)
class Target:
    name: str
    description: str
    array: ArrayShape
    widths: Widths
    buffers: Buffers
    clock_mhz: float
    device: Device
    external_memory: ExternalMemory | None = None  # None: everything must fit on chip
    top_memory: TopMemory = TopMemory()

    def __post_init__(self):
        _check(self.array.dataflow in DATAFLOWS, f"array.dataflow must be one of {DATAFLOWS}")
        positive = [("array.rows", self.array.rows), ("array.cols", self.array.cols),
                    ("clock_mhz", self.clock_mhz), *((f"device.{k}", getattr(self.device, k))
                                                     for k in ("dsp", "bram_18k", "lut", "ff"))]
        for field_name, value in positive:
            _check(value > 0, f"{field_name} must be positive")
        _check(2 <= self.widths.operand_bits <= 16, "widths.operand_bits must be 2..16")
        _check(self.widths.operand_bits * 2 < self.widths.accumulator_bits <= 64,
               "widths.accumulator_bits must exceed twice the operand width and be at most 64")
        for name in ("input", "weight", "accumulator"):
            buffer = getattr(self.buffers, name)
            _check(buffer.kib > 0 and buffer.banks > 0, f"buffers.{name} needs positive kib and banks")
        device = self.device
        _check(device.family in ("", *FAMILIES), f"device.family must be one of {', '.join(FAMILIES)}")
        if device.synth_family in LATTICE:  # nextpnr needs both to place and time the design
            _check(bool(device.package), "device.package must name the part's package (e.g. CABGA381) on a "
                   "Lattice part")
            _check(device.speed > 0, "device.speed must be the part's speed grade (e.g. 8) on a Lattice part")
        split = self.top_memory
        _check(split.plane0 > 0 and split.plane1 > 0 and split.plane0 + split.plane1 < 1,
               "top_memory.plane0 and plane1 must be positive fractions of a bank that leave some to the depthwise "
               "window memory")
        memory = self.external_memory
        if memory is not None:
            _check(memory.data_bits in (32, 64, 128, 256, 512, 1024), "external_memory.data_bits must be an AXI4 "
                   "data width (32 to 1024, a power of two)")
            _check(0 < memory.bytes_per_cycle <= memory.data_bits / 8,
                   "external_memory.bytes_per_cycle must be positive and at most data_bits / 8")
            _check(memory.read_latency >= 0, "external_memory.read_latency must not be negative")


# Keys older target files may hold that no longer describe the machine: `line_buffer` sized a row buffer
# the accelerator does not have (its window generator reads the banked activation memory directly).
RETIRED = {Target: {"line_buffer"}}


class _Invalid(ValueError):
    pass


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise _Invalid(message)


def _build(cls: type, data: Any, where: str):
    """Construct nested frozen dataclasses from YAML mappings, naming any missing or unknown key."""
    if not isinstance(data, dict):
        raise _Invalid(f"{where or 'the file'} must be a mapping")
    known = {f.name: f for f in fields(cls)}
    unknown = sorted(set(data) - set(known) - RETIRED.get(cls, set()))
    if unknown:
        raise _Invalid(f"unknown key(s) {unknown} in {where or 'the top level'}")
    values = {}
    hints = typing.get_type_hints(cls)
    for name, f in known.items():
        key = f"{where + '.' if where else ''}{name}"
        if name not in data:
            if f.default is not MISSING:
                continue
            raise _Invalid(f"missing key {key}")
        nested = _NESTED.get((cls, name))
        values[name] = _build(nested, data[name], key) if nested else _typed(hints[name], data[name], key)
    return cls(**values)


def _typed(kind: type, value: Any, key: str):
    """`value` when it is of the field's type (YAML's true/false are no numbers, an int is a float), else
    a message naming the key: the checks in Target compare numbers and would fail on anything else."""
    shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
    if kind is str:
        _check(isinstance(value, str), f"{key} must be text, not {shown}")
        return value
    is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is int:
        _check(is_number and isinstance(value, int) and abs(value) <= MAX_INT,
               f"{key} must be an integer (at most {MAX_INT:,}), not {shown}")
        return value
    # NaN and the infinities fail the comparison (math.isfinite would overflow on a huge int)
    _check(is_number and abs(value) <= MAX_INT, f"{key} must be a finite number, not {shown}")
    return value  # as written: 200 stays an int in the reports


_NESTED = {
    (Target, "array"): ArrayShape, (Target, "widths"): Widths, (Target, "buffers"): Buffers,
    (Target, "device"): Device, (Target, "external_memory"): ExternalMemory, (Target, "top_memory"): TopMemory,
    (Buffers, "input"): Buffer, (Buffers, "weight"): Buffer, (Buffers, "accumulator"): Buffer,
}


def builtin_targets() -> dict[str, Path]:
    return {p.stem: p for p in sorted(data_dir("hw_models").glob("*.yaml"))}


def load_target(name_or_path: str) -> Target:
    """A built-in target by name, or a YAML file by path. Errors name the problem and the fix."""
    builtin = builtin_targets()
    path = Path(name_or_path)
    if name_or_path in builtin:
        path = builtin[name_or_path]
    elif not (path.suffix in (".yaml", ".yml") and path.is_file()):
        close = difflib.get_close_matches(name_or_path, builtin, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise TargetError(f"unknown target {name_or_path!r}: {hint}choose one of {', '.join(builtin)} "
                          "or give a path to a target .yaml")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise TargetError(f"{path}: invalid target description: {path.stat().st_size:,} bytes, more than any "
                          f"target's few hundred (at most {MAX_FILE_BYTES:,}); is it the right file?")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        return _build(Target, data, "")
    except UnicodeDecodeError:
        raise TargetError(f"{path}: invalid target description: not UTF-8 text (a YAML file)") from None
    except (yaml.YAMLError, ValueError, TypeError) as exc:  # ValueError: _Invalid, or a number past Python's
        first = (str(exc).splitlines() or [type(exc).__name__])[0]  # int-parsing limit
        raise TargetError(f"{path}: invalid target description: {first}") from None
