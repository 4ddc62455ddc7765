"""The register sequence of hlsgen's C driver (templates/driver/hlsgen_driver.c), in Python, over any platform
with the C driver's four operations: the Verilated harness (hlsgen.runtime.harness), PYNQ's MMIO and buffers
(hlsgen.runtime.pynq), or a stand-in. The same steps in the same order: init (ID, SHAPE), load (images into
device memory, bases, IO, IRQ_ENABLE, CONTROL.load, DONE), run (input, CONTROL.start, DONE, outputs)."""
from __future__ import annotations

from types import SimpleNamespace
from typing import Protocol

import numpy as np

from ..errors import DeviceError
from ..hw.dram import pack_map
from ..rtl import control
from .layout import ModelLayout

ALIGN = 4096  # every image on a page of its own, as the C driver places them
POLL_US = 10  # a wait's slice: DONE is read between slices
REG = control.OFFSET


class Platform(Protocol):
    def read(self, offset: int) -> int: ...

    def write(self, offset: int, value: int) -> None: ...

    def copy_to(self, address: int, data: bytes) -> None: ...

    def copy_from(self, address: int, size: int) -> bytes: ...

    def wait(self, microseconds: int) -> bool: ...


def _align(x: int) -> int:
    return -(-x // ALIGN) * ALIGN


def device_bytes(layouts) -> int:
    """Device memory the driver needs for the largest of `layouts` (images, input and outputs, each on pages of
    its own, as `Device.load` places them)."""
    return max(sum(_align(n) for n in (m.program_bytes, m.weights_bytes, m.fmap_bytes, m.input_bytes,
                                       m.output_bytes)) for m in layouts)


class Device:
    """One accelerator behind `platform`, with device memory [mem_base, mem_base + mem_bytes) for the images."""

    def __init__(self, platform: Platform, mem_base: int, mem_bytes: int, timeout_us: int = 10_000_000,
                 use_irq: bool = True):
        self.platform, self.mem_base, self.mem_bytes = platform, mem_base, mem_bytes
        self.timeout_us, self.use_irq = timeout_us, use_irq
        self.layout: ModelLayout | None = None
        self.last_cycles = 0
        ident = platform.read(REG["ID"])
        if ident != control.ident():
            raise DeviceError(f"the device's ID register reads {ident:#010x}, not {control.ident():#010x} (an hlsgen "
                              f"accelerator with register map version {control.VERSION})")
        shape = platform.read(REG["SHAPE"])
        self.rows, self.cols = shape >> 16, shape & 0xFFFF

    def _write64(self, name: str, value: int) -> None:
        self.platform.write(REG[f"{name}_LO"], value & 0xFFFFFFFF)
        self.platform.write(REG[f"{name}_HI"], value >> 32)

    def _wait_done(self, what: str) -> None:
        waited = 0
        while True:
            status = self.platform.read(REG["CONTROL"])
            if status & control.DONE:
                self.last_cycles = self.platform.read(REG["CYCLES"])
                return
            if waited >= self.timeout_us:
                raise DeviceError(f"{what}: no DONE after {waited:,} us (CONTROL reads {status:#010x}, CYCLES "
                                  f"{self.platform.read(REG['CYCLES']):,})")
            self.platform.wait(POLL_US)
            waited += POLL_US

    def load(self, layout: ModelLayout, program: bytes, weights: bytes) -> None:
        """Place the images, set the bases and IO, load the program (CONTROL.load, DONE)."""
        self.layout = None
        if (layout.rows, layout.cols) != (self.rows, self.cols):
            raise DeviceError(f"model {layout.name!r} was built for a {layout.rows}x{layout.cols} array, the device's "
                              f"is {self.rows}x{self.cols}: rebuild for its target")
        at = _align(self.mem_base)
        self.program_addr = at
        self.weights_addr = at = _align(at + layout.program_bytes)
        self.fmap_addr = at = _align(at + layout.weights_bytes)
        self.input_addr = at = _align(at + layout.fmap_bytes)
        self.output_addr = at = _align(at + layout.input_bytes)
        need = _align(at + layout.output_bytes) - self.mem_base
        if need > self.mem_bytes:
            raise DeviceError(f"model {layout.name!r} needs {need:,} bytes of device memory, the window holds "
                              f"{self.mem_bytes:,}")
        self.platform.copy_to(self.program_addr, program)
        self.platform.copy_to(self.weights_addr, weights)
        for name, addr in (("WEIGHTS_BASE", self.weights_addr), ("FMAP_BASE", self.fmap_addr),
                           ("PROGRAM_BASE", self.program_addr), ("INPUT_BASE", self.input_addr),
                           ("OUTPUT_BASE", self.output_addr)):
            self._write64(name, addr)
        want = control.IO_OUTPUT | (0 if layout.input_in_fmap else control.IO_INPUT)
        self.platform.write(REG["IO"], want)
        got = self.platform.read(REG["IO"])
        if got & want != want:
            raise DeviceError(f"IO reads {got:#x}: this accelerator streams its input or outputs (build with "
                              "--program external for inputs and outputs through memory)")
        self.platform.write(REG["IRQ_ENABLE"], int(self.use_irq))
        self.platform.write(REG["CONTROL"], control.LOAD)
        self._wait_done("loading the program")
        self.layout = layout

    def run(self, sample: bytes) -> bytes:
        """One inference: the input's bytes ([channel][row][col]) in, every output's bytes out."""
        m = self.layout
        if m is None:
            raise DeviceError("run before a successful load")
        if m.input_in_fmap:
            self.platform.copy_to(self.fmap_addr + m.input_word * self.rows, packed_input(m, sample, self.rows))
        else:
            self.platform.copy_to(self.input_addr, sample)
        self.platform.write(REG["CONTROL"], control.START)
        self._wait_done("running an inference")
        return self.platform.copy_from(self.output_addr, m.output_bytes)


def packed_input(m: ModelLayout, sample: bytes, rows: int) -> bytes:
    """The input's words as the feature-map image holds them (hlsgen.hw.dram.pack_map, which reads a placement's
    channels, pixels, banks and fold)."""
    width = m.input_width or m.input_pixels
    placement = SimpleNamespace(channels=m.input_channels, height=m.input_pixels // width, width=width,
                                pixels=m.input_pixels, banks=m.input_banks, fold=m.input_fold)
    values = np.frombuffer(sample, np.uint8).astype(np.int64)
    return pack_map(values, placement, rows).tobytes()
