"""The open-hardware ECP5 boards `hlsgen deploy` makes a whole LiteX SoC for (hlsgen.deploy.soc): each a
board file of litex-boards, the LFE5U-85F on it, its DRAM and serial port, the clock the SoC runs at, and the
shipped target to build for. Their accelerator is the model's own top (`--program rom`): the target's top,
which loads any model's program, takes more block RAM than the part has (hw_models/ecp5_8x8.yaml)."""
from __future__ import annotations

from dataclasses import dataclass

MIB = 1 << 20
FABRIC = {"LFE5U-85F", "LFE5UM-85F", "LFE5UM5G-85F"}  # one ECP5 fabric (the UM parts add SERDES): one build


@dataclass(frozen=True)
class SocBoard:
    name: str  # what --board takes
    title: str
    part: str  # the device on the board, as its litex-boards platform names it
    memory_bytes: int
    memory_kind: str
    litex_target: str  # the module under litex_boards.targets whose BaseSoC makes the CRG and DRAM controller
    options: tuple[tuple[str, object], ...]  # that BaseSoC's keyword arguments for this board
    sys_clk_mhz: float  # the SoC's clock: CPU, DRAM controller and accelerator (the ULX3S's speed grade 6
    #                     routes the SoC at 44.7 MHz: 40)
    programmer: str  # openFPGALoader's --board
    serial: str  # where the board's UART shows up on the PC
    sim_dram: tuple[str, int]  # the board's DRAM chip (litedram.modules) and data width, modelled in simulation
    baud: int = 1_000_000  # the UART's: both boards' FTDI bridges take 1 Mbaud (FT231X: up to 3, FT2232H: 12)
    target: str = "ecp5_8x8"  # the shipped target (hw_models/<target>.yaml) to build for
    family: str = "ecp5"

    @property
    def die(self) -> str:
        """The fabric: LFE5U-85F of LFE5U-85F-6BG381C."""
        return "-".join(self.part.split("-")[:2])

    @property
    def memory(self) -> str:
        return f"{self.memory_bytes // MIB} MiB {self.memory_kind}"

    @property
    def makes(self) -> str:
        return (f"a LiteX SoC (VexRiscv, {self.memory_kind} controller, the accelerator at {self.sys_clk_mhz:g} MHz), "
                "its firmware, .bit/.svf by Yosys + nextpnr-ecp5")


SOC_BOARDS: tuple[SocBoard, ...] = (
    SocBoard("ulx3s-85f", "Radiona ULX3S (LFE5U-85F)", "LFE5U-85F-6BG381C", 32 * MIB, "SDRAM", "radiona_ulx3s",
             (("device", "LFE5U-85F"), ("revision", "2.0"), ("sdram_module_cls", "MT48LC16M16")), 40.0,
             "ulx3s", "/dev/ttyUSB0 (the FTDI FT231X)", ("MT48LC16M16", 16)),
    SocBoard("ecpix5-85f", "LambdaConcept ECPIX-5 (LFE5UM5G-85F)", "LFE5UM5G-85F-8BG554I", 512 * MIB, "DDR3",
             "lambdaconcept_ecpix5", (("device", "85F"),), 50.0, "ecpix5", "/dev/ttyUSB1 (the FT2232's B channel)",
             ("MT41K256M16", 16)),
)


def same_fabric(part: str, board: SocBoard) -> bool:
    """Whether a build for `part` (e.g. the target's LFE5U-85F-8BG381C) runs on the board's device: the same
    fabric, whatever the package and speed grade (nextpnr places the RTL for the board's)."""
    die = "-".join(part.upper().split("-")[:2])
    return die in FABRIC and board.die.upper() in FABRIC
