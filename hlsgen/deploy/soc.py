"""The LiteX SoC around a build's accelerator (`hlsgen deploy --board` of an ECP5 board, docs/deploy.md "ECP5
boards"): a VexRiscv CPU running hlsgen's firmware from an integrated ROM (hlsgen.deploy.firmware), the board's
DRAM as main RAM, its UART, and the accelerator (the model's own top), its AXI-streams fed from and to main RAM
by LiteX DMAs, bus masters on the SoC bus. A top that reads weights or feature maps from external memory also
has its AXI4 masters on ports of its own on the DRAM controller's crossbar (LiteDRAM's AXI frontend) and its
AXI4-Lite registers (hlsgen.rtl.control) as a slave on the SoC bus at CONTROL_BASE. Two SoCs share the accelerator's wrapper: the
board's (litex-boards' BaseSoC: its clocks, pins and DRAM PHY) and the simulated one (SimSoC: LiteX's
simulation platform, the DRAM behind litedram's SDRAM PHY model), so what is simulated is what is built.

LiteX is imported here only: `hlsgen deploy` of an ECP5 board imports this module when it runs."""
from __future__ import annotations

import importlib

from litedram import modules as litedram_modules
from litedram.frontend.axi import LiteDRAMAXI2Native
from litedram.phy.model import SDRAMPHYModel, sdram_module_nphases
from litex.build.generic_platform import Pins, Subsignal
from litex.build.sim import SimPlatform
from litex.build.sim.platform import SimFinish
from litex.gen import LiteXModule
from litex.soc.cores.dma import WishboneDMAReader, WishboneDMAWriter
from litex.soc.integration.soc import SoCRegion
from litex.soc.integration.soc_core import SoCCore
from litex.soc.interconnect import axi, stream, wishbone
from litex.soc.interconnect.csr import CSR, CSRStatus
from migen import ClockSignal, If, Instance, ResetSignal, Signal
from migen.genlib.io import CRG

from ..rtl import control
from .firmware import prepare_soc
from .soc_boards import SocBoard
from .soc_top import CONTROL_BASE, CONTROL_SIZE, StreamTop

CPU = ("vexriscv", "lite")  # the smallest rv32im VexRiscv: a 2 KiB instruction cache and no data cache, so the
#                             CPU reads what the DMAs wrote without cache maintenance
SRAM_BYTES = 0x2000  # the firmware's data and stack
SIM_SDRAM_HZ = int(100e6)  # the clock its timings are computed at (as LiteX's own litex_sim)


class Accelerator(LiteXModule):
    """The accelerator between two DMAs. CSRs: reader_*/writer_* (LiteX's DMA: base, length in bytes,
    enable, done); start (arms the input: in_elems beats, tlast on the last, the padding of the last word
    dropped; clears done and cycles); done (the last output beat taken); cycles (first input beat to last
    output beat, inclusive: what hlsgen's own testbench counts). A top with external memory has no input
    stream when its input lives in the feature-map image (no reader then: `start` only clears done), and
    `control` (its AXI4-Lite registers) and `masters` (its AXI4 masters) for the SoC to connect."""

    def __init__(self, top: StreamTop, platform):
        for source in top.sources:
            platform.add_source(str(source))
        bus = dict(data_width=32, address_width=32, addressing="word")
        self.streams_in = streams_in = top.memory is None or top.memory.input_offset is None
        # "big" is no byte swap: with the converters' default order the lowest address streams first
        self.writer = WishboneDMAWriter(wishbone.Interface(**bus), endianness="big", with_csr=True)
        self.out_conv = stream.Converter(top.out_width, 32)  # tlast flushes a partial word
        self._start = CSR()
        self._done = CSRStatus()
        self._cycles = CSRStatus(32)
        ports = dict(i_clk=ClockSignal(), i_rst=ResetSignal())

        out = self.out_conv.sink
        armed, running, done, cycles = Signal(), Signal(), Signal(), Signal(32)
        in_beat, out_last = Signal(), Signal()
        self.comb += [
            self.out_conv.source.connect(self.writer.sink),
            out_last.eq(out.valid & out.ready & out.last),
            self._done.status.eq(done),
            self._cycles.status.eq(cycles),
        ]
        if streams_in:
            self.reader = WishboneDMAReader(wishbone.Interface(**bus), endianness="big", with_csr=True)
            self.in_conv = stream.Converter(32, top.in_width)
            src = self.in_conv.source
            s_valid, s_ready, s_last = Signal(), Signal(), Signal()
            count = Signal(max=max(top.in_elems, 2))
            self.comb += [
                self.reader.source.connect(self.in_conv.sink),
                s_valid.eq(src.valid & armed),
                src.ready.eq(s_ready | ~armed),  # past the image (the padding of its last word): dropped
                s_last.eq(count == top.in_elems - 1),
                in_beat.eq(s_valid & s_ready),
            ]
            self.sync += If(~self._start.re & in_beat, count.eq(count + 1), If(s_last, armed.eq(0))
                            ).Elif(self._start.re, count.eq(0))
            ports |= dict(i_s_axis_tdata=src.data, i_s_axis_tvalid=s_valid, o_s_axis_tready=s_ready,
                          i_s_axis_tlast=s_last)
        self.sync += If(self._start.re,
            armed.eq(1), running.eq(0), done.eq(0), cycles.eq(0),
        ).Else(
            If(in_beat & ~running & ~done,
                running.eq(1), cycles.eq(1),
            ).Elif(running,
                cycles.eq(cycles + 1),
                If(out_last, running.eq(0), done.eq(1)),
            ).Elif(out_last, done.eq(1)),
        )
        ports |= dict(o_m_axis_tdata=out.data, o_m_axis_tvalid=out.valid, i_m_axis_tready=out.ready,
                      o_m_axis_tlast=out.last)
        self.masters, self.control = [], None
        if top.memory is not None:
            self.control = axi.AXILiteInterface(data_width=32, address_width=32)
            ports |= _axi_ports("s_axi_ctrl", self.control, slave=True)
            for m in top.memory.masters:
                bus = axi.AXIInterface(data_width=m.data_width, address_width=32, id_width=m.id_width)
                ports |= _axi_ports(m.name, bus, channels=("ar", "r") * m.reads + ("aw", "w", "b") * m.writes)
                if not m.writes:
                    self.comb += [bus.aw.valid.eq(0), bus.w.valid.eq(0), bus.b.ready.eq(1)]
                if not m.reads:
                    self.comb += [bus.ar.valid.eq(0), bus.r.ready.eq(1)]
                self.masters.append(bus)
        self.specials += Instance(top.top, **ports)


_FIELDS = {"aw": ("addr", "len", "size", "burst", "id"), "w": ("data", "strb"), "b": ("resp", "id"),
           "ar": ("addr", "len", "size", "burst", "id"), "r": ("data", "resp", "id")}
_FROM_MASTER = ("aw", "w", "ar")  # the channels whose payload and valid the master drives


def _axi_ports(prefix: str, bus, channels=("aw", "w", "b", "ar", "r"), slave: bool = False) -> dict:
    """Instance ports of AXI4 (or, `slave`, AXI4-Lite: the top's registers) interface `prefix`_* on `bus`:
    the top drives a master's request channels and a slave's response channels."""
    ports = {}
    for ch in channels:
        endpoint = getattr(bus, ch)
        top_drives = (ch in _FROM_MASTER) != slave
        if slave:  # AXI4-Lite: no bursts, no IDs
            fields = [f for f in _FIELDS[ch] if f not in ("len", "size", "burst", "id")]
        else:
            fields = [*_FIELDS[ch], *(("last",) if ch in ("w", "r") else ())]
        for field in fields:
            signal = getattr(endpoint, field)
            if field == "addr" and slave:
                signal = signal[:control.ADDR_BITS]  # the register map's byte address
            ports[("o_" if top_drives else "i_") + f"{prefix}_{ch}{field}"] = signal
        ports[("o_" if top_drives else "i_") + f"{prefix}_{ch}valid"] = endpoint.valid
        ports[("i_" if top_drives else "o_") + f"{prefix}_{ch}ready"] = endpoint.ready
    return ports


def add_accelerator(soc, top: StreamTop) -> None:
    """`top` as soc.acc, its DMAs bus masters (they reach main RAM through the SoC's interconnect); a top with
    external memory also has its registers at CONTROL_BASE and its masters on the DRAM crossbar."""
    soc.acc = Accelerator(top, soc.platform)
    if soc.acc.streams_in:
        soc.bus.add_master(name="acc_reader", master=soc.acc.reader.bus)
    soc.bus.add_master(name="acc_writer", master=soc.acc.writer.bus)
    if soc.acc.control is not None:
        soc.bus.add_slave(name="hlsgen_ctrl", slave=soc.acc.control,
                          region=SoCRegion(origin=CONTROL_BASE, size=CONTROL_SIZE, cached=False))
    main_ram = soc.bus.regions["main_ram"].origin
    for bus in soc.acc.masters:
        port = soc.sdram.crossbar.get_port(data_width=bus.data_width)
        soc.submodules += LiteDRAMAXI2Native(bus, port, base_address=main_ram)


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
    firmware writes last. `dram` (32-bit little-endian words from main RAM's start) is what the DRAM holds at
    reset: the weight image, in place of the host's upload on a board."""

    def __init__(self, top: StreamTop, rom_bytes: int, board: SocBoard, dram: list[int] | None = None):
        platform = SimPlatform("SIM", list(_SIM_IO))
        SoCCore.__init__(self, platform, clk_freq=int(board.sys_clk_mhz * 1e6), ident="hlsgen SoC (simulation)", cpu_type=CPU[0],
                         cpu_variant=CPU[1], integrated_rom_size=rom_bytes, integrated_sram_size=SRAM_BYTES,
                         uart_name="sim", timer_uptime=True)
        self.crg = CRG(platform.request("sys_clk"))
        name, width = board.sim_dram
        module_cls = getattr(litedram_modules, name)
        module = module_cls(SIM_SDRAM_HZ, f"1:{sdram_module_nphases[module_cls.memtype]}")
        self.sdrphy = SDRAMPHYModel(module=module, data_width=width, clk_freq=SIM_SDRAM_HZ, init=list(dram or []))
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
