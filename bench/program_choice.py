"""Which top does `--program auto` choose? For every architecture of hlsgen/architectures.py on every shipped
target: the performance model's cycles per inference in the model's own top (`--program rom`) and in the
target's top (`--program external`, or why it cannot hold the model), and auto's choice (the target's top
when the model uses external memory anyway and the top costs at most OVERLAY_SLOWDOWN more cycles,
hlsgen.build.overlay_or_rom).

    python bench/program_choice.py [--models resnet8,...] [--targets systolic8x8,...]

Each model is quantized to 8 bits on a few of its own synthetic inputs (cycles do not depend on the ranges).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

import onnx  # noqa: E402

from hlsgen.architectures import ARCHITECTURES, calibration_data  # noqa: E402
from hlsgen.build import OVERLAY_SLOWDOWN, overlay_or_rom  # noqa: E402
from hlsgen.errors import HlsgenError  # noqa: E402
from hlsgen.frontend import read_onnx  # noqa: E402
from hlsgen.hw import load_target, map_model  # noqa: E402
from hlsgen.passes import optimize  # noqa: E402
from hlsgen.quant import BitConfig, quantize  # noqa: E402
from hlsgen.rtl.program import compile_program  # noqa: E402

TARGETS = ("systolic8x8", "systolic16x16", "systolic32x32")


def integer_graph(name: str):
    model = ARCHITECTURES[name]()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name}.onnx"
        onnx.save_model(model, str(path))
        graph = read_onnx(path)
    optimize(graph)
    calib = {graph.inputs[0]: calibration_data(model, n=4, seed=0)}
    return quantize(graph, calib, BitConfig(8, 8)).graph


def external_cycles(graph, target) -> tuple[int | None, str]:
    """The target's top's cycles, or None and why it cannot hold the model."""
    try:
        mapping = map_model(graph, target, program="external")
        compile_program(mapping, graph)
    except HlsgenError as exc:
        return None, str(exc)
    return mapping.cycles, ""


def bench(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(ARCHITECTURES))
    parser.add_argument("--targets", default=",".join(TARGETS))
    args = parser.parse_args(argv)
    print(f"auto takes the target's top at most {OVERLAY_SLOWDOWN:.0%} slower, when the model uses external memory")
    print(f"{'model':<22}{'target':<15}{'rom cycles':>13}{'external cycles':>17}{'extra':>9}  chosen")
    for name in args.models.split(","):
        graph = integer_graph(name)
        for target_name in args.targets.split(","):
            target = load_target(target_name)
            try:
                own = map_model(graph, target)
            except HlsgenError as exc:
                print(f"{name:<22}{target_name:<15}{'-':>13}{'-':>17}{'':>9}  none: {exc}", flush=True)
                continue
            cycles, why = external_cycles(graph, target)
            uses = own.weights_external or own.maps_external or own.input_in_dram
            chosen = overlay_or_rom(own, graph, target, []).program_external if uses else False
            extra = f"{cycles / own.cycles - 1:+.1%}" if cycles else ""
            print(f"{name:<22}{target_name:<15}{own.cycles:>13,}{f'{cycles:,}' if cycles else 'refused':>17}"
                  f"{extra:>9}  {'external' if chosen else 'rom'}{'' if uses else ' (all on chip)'}"
                  f"{f'  ({why})' if why else ''}", flush=True)

if __name__ == "__main__":
    bench()
