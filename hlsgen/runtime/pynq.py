"""The `pynq` backend: a Zynq board running PYNQ (pynq 3.x / 4.0), the driver's register sequence
(hlsgen.runtime.driver) over pynq's `Overlay` (the bitstream and its .hwh, from `hlsgen deploy`), `MMIO` (the
accelerator's AXI4-Lite window) and `allocate` (one physically contiguous buffer holding every image, which
the accelerator's masters reach through the PS's HP port). Only on the board: elsewhere `import pynq` fails
and the backend says so. The tests bind a stand-in for these three classes to the Verilated RTL."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from ..errors import DeviceError, PathError
from .driver import device_bytes
from .layout import ModelLayout

TOP_PREFIX = "overlay_"  # the accelerator's IP in the block design: its top module's name


class PynqPlatform:
    """The four operations of the C driver's platform layer on PYNQ."""

    def __init__(self, mmio, buffer):
        self.mmio, self.buffer = mmio, buffer
        self.base = int(buffer.physical_address)

    def read(self, offset: int) -> int:
        return int(self.mmio.read(offset))

    def write(self, offset: int, value: int) -> None:
        self.mmio.write(offset, int(value))

    def copy_to(self, address: int, data: bytes) -> None:
        at = address - self.base
        self.buffer[at:at + len(data)] = np.frombuffer(data, np.uint8)
        self.buffer.flush()  # out of the CPU's caches, into DDR where the accelerator reads

    def copy_from(self, address: int, size: int) -> bytes:
        self.buffer.invalidate()  # drop stale cache lines: the accelerator wrote DDR
        at = address - self.base
        return bytes(self.buffer[at:at + size])

    def wait(self, microseconds: int) -> bool:
        time.sleep(microseconds / 1e6)
        return False

    def close(self) -> None:
        self.buffer.freebuffer()


def open_pynq(folder: Path, bitstream: str | Path | None = None) -> tuple[PynqPlatform, int, int]:
    """Download `bitstream` (default: the deploy folder's one .bit beside `folder`), find the accelerator's
    AXI4-Lite window in its .hwh, and allocate the images' buffer; (platform, its device address, its bytes)."""
    try:
        import pynq
    except ImportError:
        raise DeviceError("--backend pynq runs on a board with PYNQ (pynq 3.x or 4.0): `import pynq` failed here; "
                          "use --backend rtl to run the same register sequence against the Verilated RTL") from None
    bit = Path(bitstream) if bitstream else _find_bitstream(Path(folder))
    overlay = pynq.Overlay(str(bit))
    names = [name for name, ip in overlay.ip_dict.items() if TOP_PREFIX in str(ip.get("type", name)) or
             TOP_PREFIX in name]
    if len(names) != 1:
        raise DeviceError(f"{bit}: expected one {TOP_PREFIX}* accelerator in the design, found {names or 'none'} "
                          f"(IPs: {', '.join(overlay.ip_dict)})")
    ip = overlay.ip_dict[names[0]]
    mmio = pynq.MMIO(ip["phys_addr"], ip["addr_range"])
    size = device_bytes(_layouts(Path(folder)))
    buffer = pynq.allocate(shape=(size,), dtype=np.uint8)
    return PynqPlatform(mmio, buffer), int(buffer.physical_address), size


def _find_bitstream(folder: Path) -> Path:
    found = sorted(folder.parent.glob("*.bit")) + sorted(folder.glob("*.bit"))
    if not found:
        raise PathError(f"no .bit beside {folder}: build it with the deploy folder's vivado/build.tcl, or pass "
                        "bitstream=")
    return found[0]


def _layouts(folder: Path) -> list[ModelLayout]:
    """The layouts of a build's program(s): its own, or every accelerator segment's."""
    if (folder / "driver").is_dir():
        return [ModelLayout.read(folder)]
    return [ModelLayout.read(seg) for seg in sorted((folder / "segments").glob("*")) if seg.is_dir()]
