"""The interfaces of a build's RTL top, read off its port list: what the block design packages as IP
and wires to the PS. The port names follow Vivado's inference conventions (`<interface>_<signal>`), so
the tcl only names the interfaces; this module finds which ones the top has."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import PathError

AXI_SIGNALS = frozenset(
    f"{channel}{signal}" for channel, signals in (
        ("aw", ("id", "addr", "len", "size", "burst", "lock", "cache", "prot", "qos", "region", "user", "valid",
                "ready")),
        ("w", ("data", "strb", "last", "user", "valid", "ready")),
        ("b", ("id", "resp", "user", "valid", "ready")),
        ("ar", ("id", "addr", "len", "size", "burst", "lock", "cache", "prot", "qos", "region", "user", "valid",
                "ready")),
        ("r", ("id", "data", "resp", "last", "user", "valid", "ready")),
    ) for signal in signals)
STREAM_SIGNALS = frozenset(("tdata", "tvalid", "tready", "tlast", "tkeep", "tstrb", "tuser", "tid", "tdest"))
CONTROL = "s_axi_ctrl"  # the AXI4-Lite registers (hlsgen.rtl.control)
MASTER_ORDER = ("m_axi", "m_axi_fmap", "m_axi_io")  # weights and program, feature maps, inputs and outputs
CLOCK, RESET, IRQ = "clk", "rst", "irq"

_PORT = re.compile(r"^\s*(input|output)\s+(?:wire|reg)?\s*(?:\[\s*(\d+)\s*:\s*(\d+)\s*\])?\s*(\w+)\s*,?\s*(?://.*)?$")


@dataclass(frozen=True)
class Port:
    name: str
    direction: str  # "input" or "output"
    width: int


@dataclass(frozen=True)
class TopInterfaces:
    """What the block design needs to know of the top: its AXI masters (in the SmartConnect's order), the
    streams it leaves unused (their interfaces are dropped, their inputs tied), and the tie values."""

    top: str
    masters: tuple[str, ...]
    master_widths: tuple[tuple[str, int], ...]  # each master's data width in bits
    streams: tuple[str, ...]  # AXI-Stream interfaces, unused on a Zynq board (the PS moves data through DDR)
    ties: tuple[tuple[str, int, int], ...]  # (input port, width, value) driven by constants

    @property
    def has_io_master(self) -> bool:
        """Whether the top reads its input and writes its outputs through memory (else only the streams)."""
        return "m_axi_io" in self.masters


def read_ports(path: Path, top: str) -> tuple[Port, ...]:
    """The ports of module `top` in the Verilog file `path` (one port a line, ANSI style, as hlsgen writes)."""
    lines = path.read_text().splitlines()
    start = next((i for i, line in enumerate(lines) if re.match(rf"\s*module\s+{re.escape(top)}\b", line)), None)
    if start is None:
        raise PathError(f"{path} does not define module {top}; rebuild it with `hlsgen build`")
    ports = []
    for line in lines[start + 1:]:
        if line.strip().startswith(");"):
            break
        match = _PORT.match(line)
        if match:
            direction, msb, lsb, name = match.groups()
            ports.append(Port(name, direction, abs(int(msb) - int(lsb)) + 1 if msb is not None else 1))
    return tuple(ports)


def interfaces(ports: tuple[Port, ...], top: str, where: Path) -> TopInterfaces:
    """Group `ports` into interfaces; a top without the ports a Zynq block design wires is a PathError."""
    names = {p.name: p for p in ports}
    buses: dict[str, list[Port]] = {}
    streams: dict[str, list[Port]] = {}
    loose = []
    for port in ports:
        prefix, _, signal = port.name.rpartition("_")
        if signal in AXI_SIGNALS and prefix.startswith(("m_axi", "s_axi")):
            buses.setdefault(prefix, []).append(port)
        elif signal in STREAM_SIGNALS and prefix.startswith(("m_axis", "s_axis")):
            streams.setdefault(prefix, []).append(port)
        elif port.name not in (CLOCK, RESET, IRQ):
            loose.append(port)
    missing = [name for name in (CLOCK, RESET, IRQ) if name not in names]
    missing += [f"{bus}_*" for bus in (CONTROL, MASTER_ORDER[0]) if bus not in buses]
    if missing:
        raise PathError(f"{where}: the top {top} lacks the port(s) {', '.join(missing)} a Zynq block design "
                        "wires; rebuild it with `hlsgen build --program external`")
    masters = sorted((b for b in buses if b.startswith("m_axi")),
                     key=lambda b: (MASTER_ORDER.index(b) if b in MASTER_ORDER else len(MASTER_ORDER), b))
    widths = tuple((m, max((p.width for p in buses[m] if p.name.endswith(("_rdata", "_wdata"))), default=32))
                   for m in masters)
    stream_inputs = [p for prefix in sorted(streams) for p in streams[prefix] if p.direction == "input"]
    ties = tuple((p.name, p.width, 1 if p.name.endswith("_tready") else 0)  # a stream out drains, none comes in
                 for p in stream_inputs + [p for p in loose if p.direction == "input"])
    return TopInterfaces(top, tuple(masters), widths, tuple(sorted(streams)), ties)
