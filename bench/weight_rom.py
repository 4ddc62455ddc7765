"""Weight ROM bits of the RTL at 8 bits and with `--bits auto`: each layer's weights stored at the width
quantization chose for it (hlsgen/rtl/weight_rom.py).

    python bench/weight_rom.py [--models digits,residual,mobilenet] [--target systolic16x16] [--min-sqnr 20]

Each model (sim/models.py) is built twice with `hlsgen build` (`--bits 8`, then `--bits auto`: on the
example the default budget, a 1-point accuracy drop on its labelled calibration set; on the unlabelled zoo
models an output SQNR of `--min-sqnr` dB, below the default 30 that uniform 8 bits already misses there), and its
layer program is read back from the build folder and compiled for the RTL: the table gives the weights'
own bits (sum of weights x width, tiles padded to the array), the ROM's bits and the widths per array layer.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from hlsgen.build_folder import load_build  # noqa: E402
from hlsgen.cli import main  # noqa: E402
from hlsgen.hw import load_target  # noqa: E402
from hlsgen.hw.program_io import read_program  # noqa: E402
from hlsgen.rtl.program import ARRAY, compile_program  # noqa: E402

sys.path.insert(0, str(ROOT / "sim"))
from models import model_files  # noqa: E402


def rom_row(name: str, target: str, bits: str, min_sqnr: float, scratch: Path) -> dict:
    folder = scratch / f"{name}_{bits}"
    folder.mkdir()
    model, calib, _ = model_files(name, folder)
    out = folder / "build"
    budget = ["--min-sqnr", str(min_sqnr)] if bits == "auto" and name != "digits" else []
    if main(["build", str(model), "--target", target, "--calib", str(calib), "--bits", bits, *budget, "-o",
             str(out), "-q"]) != 0:
        raise SystemExit(f"hlsgen build failed on {name} --bits {bits}")
    graph = load_build(out).graph
    program = compile_program(read_program(out, graph, load_target(target)), graph)
    arrays = [layer for layer in program.layers if layer.kind == ARRAY]
    payload = sum(layer.fields["tr"] * layer.fields["tc"] * program.rows * program.cols * layer.fields["w_bits"]
                  for layer in arrays)
    return {"model": name, "bits": bits, "widths": [layer.fields["w_bits"] for layer in arrays],
            "weight_bits": payload, "rom_bits": program.weight_rom_bits}


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="digits,residual,mobilenet")
    parser.add_argument("--target", default="systolic16x16")
    parser.add_argument("--min-sqnr", type=float, default=20.0)
    args = parser.parse_args()
    print(f"{'model':10} {'bits':5} {'weight bits':>12} {'ROM bits':>10} {'vs 8-bit':>8}  layer widths")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            eight = None
            for bits in ("8", "auto"):
                row = rom_row(name, args.target, bits, args.min_sqnr, Path(tmp))
                eight = eight or row["rom_bits"]
                print(f"{name:10} {bits:5} {row['weight_bits']:12,} {row['rom_bits']:10,} "
                      f"{row['rom_bits'] / eight:8.1%}  {row['widths']}", flush=True)


if __name__ == "__main__":
    main_bench()
