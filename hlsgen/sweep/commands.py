"""The `hlsgen sweep` and `hlsgen regress` commands (registered on the CLI group in hlsgen.cli)."""
from __future__ import annotations

import contextlib
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..calibration import parse_input_range
from ..errors import Terminated, UsageError
from .flow import Calibration, failure, regression_models, run_sweep
from .grid import Axes, load_grid, parse_list, parse_verify
from .runner import Cluster

out = Console(highlight=False, soft_wrap=True)


def cluster_options(command):
    command = click.option("--workers", type=click.IntRange(min=1), default=None, metavar="N",
                           help="Worker processes of the embedded LocalCluster [default: one per core].")(command)
    command = click.option("--scheduler", default=None, metavar="tcp://HOST:PORT",
                           help="Run the tasks on this running dask.distributed scheduler's workers (each needs "
                                "only `pip install hlsgen`) instead of a LocalCluster on this machine.")(command)
    command = click.option("-q", "--quiet", is_flag=True, help="No progress bar and no table; errors only.")(command)
    return command


@click.command(short_help="Build every combination of targets, widths, batch and checks on a dask cluster.")
@click.argument("model_path", metavar="MODEL.onnx")
@click.option("--targets", default=None, metavar="A,B,...",
              help="Targets (names or .yaml paths) [default: systolic16x16].")
@click.option("--bits", default=None, metavar="4,6,8,auto", help="Bit-width settings [default: 8].")
@click.option("--batch", default=None, metavar="1,8,...", help="Images per run (throughput mode) [default: 1].")
@click.option("--verify", multiple=True, metavar="csim,rtl|none",
              help="Checks each build must pass bit-exact; repeat the option to sweep settings "
                   "(--verify none --verify csim).")
@click.option("--synth", is_flag=True, help="Also synthesize each build (hlsgen build --synth) for Fmax and resources.")
@click.option("--grid", "grid_path", default=None, metavar="GRID.yaml",
              help="Axes from YAML (targets, bits, batch, verify, synth: lists); command-line axes win.")
@click.option("--calib", default=None, metavar="CALIB.npz", help="Calibration inputs (optionally with labels).")
@click.option("--input-range", default=None, metavar="LO,HI", help="Without --calib: synthetic calibration range.")
@click.option("--max-accuracy-drop", type=click.FloatRange(0, 1), default=None, help="--bits auto budget (top-1 drop).")
@click.option("--min-sqnr", type=float, default=None, metavar="DB", help="--bits auto budget without labels (dB).")
@click.option("-o", "--output", "out_dir", default=None, metavar="SWEEP", help="Sweep folder [default: <model>_sweep].")
@cluster_options
def sweep(model_path, targets, bits, batch, verify, synth, grid_path, calib, input_range, max_accuracy_drop, min_sqnr,
          out_dir, scheduler, workers, quiet) -> None:
    """Build MODEL.onnx for every combination of the axes, each as one task on dask.distributed, and write
    SWEEP/results.csv (and .parquet), SWEEP/index.html (Pareto plots: latency against DSP and LUT, coloured
    by accuracy; a table linking each build's report) and SWEEP/junit.xml.

    A failing configuration is a row with its error and exit category. Rows are cached by content (model,
    calibration, target, options, hlsgen version) in SWEEP/rows/: a rerun builds only what changed, and an
    interrupted sweep resumes. Exits 0 when the sweep ran, however many configurations failed.
    """
    grid = load_grid(grid_path) if grid_path else {}
    axes = Axes(targets=parse_list(targets) if targets else grid.get("targets") or ("systolic16x16",),
                bits=parse_list(bits) if bits else grid.get("bits", ("8",)),
                batch=_batches(batch) if batch else grid.get("batch", (1,)),
                verify=parse_verify(verify) if verify else grid.get("verify", ((),)),
                synth=(True,) if synth else grid.get("synth", (False,)))
    calibration = Calibration(Path(calib) if calib else None, parse_input_range(input_range) if input_range else None,
                              max_accuracy_drop, min_sqnr)
    target = Path(out_dir or f"{Path(model_path).stem}_sweep")
    with _progress(quiet) as progress, _resumable(target):
        outcome = run_sweep([(Path(model_path), None)], axes, calibration, target, Cluster(scheduler, workers),
                            Path(model_path).name, progress)
    if not quiet:
        out.print(_summary(outcome.rows, f"sweep of {Path(model_path).name}"))
        out.print(f"{len(outcome.rows) - len(outcome.failed)} built, {len(outcome.failed)} failed; wrote "
                  + ", ".join(str(f) for f in outcome.files))


@click.command(short_help="Build and verify every model of a folder on every target; exit 0 only if all pass.")
@click.argument("models_dir", metavar="MODELS_DIR")
@click.option("--targets", default="systolic16x16", show_default=True, metavar="A,B,...",
              help="Targets (names or .yaml paths).")
@click.option("--bits", default="8", show_default=True, metavar="4,6,8,auto", help="Bit-width settings.")
@click.option("--verify", default="csim,rtl", show_default=True, metavar="csim,rtl",
              help="Checks every build must pass bit-exact.")
@click.option("--input-range", default=None, metavar="LO,HI",
              help="Calibration range for models without a <stem>.npz or calib.npz beside them.")
@click.option("-o", "--output", "out_dir", default=None, metavar="OUT",
              help="Results folder [default: <MODELS_DIR>_regress].")
@cluster_options
def regress(models_dir, targets, bits, verify, input_range, out_dir, scheduler, workers, quiet) -> None:
    """Build and verify (C-sim and RTL by default) every .onnx under MODELS_DIR on every target, each build a
    task on dask.distributed. A model is calibrated with `<stem>.npz` or `calib.npz` beside it.

    Writes OUT/results.csv, OUT/index.html and OUT/junit.xml (for CI systems) and prints a summary table.
    Exits 0 only when every build passed, else with the first failure's exit code. Cached like `sweep`.
    """
    folder = Path(models_dir)
    axes = Axes(targets=parse_list(targets), bits=parse_list(bits), verify=parse_verify((verify,)))
    calibration = Calibration(input_range=parse_input_range(input_range) if input_range else None)
    target = Path(out_dir or f"{folder.name or 'models'}_regress")
    with _progress(quiet) as progress, _resumable(target):
        outcome = run_sweep(regression_models(folder), axes, calibration, target, Cluster(scheduler, workers),
                            f"regression of {folder}", progress)
    if not quiet:
        out.print(_summary(outcome.rows, f"regression of {folder}"))
        out.print(f"{len(outcome.rows) - len(outcome.failed)} of {len(outcome.rows)} passed; wrote "
                  + ", ".join(str(f) for f in outcome.files))
    error = failure(outcome, target)
    if error is not None:
        raise error


def _batches(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(v) for v in parse_list(text))
    except ValueError:
        raise UsageError(f"--batch {text!r}: give image counts separated by commas (e.g. 1,8,32)") from None


@contextlib.contextmanager
def _progress(quiet: bool):
    """A bar on stderr: tasks done of all, with how many failed, came from the cache and run now."""
    console = Console(stderr=True, quiet=quiet, highlight=False)
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("{task.fields[state]}"), TimeElapsedColumn(), console=console, disable=quiet)
    task = bar.add_task("tasks", total=None, state="starting the cluster")

    def update(p) -> None:
        bar.update(task, total=p.total, completed=p.done,
                   state=f"{p.running} running, {p.failed} failed, {p.cached} cached")
    with bar:
        yield update


@contextlib.contextmanager
def _resumable(target: Path):
    """An interruption keeps the rows already written: say so (and how to go on) instead of 'nothing'."""
    try:
        yield
    except (KeyboardInterrupt, Terminated) as stop:
        kept = len(list((target / "rows").glob("*.json")))
        how = "interrupted" if isinstance(stop, KeyboardInterrupt) else "terminated"
        stop.args = (f"{how}: {kept} finished configuration(s) kept in {target / 'rows'}; the same command "
                     "computes the rest",)
        raise


def _summary(rows: list[dict], title: str) -> Table:
    table = Table(title=title, title_justify="left")
    for column in ("model", "target", "bits", "batch", "verify", "result", "latency us", "DSP", "LUT", "quality"):
        table.add_column(column, justify="left" if column in ("model", "target", "verify", "result") else "right",
                         overflow="fold")  # a narrow terminal wraps names instead of cutting them
    for r in rows:
        ok = r["status"] == "ok"
        quality = "" if not ok else (f"{r['int_accuracy']:.2%}" if r.get("int_accuracy") is not None
                                     else f"{r['sqnr_db']:.1f} dB")
        result = "[green]ok[/]" if ok else f"[red]exit {r['exit_code']} {r['category']}[/]: {r['error'][:90]}"
        table.add_row(Path(r["model"]).stem, r["target"], r["bits"], str(r["batch"]), r["verify"], result,
                      f"{r['latency_us']:,.2f}" if ok else "", f"{r['dsp']:,}" if ok else "",
                      f"{r['lut']:,}" if ok else "", quality)
    return table
