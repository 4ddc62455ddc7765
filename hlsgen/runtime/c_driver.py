"""OUT/driver/ of a build with the target's top: the C driver (C99, docs/runtime.md "The C driver"), its
register header generated from hlsgen/rtl/control.py, the platform layers, this model's descriptor and
model.json (hlsgen.runtime.layout)."""
from __future__ import annotations

import json
from pathlib import Path

from ..resources import data_dir
from ..rtl import control
from ..templating import make_environment, render_with
from .layout import LAYOUT_FILE, ModelLayout

FOLDER = "driver"
STATIC = ("hlsgen_driver.h", "hlsgen_driver.c", "hlsgen_platform.h", "hlsgen_platform_baremetal.c",
          "hlsgen_platform_linux.h", "hlsgen_platform_linux.c")


def registers_header() -> str:
    """hlsgen_regs.h: the register map, as control.py defines it."""
    return render_with(make_environment(FOLDER), FOLDER, "hlsgen_regs.h.j2", registers=control.REGISTERS,
                       start=control.START, done=control.DONE, busy=control.BUSY, load=control.LOAD,
                       io_input=control.IO_INPUT, io_output=control.IO_OUTPUT, io_align=control.IO_ALIGN,
                       magic=control.MAGIC, version=control.VERSION)


def write_driver(folder: Path, layout: ModelLayout) -> list[Path]:
    """Write the driver for `layout` into `folder` (OUT/driver); returns the C sources an application compiles
    besides its platform layer."""
    folder.mkdir(parents=True, exist_ok=True)
    env = make_environment(FOLDER)
    for name in STATIC:
        (folder / name).write_bytes((data_dir("templates") / FOLDER / name).read_bytes())
    (folder / "hlsgen_regs.h").write_text(registers_header())
    for suffix in ("h", "c"):
        (folder / f"hlsgen_model_{layout.ident}.{suffix}").write_text(
            render_with(env, FOLDER, f"hlsgen_model.{suffix}.j2", layout=layout, ident=layout.ident))
    (folder / LAYOUT_FILE).write_text(json.dumps(layout.to_json(), indent=1) + "\n")
    return [folder / "hlsgen_driver.c", folder / f"hlsgen_model_{layout.ident}.c"]
