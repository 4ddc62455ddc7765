"""The LiteX SoC around a build's accelerator (`hlsgen deploy --board` of an ECP5 board, docs/deploy.md "ECP5
boards"): a VexRiscv CPU running hlsgen's firmware from an integrated ROM (hlsgen.deploy.firmware), the board's
DRAM as main RAM, its UART, and the accelerator (the model's own top, an AXI-stream in and out) fed from and
to main RAM by two LiteX DMAs, bus masters on the SoC bus. Two SoCs share the accelerator's wrapper: the
board's (litex-boards' BaseSoC: its clocks, pins and DRAM PHY) and the simulated one (SimSoC: LiteX's
simulation platform, the DRAM behind litedram's SDRAM PHY model), so what is simulated is what is built.

LiteX is imported here only: `hlsgen deploy` of an ECP5 board imports this module when it runs."""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

from litedram import modules as litedram_modules
from litedram.phy.model import SDRAMPHYModel, sdram_module_nphases
from litex.build.generic_platform import Pins, Subsignal
from litex.build.sim import SimPlatform
from litex.build.sim.platform import SimFinish
from litex.gen import LiteXModule
from litex.soc.cores.dma import WishboneDMAReader, WishboneDMAWriter
from litex.soc.integration.soc_core import SoCCore
from litex.soc.interconnect import stream, wishbone
from litex.soc.interconnect.csr import CSR, CSRStatus
from migen import ClockSignal, If, Instance, ResetSignal, Signal
from migen.genlib.io import CRG

from .firmware import prepare_soc
from .soc_boards import SocBoard

CPU = ("vexriscv", "lite")  # the smallest rv32im VexRiscv: a 2 KiB instruction cache and no data cache, so the
#                             CPU reads what the DMAs wrote without cache maintenance
SRAM_BYTES = 0x2000  # the firmware's data and stack
SIM_SDRAM_HZ = int(100e6)  # the clock its timings are computed at (as LiteX's own litex_sim)


@dataclass(frozen=True)
class StreamTop:
    """The model's own top: `top` in `sources` with clk, a synchronous active-high rst, s_axis_* (in_elems
    beats an image, tlast on the last) and m_axis_* (out_elems beats), its memories' files in mem_dir (read by
    name from the folder Verilator or Yosys runs in)."""

    top: str
    sources: tuple[Path, ...]
    mem_dir: Path
    in_elems: int
    out_elems: int
    in_width: int = 8
    out_width: int = 8

    @property
    def in_words(self) -> int:
        return -(-self.in_elems * self.in_width // 32)

    @property
    def out_words(self) -> int:
        return -(-self.out_elems * self.out_width // 32)

    @property
    def memories(self) -> tuple[Path, ...]:
        """The files the top's memories read by name ($readmemh): copied beside the tool that reads them."""
        return tuple(sorted(Path(self.mem_dir).glob("*.mem")))


class StreamAccelerator(LiteXModule):
    """The accelerator between two DMAs. CSRs: reader_*/writer_* (LiteX's DMA: base, length in bytes,
    enable, done); start (arms the input: in_elems beats, tlast on the last, the padding of the last word
    dropped; clears done and cycles); done (the last output beat taken); cycles (first input beat to last
    output beat, inclusive: what hlsgen's own testbench counts)."""

    def __init__(self, top: StreamTop, platform):
        for source in top.sources:
            platform.add_source(str(source))
        bus = dict(data_width=32, address_width=32, addressing="word")
        # "big" is no byte swap: with the converters' default order the lowest address streams first
        self.reader = WishboneDMAReader(wishbone.Interface(**bus), endianness="big", with_csr=True)
        self.writer = WishboneDMAWriter(wishbone.Interface(**bus), endianness="big", with_csr=True)
        self.in_conv = stream.Converter(32, top.in_width)
        self.out_conv = stream.Converter(top.out_width, 32)  # tlast flushes a partial word
        self._start = CSR()
        self._done = CSRStatus()
        self._cycles = CSRStatus(32)

        src, out = self.in_conv.source, self.out_conv.sink
        s_valid, s_ready, s_last = Signal(), Signal(), Signal()
        count = Signal(max=max(top.in_elems, 2))
        armed, running, done, cycles = Signal(), Signal(), Signal(), Signal(32)
        in_beat, out_last = Signal(), Signal()
        self.comb += [
            self.reader.source.connect(self.in_conv.sink),
            self.out_conv.source.connect(self.writer.sink),
            s_valid.eq(src.valid & armed),
            src.ready.eq(s_ready | ~armed),  # past the image (the padding of its last word): dropped
            s_last.eq(count == top.in_elems - 1),
            in_beat.eq(s_valid & s_ready),
            out_last.eq(out.valid & out.ready & out.last),
            self._done.status.eq(done),
            self._cycles.status.eq(cycles),
        ]
        self.sync += If(self._start.re,
            armed.eq(1), count.eq(0), running.eq(0), done.eq(0), cycles.eq(0),
        ).Else(
            If(in_beat, count.eq(count + 1), If(s_last, armed.eq(0))),
            If(in_beat & (count == 0),
                running.eq(1), cycles.eq(1),
            ).Elif(running,
                cycles.eq(cycles + 1),
                If(out_last, running.eq(0), done.eq(1)),
            ),
        )
        self.specials += Instance(
            top.top,
            i_clk=ClockSignal(), i_rst=ResetSignal(),
            i_s_axis_tdata=src.data, i_s_axis_tvalid=s_valid, o_s_axis_tready=s_ready, i_s_axis_tlast=s_last,
            o_m_axis_tdata=out.data, o_m_axis_tvalid=out.valid, i_m_axis_tready=out.ready, o_m_axis_tlast=out.last)


def add_accelerator(soc, top: StreamTop) -> None:
    """`top` as soc.acc, its DMAs bus masters (they reach main RAM through the SoC's interconnect)."""
    soc.acc = StreamAccelerator(top, soc.platform)
    soc.bus.add_master(name="acc_reader", master=soc.acc.reader.bus)
    soc.bus.add_master(name="acc_writer", master=soc.acc.writer.bus)


_SIM_IO = [
    ("sys_clk", 0, Pins(1)),
    ("sys_rst", 0, Pins(1)),
    ("serial", 0,
        Subsignal("source_valid", Pins(1)), Subsignal("source_ready", Pins(1)), Subsignal("source_data", Pins(8)),
        Subsignal("sink_valid", Pins(1)), Subsignal("sink_ready", Pins(1)), Subsignal("sink_data", Pins(8))),
]


class SimSoC(SoCCore):
    """The board's SoC on LiteX's simulation platform: the same CPU, ROM, SRAM, UART (on the simulator's
    console) and accelerator, the board's DRAM chip behind litedram's PHY model, and a sim_finish register the
    firmware writes last."""

    def __init__(self, top: StreamTop, rom_bytes: int, board: SocBoard):
        platform = SimPlatform("SIM", list(_SIM_IO))
        SoCCore.__init__(self, platform, clk_freq=int(board.sys_clk_mhz * 1e6), ident="hlsgen SoC (simulation)", cpu_type=CPU[0],
                         cpu_variant=CPU[1], integrated_rom_size=rom_bytes, integrated_sram_size=SRAM_BYTES,
                         uart_name="sim", timer_uptime=True)
        self.crg = CRG(platform.request("sys_clk"))
        name, width = board.sim_dram
        module_cls = getattr(litedram_modules, name)
        module = module_cls(SIM_SDRAM_HZ, f"1:{sdram_module_nphases[module_cls.memtype]}")
        self.sdrphy = SDRAMPHYModel(module=module, data_width=width, clk_freq=SIM_SDRAM_HZ)
        self.add_sdram("sdram", phy=self.sdrphy, module=module, l2_cache_size=8192)
        self.sim_finish = SimFinish()
        add_accelerator(self, top)
        prepare_soc(self)


def board_soc(board: SocBoard, top: StreamTop, rom_bytes: int):
    """The board's SoC: litex-boards' BaseSoC for `board` (its CRG, pins, DRAM controller and PHY, UART) with
    the CPU, ROM and SRAM above and the accelerator added."""
    target = importlib.import_module(f"litex_boards.targets.{board.litex_target}")
    soc = target.BaseSoC(**dict(board.options), toolchain="trellis", sys_clk_freq=int(board.sys_clk_mhz * 1e6),
                         cpu_type=CPU[0], cpu_variant=CPU[1], integrated_rom_size=rom_bytes,
                         integrated_sram_size=SRAM_BYTES, timer_uptime=True, uart_baudrate=board.baud)
    add_accelerator(soc, top)
    prepare_soc(soc)
    return soc
