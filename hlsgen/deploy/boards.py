"""The boards `hlsgen deploy` makes a Vivado project and a PYNQ driver for: each a Zynq part, its memory,
its processing system (PS) with the ports the block design uses, and the shipped target to build for."""
from __future__ import annotations

import difflib
from dataclasses import dataclass

from ..errors import TargetError
from ..hw import load_target
from .soc_boards import SOC_BOARDS, SocBoard

GIB = 1 << 30
MIB = 1 << 20


@dataclass(frozen=True)
class ProcessingSystem:
    """A Zynq family's PS as a Vivado block design names it: the IP, the ports and pins the accelerator is
    wired to, the address segment its masters reach DDR through, and the configuration keys that enable
    them. Values differ per family only; the block design template prints them."""

    family: str  # "zynq7" or "zynqmp"
    title: str
    ip: str  # the IP's VLNV without its version (the tcl takes the newest installed)
    cell: str  # the block design's instance name
    automation_rule: str  # apply_bd_automation's rule, which applies the board preset
    automation_config: str  # and its -config
    gp_port: str  # the PS's AXI master the accelerator's AXI4-Lite control port hangs on
    hp_port: str  # the PS's AXI slave (to DDR) the accelerator's masters share through a SmartConnect
    gp_clock_pin: str
    hp_clock_pin: str
    pl_clock_pin: str  # the fabric clock the accelerator runs on
    pl_reset_pin: str  # its active-low reset, into a proc_sys_reset
    irq_pin: str  # the fabric-to-PS interrupt the accelerator's irq drives
    data_space: str  # the PS's address space the control port is mapped into
    ddr_segment: str  # the HP port's DDR segment, as `<slave interface>/<segment>`
    control_base: int  # the conventional base of the first peripheral behind `gp_port`
    ddr_low_bytes: int  # DDR below 4 GiB: what the accelerator's 32-bit AXI addresses reach
    hp_max_bits: int  # the HP port's widest data bus
    clock_key: str  # the PS configuration key of the fabric clock's frequency (MHz)
    actual_clock_key: str  # and the key Vivado writes the frequency it could make into
    hp_width_key: str
    enable: tuple[tuple[str, str], ...]  # configuration that enables the ports, the clock and the interrupt
    cpu: str  # the application processor, which runs PYNQ and a partitioned model's host stages
    cpu_64bit: bool  # PyPI has onnxruntime wheels for 64-bit Arm Linux (aarch64), none for 32-bit Arm


ZYNQ7 = ProcessingSystem(
    family="zynq7", title="Zynq-7000 PS (processing_system7)", ip="xilinx.com:ip:processing_system7",
    cell="processing_system7_0", automation_rule="xilinx.com:bd_rule:processing_system7",
    automation_config='make_external "FIXED_IO, DDR" apply_board_preset "1" Master "Disable" Slave "Disable"',
    gp_port="M_AXI_GP0", hp_port="S_AXI_HP0", gp_clock_pin="M_AXI_GP0_ACLK", hp_clock_pin="S_AXI_HP0_ACLK",
    pl_clock_pin="FCLK_CLK0", pl_reset_pin="FCLK_RESET0_N", irq_pin="IRQ_F2P", data_space="Data",
    ddr_segment="S_AXI_HP0/HP0_DDR_LOWOCM", control_base=0x43C0_0000, ddr_low_bytes=GIB, hp_max_bits=64,
    clock_key="PCW_FPGA0_PERIPHERAL_FREQMHZ", actual_clock_key="PCW_ACT_FPGA0_PERIPHERAL_FREQMHZ",
    hp_width_key="PCW_S_AXI_HP0_DATA_WIDTH",
    enable=(("PCW_USE_M_AXI_GP0", "1"), ("PCW_USE_S_AXI_HP0", "1"), ("PCW_EN_CLK0_PORT", "1"),
            ("PCW_EN_RST0_PORT", "1"), ("PCW_USE_FABRIC_INTERRUPT", "1"), ("PCW_IRQ_F2P_INTR", "1")),
    cpu="dual-core 32-bit Arm Cortex-A9", cpu_64bit=False,
)
ZYNQMP = ProcessingSystem(
    family="zynqmp", title="Zynq UltraScale+ PS (zynq_ultra_ps_e)", ip="xilinx.com:ip:zynq_ultra_ps_e",
    cell="zynq_ultra_ps_e_0", automation_rule="xilinx.com:bd_rule:zynq_ultra_ps_e",
    automation_config='apply_board_preset "1"',
    gp_port="M_AXI_HPM0_FPD", hp_port="S_AXI_HP0_FPD", gp_clock_pin="maxihpm0_fpd_aclk",
    hp_clock_pin="saxihp0_fpd_aclk", pl_clock_pin="pl_clk0", pl_reset_pin="pl_resetn0", irq_pin="pl_ps_irq0",
    data_space="Data", ddr_segment="SAXIGP2/HP0_DDR_LOW", control_base=0xA000_0000, ddr_low_bytes=2 * GIB,
    hp_max_bits=128, clock_key="PSU__CRL_APB__PL0_REF_CTRL__FREQMHZ",
    actual_clock_key="PSU__CRL_APB__PL0_REF_CTRL__ACT_FREQMHZ", hp_width_key="PSU__SAXIGP2__DATA_WIDTH",
    # GP0 is HPM0_FPD, GP1 HPM1_FPD, GP2 HPM0_LPD; S_AXI_GP2 is HP0_FPD (the board presets enable others)
    enable=(("PSU__USE__M_AXI_GP0", "1"), ("PSU__USE__M_AXI_GP1", "0"), ("PSU__USE__M_AXI_GP2", "0"),
            ("PSU__MAXIGP0__DATA_WIDTH", "32"), ("PSU__USE__S_AXI_GP2", "1"), ("PSU__FPGA_PL0_ENABLE", "1"),
            ("PSU__USE__IRQ0", "1")),
    cpu="quad-core 64-bit Arm Cortex-A53", cpu_64bit=True,
)
PROCESSING_SYSTEMS = {ps.family: ps for ps in (ZYNQ7, ZYNQMP)}


@dataclass(frozen=True)
class Board:
    name: str  # what --board takes
    title: str
    part: str  # the part soldered on the board (its Vivado board files name it)
    family: str  # "zynq7" or "zynqmp"
    memory_bytes: int  # the PS's DDR
    memory_kind: str
    target: str  # the shipped target (hw_models/<target>.yaml) to build for
    board_part: str  # the Vivado board part whose preset configures the PS (DDR, MIO, clocks)

    @property
    def ps(self) -> ProcessingSystem:
        return PROCESSING_SYSTEMS[self.family]

    @property
    def gp_port(self) -> str:
        return self.ps.gp_port

    @property
    def hp_port(self) -> str:
        return self.ps.hp_port

    @property
    def pl_clock_mhz(self) -> float:
        """The fabric clock the block design asks the PS for: the target's clock_mhz."""
        return load_target(self.target).clock_mhz

    @property
    def memory(self) -> str:
        return f"{size_text(self.memory_bytes)} {self.memory_kind}"

    @property
    def reach_bytes(self) -> int:
        """The DDR the accelerator's 32-bit AXI masters can address through the HP port."""
        return min(self.memory_bytes, self.ps.ddr_low_bytes)

    @property
    def store_item(self) -> str:
        """The board files' item in the Xilinx board store (what xhub::install takes)."""
        vendor, name, _, version = self.board_part.split(":")
        return f"{vendor}:xilinx_board_store:{name}:{version}"

    @property
    def makes(self) -> str:
        """What `hlsgen deploy` makes for this board, on one line."""
        return (f"vivado/build.tcl -> .bit/.hwh (accelerator at {self.pl_clock_mhz:g} MHz on {self.hp_port}), "
                "PYNQ driver")


BOARDS: tuple[Board, ...] = (
    Board("pynq-z2", "TUL PYNQ-Z2", "xc7z020clg400-1", "zynq7", 512 * MIB, "DDR3", "systolic8x8",
          "tul.com.tw:pynq-z2:part0:1.0"),
    # The Ultra96-V2's board files (avnet.com:ultra96v2) name the industrial-grade part, -1-i; the first
    # Ultra96 had the -1-e. Both are one die, package and speed grade: a build for either part deploys.
    Board("ultra96-v2", "Avnet Ultra96-V2", "xczu3eg-sbva484-1-i", "zynqmp", 2 * GIB, "LPDDR4", "systolic16x16",
          "avnet.com:ultra96v2:part0:1.2"),
    Board("zcu102", "AMD Xilinx ZCU102", "xczu9eg-ffvb1156-2-e", "zynqmp", 4 * GIB, "PS DDR4", "systolic32x32",
          "xilinx.com:zcu102:part0:3.4"),
)

TEMPERATURE_GRADES = ("e", "i", "q", "m")  # the last field of an UltraScale+ part name: no other difference


def board(name: str) -> Board | SocBoard:
    """The board called `name` (a Zynq board or an ECP5 board a LiteX SoC is made for); an unknown name is a
    TargetError naming the supported ones."""
    everyone = (*BOARDS, *SOC_BOARDS)
    names = [b.name for b in everyone]
    for b in everyone:
        if b.name == name:
            return b
    close = difflib.get_close_matches(name, names, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise TargetError(f"unknown board {name!r}: {hint}choose one of {', '.join(names)} (see `hlsgen boards`)")


def same_device(part: str, other: str) -> bool:
    """Whether two part names are one die, package and speed grade: they may differ in the temperature grade
    (xczu3eg-sbva484-1-e and -1-i), which changes the guaranteed temperature range, not the bitstream."""
    return _device(part) == _device(other)


def _device(part: str) -> str:
    fields = part.lower().split("-")
    return "-".join(fields[:-1] if len(fields) > 2 and fields[-1] in TEMPERATURE_GRADES else fields)


def size_text(nbytes: int) -> str:
    """512 MiB, 2 GiB."""
    return f"{nbytes // GIB} GiB" if nbytes % GIB == 0 else f"{nbytes // MIB} MiB"
