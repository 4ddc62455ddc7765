"""The `hlsgen boards` and `hlsgen deploy` commands (registered on the CLI group in hlsgen.cli)."""
from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from .boards import BOARDS, board
from .soc_boards import SOC_BOARDS, SocBoard
from .zynq import deploy as deploy_build

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


@click.command(short_help="List the boards `hlsgen deploy` supports.")
def boards() -> None:
    """List the boards `hlsgen deploy` supports: part, memory, the target to build for, what deploy makes."""
    for b in BOARDS:
        out.print(f"[bold]{b.name}[/]: {b.title}")
        out.print(f"  part        {b.part}, {b.memory}, {b.ps.title}")
        out.print(f"  build for   --target {b.target} --program external ({b.pl_clock_mhz:g} MHz)")
        out.print(f"  deploy      {b.makes}")
    for b in SOC_BOARDS:
        out.print(f"[bold]{b.name}[/]: {b.title}")
        out.print(f"  part        {b.part}, {b.memory}, no processing system: a LiteX SoC")
        out.print(f"  build for   --target {b.target} --program rom")
        out.print(f"  deploy      {b.makes}")


@click.command(short_help="Make what runs BUILD on a board: a Vivado project (Zynq) or a LiteX SoC bitstream (ECP5).")
@click.argument("build", metavar="BUILD")
@click.option("--board", "board_name", required=True, metavar="NAME", help="The board (see `hlsgen boards`).")
@click.option("-o", "--output", "output", required=True, metavar="DEPLOY",
              help="The deploy folder to write (new, or an earlier deploy folder, which is replaced).")
@click.option("--simulate", type=click.IntRange(1, 16), metavar="N",
              help="ECP5 boards: first run the whole SoC (CPU, firmware, DRAM, accelerator) in Verilator on the "
                   "first N stored test images; outputs not bit-exact with the integer reference: exit 5.")
@click.option("--no-bitstream", is_flag=True, help="ECP5 boards: write the SoC's gateware and its build script, but "
              "do not run Yosys and nextpnr (minutes) to make the bitstream.")
@click.option("-q", "--quiet", is_flag=True, help="Print only errors.")
def deploy(build: str, board_name: str, output: str, simulate: int | None, no_bitstream: bool, quiet: bool) -> None:
    """Write DEPLOY for running BUILD on a board (`hlsgen boards` lists them).

    Zynq boards: the RTL (no testbenches), the program and weight images, the model files the runtime reads,
    vivado/build.tcl (packages the RTL as an IP, builds the block design with the PS, makes the bitstream and
    .hwh), a PYNQ driver and a README. BUILD must be built for the board's part with --program external;
    otherwise exit 3 names the rebuild. A model partitioned between host and accelerator deploys whole: each
    segment checked so (the message names it), one RTL for all, images/<segment>/, and model/ with the host
    stages, which run on the board's CPU in onnxruntime.

    ECP5 boards: a LiteX SoC (VexRiscv running hlsgen's firmware, the board's DRAM, UART, the accelerator
    behind two DMAs), its firmware and, unless --no-bitstream, its bitstream (.bit, .svf) by Yosys and
    nextpnr-ecp5 with the board's pins and clock, and a README. BUILD must be built for --target ecp5_8x8
    with --program rom (the model's own top); otherwise exit 3 names the rebuild. On the board, the firmware
    runs the stored test images at reset, then serves `hlsgen run DEPLOY --backend uart:PORT`.

    A failed or interrupted deploy leaves DEPLOY as it was.
    """
    chosen = board(board_name)
    if isinstance(chosen, SocBoard):
        _deploy_soc(build, chosen, output, simulate, not no_bitstream, quiet)
        return
    if simulate is not None or no_bitstream:
        raise click.UsageError(f"--simulate and --no-bitstream apply to the ECP5 boards; {chosen.name}'s bitstream "
                               "is made by Vivado from the tcl deploy writes")
    result = deploy_build(Path(build), chosen, Path(output))
    if quiet:
        return
    for notice in result.notices:
        err.print(f"notice: {notice}", markup=False)
    out.print(f"wrote {result.out} for the {chosen.title}: {len(result.files)} files; make the bitstream with "
              f"`vivado -mode batch -source {result.out / 'vivado' / 'build.tcl'}` ({result.name}.bit/.hwh), "
              f"then see {result.out / 'README.md'}", markup=False)


def _deploy_soc(build: str, chosen: SocBoard, output: str, simulate: int | None, bitstream: bool,
                quiet: bool) -> None:
    import logging

    from ..progress import console_steps, silent
    from .soc_deploy import deploy_soc

    logging.disable(logging.INFO)  # LiteX logs every core it adds
    result = deploy_soc(Path(build), chosen, Path(output), simulate, bitstream, silent if quiet else console_steps(err))
    if quiet:
        return
    if result.simulation is not None:
        out.print(result.simulation.line(chosen), markup=False)
    if result.bitstream is not None:
        out.print(result.bitstream["summary"], markup=False)
    out.print(f"wrote {result.out} for the {chosen.title}: {len(result.files)} files; see {result.out / 'README.md'}",
              markup=False)
