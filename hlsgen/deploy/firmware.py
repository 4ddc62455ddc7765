"""hlsgen's SoC firmware (templates/firmware/): freestanding C for the SoC's VexRiscv, built with Debian's
gcc-riscv64-unknown-elf (rv32im, no C library) around LiteX's generated register and memory headers and the
images it runs (images.h: the build's stored test images, packed as the input DMA reads them). It lives in
the SoC's integrated ROM; hlsgen.deploy.soc_sim runs it in simulation and the bitstream carries it."""
from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ToolError
from ..resources import data_dir
from ..templating import make_environment, render_with

FOLDER = "firmware"
SOURCES = ("crt0.S", "main.c")
GCC, OBJCOPY = "riscv64-unknown-elf-gcc", "riscv64-unknown-elf-objcopy"
GCC_PACKAGE = "gcc-riscv64-unknown-elf"  # Debian's, with the rv32im/ilp32 multilib
FLAGS = ("-march=rv32im", "-mabi=ilp32", "-O2", "-nostdlib", "-ffreestanding", "-Wall", "-Werror", "-Wl,--no-relax")
ROM_SLACK = 0x4000  # bytes of code beside the images (the firmware is about 2 KiB)


@dataclass(frozen=True)
class Firmware:
    folder: Path  # sources, headers, firmware.elf, firmware.bin
    words: tuple[int, ...]  # the ROM's 32-bit words, little-endian


def rom_bytes(images: int, in_words: int) -> int:
    """The integrated ROM's size for `images` images of `in_words` words: a power of two."""
    return 1 << (images * in_words * 4 + ROM_SLACK).bit_length()


def require_gcc() -> None:
    if shutil.which(GCC) is None:
        raise ToolError(f"the SoC's firmware needs {GCC}, which is not installed: install Debian's {GCC_PACKAGE} "
                        f"(apt-get install {GCC_PACKAGE})")


def images_header(images: np.ndarray, in_words: int, out_words: int, out_bytes: int, width: int,
                  model: str, board: str) -> str:
    """images.h: each image's input beats (`width` bits) packed little-endian into 32-bit words."""
    per_word, mask = 32 // width, (1 << width) - 1
    rows = []
    for image in images:
        beats = [int(v) & mask for v in np.asarray(image).ravel()]
        beats += [0] * (-len(beats) % per_word)
        words = [sum(b << (width * j) for j, b in enumerate(beats[k:k + per_word])) for k in range(0, len(beats), per_word)]
        rows.append("    {" + ", ".join(f"0x{w:08x}" for w in words) + "},")
    return (f'#define MODEL_NAME "{model}"\n#define BOARD_NAME "{board}"\n#define N_IMAGES {len(images)}\n'
            f"#define IN_WORDS {in_words}\n#define OUT_WORDS {out_words}\n#define OUT_BYTES {out_bytes}\n"
            f"static const uint32_t images[N_IMAGES][IN_WORDS] = {{\n" + "\n".join(rows) + "\n};\n")


def build_firmware(soc, headers: dict[str, str], folder: Path) -> Firmware:
    """Write the sources, LiteX's csr.h and mem.h for the finalized `soc`, `headers` (images.h) and the linker
    script into `folder`, compile, and return the ROM's words; a firmware larger than the ROM is a ToolError."""
    from litex.soc.integration import export
    from litex.soc.integration.soc_core import get_mem_data

    require_gcc()
    folder.mkdir(parents=True, exist_ok=True)
    for name in SOURCES:
        shutil.copyfile(data_dir("templates") / FOLDER / name, folder / name)
    rom, sram = soc.mem_regions["rom"], soc.mem_regions["sram"]
    files = {
        "csr.h": export.get_csr_header(soc.csr_regions, soc.constants, csr_base=soc.mem_regions["csr"].origin,
                                       with_access_functions=False),
        "mem.h": export.get_mem_header(soc.mem_regions),
        "linker.ld": render_with(make_environment(FOLDER), FOLDER, "linker.ld.j2", rom_origin=hex(rom.origin),
                                 rom_size=hex(rom.size), sram_origin=hex(sram.origin), sram_size=hex(sram.size)),
        **headers,
    }
    for name, text in files.items():
        (folder / name).write_text(text)
    elf, binary = folder / "firmware.elf", folder / "firmware.bin"
    compiled = subprocess.run([GCC, *FLAGS, "-I", str(folder), "-T", str(folder / "linker.ld"), "-o", str(elf),
                               *(str(folder / s) for s in SOURCES), "-lgcc"], capture_output=True, text=True)
    if compiled.returncode != 0:
        raise ToolError(f"{GCC} failed on the SoC's firmware: {(compiled.stderr or compiled.stdout).strip()[:400]}")
    subprocess.run([OBJCOPY, "-O", "binary", str(elf), str(binary)], check=True, capture_output=True)
    if binary.stat().st_size > rom.size:
        raise ToolError(f"the SoC's firmware takes {binary.stat().st_size:,} bytes, more than its ROM's {rom.size:,}")
    return Firmware(folder, tuple(get_mem_data(str(binary), data_width=32, endianness="little")))
