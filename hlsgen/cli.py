"""The `hlsgen` command line. Every user error ends in one line on stderr and a non-zero exit code."""
from __future__ import annotations

import os
import sys
import traceback

import click
from rich.console import Console
from rich.table import Table

from . import __version__
from .analysis import NodeCost
from .errors import HlsgenError
from .model import Model, load_onnx
from .npz_io import LABELS_KEY, read_npz, top1_accuracy, write_npz

INTERNAL_ERROR_EXIT = 70

out = Console(highlight=False)
err = Console(stderr=True, highlight=False)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="hlsgen")
def cli() -> None:
    """Compile an ONNX CNN into bit-exact HLS C++ and Verilog RTL for a systolic-array accelerator."""


@cli.command()
@click.argument("model_path", metavar="MODEL.onnx", type=click.Path(dir_okay=False))
def inspect(model_path: str) -> None:
    """Show the graph before and after optimization: nodes, shapes, params, MACs, passes that fired."""
    model = _load(model_path)
    out.print(_cost_table(f"{model.graph.name}: imported", model.costs()))
    optimized = model.optimize()
    out.print(_cost_table(f"{model.graph.name}: optimized", optimized.costs()))
    fired = [name for name, rounds in optimized.pass_log.fired.items() if rounds]
    if fired:
        out.print(f"passes fired ({optimized.pass_log.rounds} rounds to a fixpoint): " + ", ".join(fired))
    else:
        out.print("passes fired: none (the graph was already optimal)")


@cli.command()
@click.argument("model_path", metavar="MODEL.onnx", type=click.Path(dir_okay=False))
@click.option("--inputs", "inputs_path", required=True, type=click.Path(dir_okay=False),
              help="npz with one array per graph input (N samples along the batch axis).")
@click.option("-o", "--output", "output_path", required=True, type=click.Path(dir_okay=False),
              help="npz to write, one array per graph output.")
@click.option("--no-optimize", is_flag=True, help="Run the graph as imported, without the optimization passes.")
def run(model_path: str, inputs_path: str, output_path: str, no_optimize: bool) -> None:
    """Run the float reference on every sample of an npz and write the outputs."""
    model = _load(model_path)
    if not no_optimize:
        model = model.optimize()
    arrays = read_npz(inputs_path)
    results = model.run(arrays)
    write_npz(output_path, results)
    samples = next(iter(results.values())).shape[0]
    out.print(f"wrote {output_path}: {samples} sample(s), outputs {', '.join(results)}")
    if LABELS_KEY in arrays and len(results) == 1:
        accuracy = top1_accuracy(next(iter(results.values())), arrays[LABELS_KEY])
        out.print(f"top-1 accuracy against '{LABELS_KEY}': {accuracy:.2%}")


def _load(path: str) -> Model:
    model = load_onnx(path)
    for notice in model.graph.notices:
        err.print(f"notice: {notice}")
    return model


def _cost_table(title: str, costs: list[NodeCost]) -> Table:
    table = Table(title=title, title_justify="left")
    for column in ("node", "op", "output shape"):
        table.add_column(column)
    for column in ("params", "MACs"):
        table.add_column(column, justify="right")
    for c in costs:
        table.add_row(c.name, c.op, "x".join(map(str, c.output_shape)), f"{c.params:,}", f"{c.macs:,}")
    table.add_section()
    table.add_row(f"total: {len(costs)} nodes", "", "", f"{sum(c.params for c in costs):,}",
                  f"{sum(c.macs for c in costs):,}")
    return table


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the click group and turn exceptions into one-line messages and exit codes."""
    try:
        cli.main(args=argv, prog_name="hlsgen", standalone_mode=False)
        return 0
    except click.exceptions.Abort:
        err.print("aborted")
        return 130
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except HlsgenError as exc:
        err.print(f"error: {exc}", soft_wrap=True)
        return exc.exit_code
    except KeyboardInterrupt:
        err.print("interrupted")
        return 130
    except Exception as exc:  # a bug in hlsgen: say so without burying the user in a traceback
        if os.environ.get("HLSGEN_DEBUG"):
            traceback.print_exc()
        err.print(f"internal error: {type(exc).__name__}: {exc} (set HLSGEN_DEBUG=1 for a traceback, and please report it)",
                  soft_wrap=True)
        return INTERNAL_ERROR_EXIT


def entry_point() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry_point()
