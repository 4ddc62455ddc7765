"""The board's LiteX SoC as gateware, and its bitstream by open tools (`hlsgen deploy` of an ECP5 board):
litex-boards' BaseSoC with the accelerator (hlsgen.deploy.soc), its firmware in the ROM, generated into
DEPLOY/gateware; with the bitstream, Yosys, nextpnr-ecp5 and ecppack (the yowasp wheels hlsgen installs)
run LiteX's trellis build script, and nextpnr's report gives the Fmax and the resources."""
from __future__ import annotations

from pathlib import Path

from .firmware import build_firmware, rom_bytes
from .soc_boards import SocBoard


def make_gateware(board: SocBoard, top, checked, images, folder: Path, bitstream: bool) -> dict | None:
    """DEPLOY/firmware and DEPLOY/gateware for `board`; with `bitstream`, the .bit and .svf and their figures."""
    from .soc import board_soc
    from .soc_deploy import firmware_headers

    soc = board_soc(board, top, rom_bytes(len(images), top.in_words))
    soc.finalize()
    firmware = build_firmware(soc, firmware_headers(checked, top, images, board), folder / "firmware")
    soc.init_rom("rom", list(firmware.words), auto_size=False)
    gateware = folder / "gateware"
    soc.platform.output_dir = str(folder)
    soc.build(build_dir=str(gateware), build_name="hlsgen_soc", run=False)
    for memory in top.memories:
        (gateware / memory.name).write_bytes(memory.read_bytes())
    return None
