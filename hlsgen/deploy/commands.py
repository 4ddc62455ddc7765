"""The `hlsgen boards` and `hlsgen deploy` commands (registered on the CLI group in hlsgen.cli)."""
from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from .boards import BOARDS, board
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


@click.command(short_help="Make a Vivado project tcl and a PYNQ driver for BUILD on a Zynq board.")
@click.argument("build", metavar="BUILD")
@click.option("--board", "board_name", required=True, metavar="NAME", help="The board (see `hlsgen boards`).")
@click.option("-o", "--output", "output", required=True, metavar="DEPLOY",
              help="The deploy folder to write (new, or an earlier deploy folder, which is replaced).")
@click.option("-q", "--quiet", is_flag=True, help="Print only errors.")
def deploy(build: str, board_name: str, output: str, quiet: bool) -> None:
    """Write DEPLOY for running BUILD on a Zynq board: the RTL (no testbenches), the program and weight
    images, the model files the runtime reads, vivado/build.tcl (packages the RTL as an IP, builds the
    block design with the PS, makes the bitstream and .hwh), a PYNQ driver and a README.

    BUILD must be built for the board's part with --program external (`hlsgen boards` names the target);
    otherwise exit 3 names the rebuild. A model partitioned between host and accelerator deploys whole: each
    segment checked so (the message names it), one RTL for all, images/<segment>/, and model/ with the host
    stages, which run on the board's CPU in onnxruntime. A failed or interrupted deploy leaves DEPLOY as it was.
    """
    chosen = board(board_name)
    result = deploy_build(Path(build), chosen, Path(output))
    if quiet:
        return
    for notice in result.notices:
        err.print(f"notice: {notice}", markup=False)
    out.print(f"wrote {result.out} for the {chosen.title}: {len(result.files)} files; make the bitstream with "
              f"`vivado -mode batch -source {result.out / 'vivado' / 'build.tcl'}` ({result.name}.bit/.hwh), "
              f"then see {result.out / 'README.md'}", markup=False)
