"""The ECP5 boards' whole SoC side by side (`hlsgen deploy --board`, docs/deploy.md "ECP5 boards"): each model
built for ecp5_8x8, deployed to each board with the whole-SoC simulation and the bitstream, then run from the
host over the simulated board's UART (`hlsgen run DEPLOY --backend uart:...`). The models: the digits example
(its own top streams in and out, weights on chip) and MLPerf Tiny's visual-wake-words MobileNetV1 (0.25, 96x96:
its top reads 218 KB of weights and keeps its feature maps in the board's DRAM through its AXI4 masters; the
host uploads the weights once and packs each input into the feature-map image). Per model and board it prints:

- the SoC's resources against the part, the SoC clock and nextpnr's Fmax, and the deploy's wall time;
- cycles per inference in the whole-SoC simulation: the accelerator's (first input to last output beat), the
  firmware's with a stored image (its copy into DRAM, the registers, the wait, the read back), and a host
  request's (the firmware receiving the input from the UART, the inference, the answer; the simulated UART
  has no baud rate);
- the host link at the board's baud rate (the request's and answer's bytes, 10 bits each; the weights' upload
  once), and images/s at the SoC clock without and with it.

    python bench/soc.py [--models digits,vww_mobilenet_v1] [--boards ulx3s-85f,ecpix5-85f] [--no-bitstream]

With the bitstream each deploy takes 7-20 minutes (Yosys and nextpnr-ecp5); --no-bitstream skips it.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

import numpy as np  # noqa: E402
import onnx  # noqa: E402

from hlsgen import architectures  # noqa: E402
from hlsgen.cli import main  # noqa: E402
from hlsgen.deploy.boards import board as board_named  # noqa: E402
from hlsgen.deploy.soc_boards import SOC_BOARDS  # noqa: E402
from hlsgen.deploy.soc_deploy import simulated_board  # noqa: E402
from hlsgen.runtime import Accelerator  # noqa: E402
from hlsgen.runtime.uart import DeployedSoc  # noqa: E402

EXAMPLE = ROOT / "examples" / "digits"
# per model: the whole-SoC simulation's stored images and the host's requests over the simulated UART (a
# MobileNetV1 request moves 73 KB through the simulated UART: about a minute each)
IMAGES = {"digits": (16, 8), "vww_mobilenet_v1": (2, 2)}
PART = {"TRELLIS_COMB": "LUT4", "TRELLIS_FF": "FF", "DP16KD": "DP16KD", "MULT18X18D": "MULT18X18D"}


def link_bytes(deploy: DeployedSoc) -> int:
    """A request's bytes on the wire: 'R', the input, a '+' per block but the last; 'O', outputs, two counts."""
    data = 4 * deploy.in_words
    return 1 + data + (-(-data // deploy.block) - 1) + 1 + deploy.out_bytes + 8


def write_model(name: str, folder: Path) -> tuple[Path, Path, np.ndarray]:
    """The model, its calibration data and the host's samples."""
    if name == "digits":
        return EXAMPLE / "digits.onnx", EXAMPLE / "calib.npz", np.load(EXAMPLE / "test.npz")["image"]
    model = architectures.mobilenet_v1(alpha=0.25, size=96, classes=2)
    path, calib = folder / f"{name}.onnx", folder / f"{name}_calib.npz"
    onnx.save_model(model, str(path))
    data = architectures.calibration_data(model, n=32)
    np.savez(calib, **{model.graph.input[0].name: data})
    return path, calib, data[16:]


def bench_board(name: str, build: Path, folder: Path, bitstream: bool, simulated: int, samples: np.ndarray) -> dict:
    board = board_named(name)
    out = folder / f"{build.name}_{name}"
    start = time.perf_counter()
    argv = ["deploy", str(build), "--board", name, "-o", str(out), "--simulate", str(simulated), "-q"]
    assert main(argv + ([] if bitstream else ["--no-bitstream"])) == 0
    deploy_s = time.perf_counter() - start
    record = json.loads((out / "deploy.json").read_text())
    deploy = DeployedSoc.read(out)
    with simulated_board(build, board, folder / f"{out.name}_served") as (url, _):
        with Accelerator(out, f"uart:{url}") as accelerator:  # uploads the weights first, where the top reads them
            start = time.perf_counter()
            soc_cycles = []
            for sample in samples:
                accelerator.run(sample[None])
                soc_cycles.append(accelerator._device.last_soc_cycles)
            served_s = (time.perf_counter() - start) / len(samples)
    weights = deploy.weights.stat().st_size if deploy.weights else 0
    return {"board": board, "record": record, "deploy_s": deploy_s, "request_cycles": max(soc_cycles),
            "link_s": link_bytes(deploy) * 10 / deploy.baud, "link_bytes": link_bytes(deploy), "served_s": served_s,
            "weights": weights}


def report(model: str, rows: list[dict]) -> None:
    print(f"\n{model:44}" + "".join(f"{r['board'].name:>24}" for r in rows))

    def line(label: str, values) -> None:
        print(f"{label:44}" + "".join(f"{v:>24}" for v in values))

    line("part", [r["board"].part for r in rows])
    figures = [r["record"]["bitstream"] for r in rows]
    for key, short in PART.items():
        line(f"  {short} used / available",
             [f"{f['resources'][key][0]:,} / {f['resources'][key][1]:,}" if f else "-" for f in figures])
    line("SoC clock (MHz)", [f"{r['board'].sys_clk_mhz:g}" for r in rows])
    line("Fmax (MHz, nextpnr)", [f"{f['fmax_mhz']:.1f}" if f else "-" for f in figures])
    for f, r in zip(figures, rows):
        if f:
            print(f"  {r['board'].name}'s critical path (nextpnr): {f['critical_path']}")
    line("deploy wall time (s)", [f"{r['deploy_s']:.0f}" for r in rows])
    sims = [r["record"]["simulation"] for r in rows]
    line("accelerator cycles / inference", [f"{s['accelerator_cycles']:,}" for s in sims])
    line("SoC cycles / inference, stored image", [f"{s['soc_cycles']:,}" for s in sims])
    line("SoC cycles / host request (UART, no baud)", [f"{r['request_cycles']:,}" for r in rows])
    line("host link per request (bytes, baud, ms)",
         [f"{r['link_bytes']:,} B, {r['board'].baud / 1e6:g} M, {1e3 * r['link_s']:.2f} ms" for r in rows])
    line("weights uploaded once (bytes, s)",
         [f"{r['weights']:,} B, {r['weights'] * 10 / r['board'].baud:.2f} s" for r in rows])
    clocks = [r["board"].sys_clk_mhz * 1e6 for r in rows]
    line("images/s, stored image", [f"{c / s['soc_cycles']:,.0f}" for c, s in zip(clocks, sims)])
    line("images/s, from the host over the UART",
         [f"{1 / (r['link_s'] + r['request_cycles'] / c):,.0f}" for r, c in zip(rows, clocks)])
    line("simulated request, wall time (s)", [f"{r['served_s']:.2f}" for r in rows])


def run() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(IMAGES))
    parser.add_argument("--boards", default=",".join(b.name for b in SOC_BOARDS))
    parser.add_argument("--no-bitstream", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hlsgen-bench-soc-") as scratch:
        folder = Path(scratch)
        for model in args.models.split(","):
            path, calib, samples = write_model(model, folder)
            build = folder / f"{model}_ecp5"
            assert main(["build", str(path), "--target", "ecp5_8x8", "--program", "rom", "--calib", str(calib),
                         "-o", str(build), "-q"]) == 0
            simulated, requests = IMAGES[model]
            rows = []
            for name in args.boards.split(","):
                print(f"{model} on {name}: deploying{'' if args.no_bitstream else ' with the bitstream'} ...",
                      flush=True)
                rows.append(bench_board(name, build, folder, not args.no_bitstream, simulated, samples[:requests]))
            report(model, rows)


if __name__ == "__main__":
    run()
