"""The `hlsgen` command line. Every user error ends in one line on stderr and a non-zero exit code."""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
import traceback
import warnings
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from . import __version__
from .analysis import NodeCost
from .build import BuildOptions
from .partition.build import MAX_HOST_MACS
from .build import build as run_build
from .build_folder import load_build
from .calibration import parse_input_range
from .config import HLS_DESIGNS, MAX_BATCH, PROGRAM_RESIDENCIES, load_config
from .frontend.fold import parse_input_shapes
from .errors import (EXIT_CODES, INTERNAL_ERROR_EXIT, INTERRUPTED_EXIT, STOPPED, TERMINATED_EXIT, USAGE_EXIT,
                     HlsgenError, MismatchError, PathError, Terminated)
from .hls.verify import csim_build
from .hw import builtin_targets, load_target
from .model import Model, load_onnx
from .partition.page import partition_summary, write_partition_page
from .partition.whole import WholeModel, is_partitioned, segment_folder
from .runtime import BACKENDS, Accelerator
from .npz_io import LABELS_KEY, check_labels, read_npz, top1_accuracy, write_npz
from .progress import console_steps
from .report_page import record_verification, summarize, write_report_page
from .rtl.sim import sim_build_dir, simulate
from .synth_flow import MAX_SEEDS, synthesize_build

out = out_console = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)
SEEDS_HELP = ("Lattice targets: place and route with nextpnr placer seeds 1..N side by side (one per core) and "
              "keep the fastest routed design; report.json's synth.placement lists every seed's Fmax.")


EPILOG = "\b\nExit codes:\n" + "\n".join(f"  {code:>3}  {what}" for code, what in sorted(EXIT_CODES.items()))


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110}, epilog=EPILOG)
@click.version_option(__version__, prog_name="hlsgen")
def cli() -> None:
    """Compile an ONNX CNN into bit-exact HLS C++ and Verilog RTL for a systolic-array accelerator.

    Start with `hlsgen build MODEL.onnx --calib CALIB.npz --verify csim,rtl`; `hlsgen COMMAND --help`
    documents each command.
    """


INPUT_SHAPE_HELP = ("Fix a dynamic input's shape, e.g. input:1x3x480x640 (repeatable): the exporter's shape code "
                    "then folds away.")


@cli.command(short_help="Show the graph before and after optimization.")
@click.argument("model_path", metavar="MODEL.onnx")
@click.option("--input-shape", "input_shape", multiple=True, metavar="NAME:1x3xHxW", help=INPUT_SHAPE_HELP)
def inspect(model_path: str, input_shape: tuple[str, ...]) -> None:
    """Show the graph before and after optimization: nodes, shapes, params, MACs, passes that fired."""
    model = _load(model_path, input_shape)
    out.print(_cost_table(f"{model.graph.name}: imported", model.costs()))
    optimized = model.optimize()
    out.print(_cost_table(f"{model.graph.name}: optimized", optimized.costs()))
    fired = [name for name, rounds in optimized.pass_log.fired.items() if rounds]
    if fired:
        out.print(f"passes fired ({optimized.pass_log.rounds} rounds to a fixpoint): " + ", ".join(fired))
    else:
        out.print("passes fired: none (the graph was already optimal)")


def _backend(ctx, param, value: str) -> str:
    if value in BACKENDS or (value.startswith("uart:") and len(value) > len("uart:")):
        return value
    raise click.BadParameter(f"{value!r}: choose one of {', '.join(BACKENDS)}, or uart:PORT (uart:/dev/ttyUSB0)")


@cli.command()
@click.argument("model_path", metavar="MODEL.onnx|BUILD|DEPLOY")
@click.option("--inputs", "inputs_path", required=True, metavar="IN.npz",
              help="npz with one array per graph input (N samples along the batch axis).")
@click.option("-o", "--output", "output_path", required=True, metavar="OUT.npz",
              help="npz to write, one array per graph output.")
@click.option("--no-optimize", is_flag=True, help="ONNX models: run the graph as imported, without the passes.")
@click.option("--raw", is_flag=True, help="Build folders: write the integer outputs instead of dequantized ones.")
@click.option("--backend", callback=_backend, default="reference", show_default=True,
              metavar="[" + "|".join(BACKENDS) + "|uart:PORT]",
              help="Build folders: what runs the accelerator's segments: the integer reference, the g++-compiled "
                   "HLS C++ (csim) or the Verilated RTL (rtl), each proven bit-exact as it runs, or a PYNQ board "
                   "(pynq; run on the board); host ops in between. A build with the target's top (--program "
                   "external) runs on rtl as on a board: the driver's register sequence against the Verilated top. "
                   "uart:PORT runs an ECP5 board's deploy folder (hlsgen deploy --board ulx3s-85f|ecpix5-85f) on "
                   "the board behind serial port PORT (uart:/dev/ttyUSB0), or on its simulation "
                   "(uart:socket://HOST:N).")
@click.option("--input-shape", "input_shape", multiple=True, metavar="NAME:1x3xHxW",
              help="ONNX models: " + INPUT_SHAPE_HELP)
def run(model_path: str, inputs_path: str, output_path: str, no_optimize: bool, raw: bool, backend: str,
        input_shape: tuple[str, ...]) -> None:
    """Run a reference on every sample of an npz and write the outputs.

    An ONNX file runs the float reference; a build folder (from `hlsgen build`) runs the whole model: its
    host stages in float and its accelerator segments on --backend (default: the integer reference).
    """
    if input_shape and Path(model_path).is_dir():
        raise click.UsageError("--input-shape applies to ONNX models; a build folder's shapes are fixed")
    if (Path(model_path) / "deploy.json").is_file() and not backend.startswith("uart:"):
        on_board = ("with --backend uart:PORT" if '"host"' in (Path(model_path) / "deploy.json").read_text()
                    else "as its README says")
        raise click.UsageError(f"{model_path} is a deploy folder: run it on its board {on_board}, or run the build "
                               "it was deployed from")
    arrays = read_npz(inputs_path)
    if backend != "reference" and not Path(model_path).is_dir():
        raise click.UsageError("--backend applies to build folders; an ONNX file runs the float reference")
    if Path(model_path).is_dir() and (is_partitioned(Path(model_path)) or backend != "reference"):
        if raw:
            raise click.UsageError("--raw writes one integer program's outputs: not with --backend csim|rtl or a "
                                   "model partitioned between host and accelerator (run a segment's folder)")
        with Accelerator(Path(model_path), backend) as accelerator:
            results = accelerator.run(arrays)
            if accelerator.last_cycles:
                span = "first input to last output beat" if backend.startswith("uart:") else "CONTROL.start to DONE"
                out.print(f"{backend}: the device's last inference took {accelerator.last_cycles:,} cycles ({span})")
    elif Path(model_path).is_dir():
        quantized = load_build(Path(model_path))
        _warn_out_of_range(quantized.range_warnings(arrays))
        if raw:
            int_out = quantized.run_int(quantized.quantize_inputs(arrays))
            results = dict(zip(quantized.float_graph.outputs, int_out.values()))
        else:
            results = quantized.run(arrays)
    else:
        if raw:
            raise click.UsageError("--raw applies to build folders (integer reference), not ONNX files")
        model = _load(model_path, input_shape)
        results = (model if no_optimize else model.optimize()).run(arrays)
    samples = next(iter(results.values())).shape[0]
    accuracy = None
    if LABELS_KEY in arrays and len(results) == 1 and not raw:  # bad labels fail before OUT.npz is written
        accuracy = top1_accuracy(next(iter(results.values())), check_labels(arrays[LABELS_KEY], samples, inputs_path))
    write_npz(output_path, results)
    out.print(f"wrote {output_path}: {samples} sample(s), outputs {', '.join(results)}")
    if accuracy is not None:
        out.print(f"top-1 accuracy against '{LABELS_KEY}': {accuracy:.2%}")


@cli.command(short_help="Quantize, map, write HLS C++ and RTL, --verify them.")
@click.argument("model_path", metavar="MODEL.onnx")
@click.option("--target", default="systolic16x16", show_default=True, metavar="NAME|FILE.yaml",
              help="A built-in target (see `hlsgen targets`) or a path to a target .yaml.")
@click.option("-o", "--output", "out", default=None, metavar="OUT",
              help="Build folder [default: <model>_<target>].")
@click.option("--calib", default=None, metavar="CALIB.npz",
              help="npz of calibration inputs (the `hlsgen run` convention), optionally with `labels`.")
@click.option("--input-range", default=None, metavar="LO,HI",
              help="Without --calib: the float input range to draw synthetic calibration samples from (e.g. 0,1 or "
                   "0,255); ranges and quality then come from synthetic data.")
@click.option("--bits", default="8", show_default=True, metavar="2..8|auto", help="Uniform width 2..8 (e.g. 8, 6, 4) or 'auto'.")
@click.option("--max-accuracy-drop", type=click.FloatRange(0, 1), default=None,
              help="--bits auto budget: largest top-1 accuracy drop on the labelled calibration set (0.01 = 1 point).")
@click.option("--min-sqnr", "min_sqnr", type=float, default=None, metavar="DB",
              help="--bits auto budget without labels: smallest output SQNR against float, in dB.")
@click.option("--verify", default="", metavar="csim,rtl", help="Comma-separated checks that must be bit-exact before OUT is written: "
                                           "csim (g++ C simulation), rtl (Verilator simulation).")
@click.option("--dump-ir", is_flag=True, help="Also write the layer program and the loop IR as text (OUT/program.txt, "
              "OUT/loop_ir.txt).")
@click.option("--hls-design", type=click.Choice(HLS_DESIGNS), default="auto", show_default=True,
              help="overlay: the target's accelerator, one RxC array sequenced by the layer program (what "
                   "report.json and the RTL describe); dataflow: one process per layer, each with its own array; "
                   "auto: the overlay, or dataflow (with a notice) where the overlay's units cannot run a layer.")
@click.option("--program", type=click.Choice(PROGRAM_RESIDENCIES), default="auto", show_default=True,
              help="Where the RTL's layer table lives: rom (in the generated top), external (OUT/rtl/program.bin, "
                   "read over AXI4 on CONTROL.load; every weight then streams from external memory); auto: external when the model uses external memory "
                   "anyway and the target's top holds it, else rom.")
@click.option("--batch", type=click.IntRange(1, MAX_BATCH), default=1, show_default=True, metavar="N",
              help="Images per run (throughput mode): the convolutions run image by image, the Dense tail once for "
                   "the N images, each weight tile loaded once for all N; 1: latency mode.")
@click.option("--synth", is_flag=True, help="Also synthesize the RTL with Yosys (Lattice targets: and place and route "
              "it with nextpnr): measured resources and Fmax in report.json, logs in OUT/synth/ (`hlsgen synth`).")
@click.option("--bitstream", is_flag=True, help="Lattice targets: also write OUT/synth/<top>.bit and its .lpf "
              "(implies --synth).")
@click.option("--seeds", type=click.IntRange(1, MAX_SEEDS), default=1, show_default=True, metavar="N",
              help=SEEDS_HELP)
@click.option("--accelerator-only", is_flag=True,
              help="Refuse a model the accelerator cannot run whole, naming the nodes it refuses (no host/accelerator "
                   "partition).")
@click.option("--max-host-macs", type=click.FloatRange(0, 100), default=MAX_HOST_MACS * 100, show_default=True,
              metavar="PCT", help="Refuse a partition that leaves more than PCT percent of the model's MACs to the host.")
@click.option("--input-shape", "input_shape", multiple=True, metavar="NAME:1x3xHxW", help=INPUT_SHAPE_HELP)
@click.option("--config", "config_path", default=None, metavar="CONFIG.yaml",
              help="YAML file of build options and per-layer overrides (command-line options win).")
@click.option("-q", "--quiet", is_flag=True, help="Print only errors.")
@click.option("--json", "as_json", is_flag=True, help="Print only a machine-readable JSON summary on stdout.")
@click.pass_context
def build(ctx, model_path, target, out, calib, input_range, bits, max_accuracy_drop, min_sqnr, verify, dump_ir,
          hls_design, program, batch, synth, bitstream, seeds, accelerator_only, max_host_macs, input_shape,
          config_path, quiet, as_json) -> None:
    """The whole flow: import, optimize, calibrate and quantize MODEL.onnx, map it onto the target, render
    the HLS C++ and the RTL, and write the build folder OUT (quant.json, report.json, report.html,
    config.yaml, hls/, rtl/, model_qdq.onnx, ...).

    With --verify csim,rtl the C++ (g++) and the RTL (Verilator) must be bit-exact against the integer
    reference before OUT is written. A failed or interrupted build leaves OUT as it was.
    """

    config = load_config(config_path) if config_path else {}

    def option(name: str, key: str, value):
        """The command line wins over the config file, which wins over the default."""
        explicit = ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT
        return value if explicit or key not in config else config[key]

    verify_list = option("verify", "verify", [v.strip() for v in verify.split(",") if v.strip()])
    bad = sorted(set(verify_list) - {"csim", "rtl"})
    if bad:
        raise click.UsageError(f"--verify takes csim and/or rtl, not {', '.join(bad)}")
    if seeds > 1 and not (synth or bitstream):
        raise click.UsageError("--seeds N places and routes N times: it needs --synth or --bitstream")
    out_path, calib_path = option("out", "output", out), option("calib", "calib", calib)
    range_text = option("input_range", "input_range", input_range)
    options = BuildOptions(
        Path(model_path), str(option("target", "target", target)), Path(out_path) if out_path else None,
        Path(calib_path) if calib_path else None, str(option("bits", "bits", bits)),
        option("max_accuracy_drop", "max_accuracy_drop", max_accuracy_drop), option("min_sqnr", "min_sqnr", min_sqnr),
        input_range=parse_input_range(str(range_text)) if range_text else None,
        dump_ir=bool(option("dump_ir", "dump_ir", dump_ir)), verify=tuple(verify_list),
        hls_design=str(option("hls_design", "hls_design", hls_design)),
        program=str(option("program", "program", program)), batch=int(option("batch", "batch", batch)),
        synth=synth, bitstream=bitstream, seeds=seeds,
        accelerator_only=bool(option("accelerator_only", "accelerator_only", accelerator_only)),
        max_host_macs=float(option("max_host_macs", "max_host_macs", max_host_macs)) / 100,
        layers=tuple((k, tuple(sorted(v.items()))) for k, v in (config.get("layers") or {}).items()),
        input_shapes=tuple({**config.get("input_shape", {}), **parse_input_shapes(input_shape)}.items()),
    )
    console = _progress_console(quiet, as_json)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = run_build(options, console_steps(console))
    if as_json:
        _print_json(_build_summary(result))
        return
    if result.partition is not None and not quiet:
        out_console.print(result.partition.summary(), markup=False)
    for notice in result.notices:
        console.print(f"notice: {notice}", markup=False)
    for warning in result.warnings:
        console.print(f"[yellow]warning:[/] {escape(warning)}")
    if result.bits_table and not quiet:
        out_console.print(result.bits_table)
    if not quiet:
        quality = result.quality
        line = ", ".join(f"SQNR {k} {v:.1f} dB" for k, v in quality["sqnr_db"].items())
        if "int_accuracy" in quality:
            line += f", top-1 float {quality['float_accuracy']:.2%} -> int {quality['int_accuracy']:.2%}"
        line += f" (measured on {quality['data']})"
        out_console.print(f"built {result.out} for {result.target.name}: {line}")
        if result.mapping is not None:
            m = result.mapping
            per = (f"per run of {m.images} images ({m.cycles // m.images:,} per image) " if m.images > 1
                   else "per inference ")
            out_console.print(f"performance model: {m.cycles:,} cycles {per}"
                              f"({m.cycles / result.target.clock_mhz:,.1f} us at {result.target.clock_mhz:g} MHz, "
                              f"{m.images * result.target.clock_mhz * 1e6 / m.cycles:,.0f} images/s), "
                              f"PE utilization {m.utilization:.1%}; per layer in {result.out / 'report.json'}")
        for check, details in result.verified.items():
            out_console.print(f"verified {check}: bit-exact, {details}")
        if result.synth is not None:
            out_console.print(_synth_summary(result.synth), markup=False)


def _build_summary(result) -> dict:
    """What `hlsgen build --json` prints."""
    summary = {"out": str(result.out), "target": result.target.name, "quality": result.quality,
               "warnings": result.warnings, "notices": result.notices}
    summary["verified"] = {check: {"bit_exact": True, "details": details} for check, details in result.verified.items()}
    if result.synth is not None:
        summary["synth"] = result.synth
    if result.mapping is not None:
        summary["performance"] = {"cycles": result.mapping.cycles, "batch": result.mapping.images,
                                  "utilization": round(result.mapping.utilization, 4)}
    return summary


@contextlib.contextmanager
def _verdict(out: Path, check: str):
    """Record a simulation's verdict in OUT/report.json and report.html, pass or fail."""

    try:
        yield
    except MismatchError as exc:
        record_verification(out, check, False, str(exc))
        raise
    record_verification(out, check, True, "bit-exact against the integer reference")


@cli.command(short_help="Regenerate BUILD/report.html, print a summary.")
@click.argument("out", metavar="BUILD")
@click.option("-q", "--quiet", is_flag=True, help="Print only errors.")
def report(out: str, quiet: bool) -> None:
    """Regenerate BUILD/report.html from the build folder and print a text summary."""

    if is_partitioned(Path(out)):
        path = write_partition_page(Path(out))
        if not quiet:
            out_console.print(partition_summary(Path(out)))
            out_console.print(f"wrote {path}")
        return
    path = write_report_page(Path(out))
    if not quiet:
        out_console.print(summarize(Path(out)))
        out_console.print(f"wrote {path}")


@cli.command(short_help="Synthesize BUILD's RTL (and place, route, --bitstream on Lattice targets).")
@click.argument("out", metavar="BUILD")
@click.option("--bitstream", is_flag=True, help="Lattice targets: also write BUILD/synth/<top>.bit and its .lpf.")
@click.option("--seeds", type=click.IntRange(1, MAX_SEEDS), default=1, show_default=True, metavar="N",
              help=SEEDS_HELP)
@click.option("-q", "--quiet", is_flag=True, help="Print only errors.")
@click.option("--json", "as_json", is_flag=True, help="Print only report.json's `synth` on stdout.")
def synth(out: str, bitstream: bool, seeds: int, quiet: bool, as_json: bool) -> None:
    """Synthesize BUILD's RTL with open tools for its target's device family: Yosys synth_xilinx on Xilinx
    targets (resources; no Fmax without a router), synth_ecp5 then nextpnr-ecp5 on ECP5 targets (resources
    and Fmax after routing, the critical path; --bitstream: ecppack). Results go into BUILD/report.json
    (`synth`, and the times at the measured Fmax) and report.html; the tool logs into BUILD/synth/. Timing
    not met is reported, not an error; a failed or interrupted run leaves BUILD as it was."""
    result = synthesize_build(Path(out), bitstream, console_steps(_progress_console(quiet, as_json)), seeds)
    if as_json:
        _print_json(result)
    elif not quiet:
        out_console.print(_synth_summary(result), markup=False)
        out_console.print(f"logs in {Path(out) / 'synth'}; report in {Path(out) / 'report.html'}", markup=False)


def _synth_summary(synth: dict) -> str:
    """Measured against estimated resources, and the timing, on a few lines."""
    measured, estimated, device = synth["measured"], synth["estimated"], synth["device"]
    cells = ", ".join(f"{measured[k]:,} {k.upper()} (estimate {estimated[k]:,}, device {device[k]:,})"
                      for k in ("lut", "ff", "dsp", "bram"))
    lines = [f"{synth['flow']} on {synth['part']}: {cells}"]
    if synth["fmax_mhz"] is None:
        lines.append(f"Fmax: not measured ({synth['flow']} has no place and route); times stay at the target's "
                     f"{synth['clock_target_mhz']:g} MHz")
    else:
        verdict = "met" if synth["timing_met"] else "NOT met"
        path = synth["critical_path"]
        placement = synth["placement"]
        best = (f", the best of placer seeds 1..{len(placement['seeds'])}: seed {placement['chosen']}"
                if placement and len(placement["seeds"]) > 1 else "")
        lines.append(f"Fmax {synth['fmax_mhz']:g} MHz after routing{best} (target {synth['clock_target_mhz']:g} MHz: "
                     f"timing {verdict})" + (f"; critical path {path['from']} -> {path['to']}, {path['ns']:g} ns"
                                             if path else ""))
    if synth["bitstream"]:
        lines.append(f"bitstream {synth['bitstream']}, constraints {synth['constraints']}")
    return "\n".join(lines)


@cli.command(short_help="C-simulate BUILD/hls/ with g++: bit-exact or exit 5.")
@click.argument("out", metavar="BUILD")
@click.option("--inputs", "inputs_path", default=None, metavar="IN.npz",
              help="npz of real inputs (the `hlsgen run` convention) [default: the test vectors stored with the build].")
@click.option("--portable", is_flag=True,
              help="Compile against hlsgen's portable ap_int headers even when vendor headers are installed "
                   "(also: HLSGEN_CSIM_PORTABLE=1).")
@click.option("-q", "--quiet", is_flag=True, help="Print only errors.")
@click.option("--json", "as_json", is_flag=True, help="Print only a machine-readable JSON summary on stdout.")
def csim(out: str, inputs_path: str | None, portable: bool, quiet: bool, as_json: bool) -> None:
    """C-simulate BUILD/hls/ with g++: exit 0 only if every output integer equals the integer reference
    (exit 5 names the first differing layer, image and element)."""

    if is_partitioned(Path(out)):
        _check_segments(Path(out), "csim", inputs_path, quiet, as_json)
        return
    _warn_inputs_of(out, inputs_path, quiet or as_json)
    with _verdict(Path(out), "csim"):
        result = csim_build(Path(out), Path(inputs_path) if inputs_path else None, portable,
                            step=console_steps(_progress_console(quiet, as_json)))
    if as_json:
        _print_json({"check": "csim", "bit_exact": True, "output_integers": result.compared,
                     "samples": result.samples, "headers": result.headers.description,
                     "compile_s": round(result.compile_seconds, 2), "run_s": round(result.run_seconds, 3)})
    elif not quiet:
        out_console.print(f"csim: bit-exact: {result.compared:,} output integers of {result.samples:,} sample(s) "
                          f"equal the integer reference ({result.headers.description}; compile "
                          f"{result.compile_seconds:.1f} s, run {result.run_seconds:.2f} s)")


def _check_segments(out: Path, check: str, inputs_path: str | None, quiet: bool, as_json: bool,
                    images: int | None = None) -> None:
    """csim/sim of a partitioned build: every segment bit-exact, on its stored test vectors, or with --inputs
    on the segments' inputs as the whole model computes them (host stages in float)."""
    whole = WholeModel(out)
    step = console_steps(_progress_console(quiet, as_json))
    proven = {}
    if inputs_path:
        arrays = read_npz(inputs_path)
        if images is not None:
            arrays = {k: v[:images] for k, v in arrays.items()}
        whole.run(arrays, check if check == "csim" else "rtl")
        proven = {s.name: "on the whole model's data" for s in whole.partition.segments}
    else:
        for segment in whole.partition.segments:
            folder = segment_folder(out, segment.name)
            if check == "csim":
                with _verdict(folder, "csim"):
                    result = csim_build(folder, step=lambda label: step(f"{segment.name}: {label}"))
                proven[segment.name] = f"{result.compared:,} output integers of {result.samples} sample(s)"
            else:
                if not (folder / "rtl").is_dir():
                    raise click.UsageError(f"{segment.name} has no Verilog RTL (its build says why: {folder / 'report.json'}"
                                     " designs.rtl); `hlsgen csim` checks its C++")
                with _verdict(folder, "rtl"):
                    result = simulate(folder, None, images, sim_build_dir(),
                                      step=lambda label: step(f"{segment.name}: {label}"))
                proven[segment.name] = (f"{result.compared:,} output integers of {result.images} image(s), "
                                        f"{result.cycles_per_inference:,} cycles")
    if as_json:
        _print_json({"check": check, "bit_exact": True, "segments": proven})
    elif not quiet:
        for name, what in proven.items():
            out_console.print(f"{check}: {name} bit-exact: {what}")


@cli.command(short_help="Simulate BUILD's RTL with Verilator: bit-exact or exit 5.")
@click.argument("out", metavar="BUILD")
@click.option("--inputs", "inputs_path", default=None, metavar="IN.npz",
              help="npz of real inputs (the `hlsgen run` convention) [default: the test vectors stored with the build].")
@click.option("--images", type=click.IntRange(min=1), default=None, help="Simulate only the first N images.")
@click.option("--backpressure", is_flag=True,
              help="The DRAM model (AXI RAM) also pauses a random half of the beats on every channel.")
@click.option("-q", "--quiet", is_flag=True, help="Print only errors.")
@click.option("--json", "as_json", is_flag=True, help="Print only a machine-readable JSON summary on stdout.")
def sim(out: str, inputs_path: str | None, images: int | None, backpressure: bool, quiet: bool, as_json: bool) -> None:
    """Simulate BUILD's Verilog RTL with Verilator: exit 0 only if every output integer equals the integer
    reference (exit 5 names the first differing layer, image and element); records the RTL's cycles in
    BUILD/report.json."""

    if is_partitioned(Path(out)):
        _check_segments(Path(out), "rtl", inputs_path, quiet, as_json, images)
        return
    _warn_inputs_of(out, inputs_path, quiet or as_json)
    with _verdict(Path(out), "rtl"):
        result = simulate(Path(out), Path(inputs_path) if inputs_path else None, images, sim_build_dir(),
                          step=console_steps(_progress_console(quiet, as_json)), backpressure=backpressure)
    gap = (result.cycles_per_inference - result.model_cycles) / result.model_cycles
    if as_json:
        _print_json({"check": "rtl", "bit_exact": True, "output_integers": result.compared, "images": result.images,
                     "cycles_per_inference": result.cycles_per_inference, "cycles_model": result.model_cycles,
                     "batch": result.batch,
                     "verilator_build_s": round(result.build_seconds, 2), "run_s": round(result.run_seconds, 2)})
    elif not quiet:
        out_console.print(f"rtl: bit-exact: {result.compared:,} output integers of {result.images:,} image(s) "
                          "equal the integer reference")
        per = "inference" if result.batch == 1 else f"run of {result.batch} images"
        out_console.print(f"rtl: {result.cycles_per_inference:,} cycles per {per} (performance model "
                          f"{result.model_cycles:,}, {gap:+.1%}); Verilator build {result.build_seconds:.1f} s, "
                          f"simulation {result.run_seconds:.1f} s; per layer in {Path(out) / 'report.json'}")


@cli.command(short_help="Differential fuzzing: random models through float, C-sim and RTL checks.")
@click.option("--seed", type=int, default=0, show_default=True, help="The first model's seed (models seed..seed+N-1).")
@click.option("--count", type=click.IntRange(min=0), default=100, show_default=True, help="How many random models.")
@click.option("--mutants", type=click.IntRange(min=0), default=0, show_default=True,
              help="Also run this many mutated input files (ONNX, calibration, target, config) through the CLI: "
                   "each must end in its category's exit code and one line.")
@click.option("--profile", type=click.Choice(["ci", "long"]), default="ci", show_default=True,
              help="ci: small models (a few seconds each); long: the full ranges (kernels to 11, channels and "
                   "sides to 300).")
@click.option("--rtl", is_flag=True, help="Also simulate every model's RTL with Verilator (slow).")
@click.option("--rtl-every", type=click.IntRange(min=0), default=0, metavar="K",
              help="Also simulate the RTL of every K-th model (the first included).")
@click.option("--target", default=None, metavar="NAME|FILE.yaml", help="Build every model for this target instead "
              "of a random one.")
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True, help="Models checked at once.")
@click.option("--timeout", type=click.FloatRange(min=1), default=300, show_default=True,
              help="Seconds one model may take before it counts as a crash.")
@click.option("--out", "out_dir", default="fuzz-failures", show_default=True, metavar="DIR",
              help="Where the shrunk reproducers of failures go (DIR/<seed>-<index>/).")
@click.option("--portable", is_flag=True, help="C-simulate the models without RTL against hlsgen's portable ap_int "
              "headers (compiles ~7x faster) instead of the vendor's.")
@click.option("--replay", default=None, metavar="SPEC.json", help="Check the one model a reproducer's spec.json "
              "describes and print its outcome.")
def fuzz(seed, count, mutants, profile, rtl, rtl_every, target, jobs, timeout, out_dir, portable, replay) -> None:
    """Generate random valid CNNs and check each: hlsgen's float reference against onnxruntime (1e-4), then
    `hlsgen build --verify csim` (and rtl): integer reference, C-sim and RTL bit for bit. A failure is shrunk
    to a small model saved with its inputs, target and the command that replays it. Exits 0 only when no
    model mismatched or crashed (a clean rejection is counted, not failed)."""
    from .fuzz.campaign import fuzz_models
    from .fuzz.runner import run_all
    from .fuzz.spec import ModelSpec

    if replay is not None:
        spec = ModelSpec.from_json(Path(replay).read_text())
        with tempfile.TemporaryDirectory(prefix="hlsgen-replay-") as root:
            result = run_all([(spec, rtl)], Path(root), 1, timeout, portable=portable)[0]
        out.print(f"seed {spec.seed}: {result.outcome}{f' ({result.stage})' if result.stage else ''} {result.message}")
        if result.outcome in ("mismatch", "crash"):
            raise MismatchError(f"seed {spec.seed}: {result.outcome}: {result.message}")
        return
    done = []

    def progress(result) -> None:
        done.append(result)
        bad = sum(r.outcome in ("mismatch", "crash") for r in done)
        err.print(f"[{len(done)}/{count}] seed {result.seed}: {result.outcome} ({result.seconds:.1f} s)"
                  f"{'  ' + result.message[:120] if result.outcome != 'ok' else ''}  [{bad} failing so far]",
                  highlight=False)

    summary = fuzz_models(seed, count, profile, 1 if rtl else rtl_every, target, jobs, Path(out_dir), timeout,
                          progress=progress, portable=portable)
    if count:
        out.print(_fuzz_table(summary, f"hlsgen fuzz: seeds {seed}..{seed + count - 1}, profile {profile}"))
    for reason, seeds in summary.rejects():
        out.print(f"rejected x{len(seeds)}: {reason} (seeds {' '.join(map(str, seeds[:10]))}"
                  f"{' ...' if len(seeds) > 10 else ''})")
    for failure in summary.failures:
        out.print(f"[red]{failure.result.outcome}[/] seed {failure.result.seed}: {failure.result.message}")
        out.print(f"  shrunk to {failure.folder} ({failure.shrunk.outcome}: {failure.shrunk.message}); "
                  f"replay: sh {failure.folder / 'replay.sh'}")
    bad_inputs = _fuzz_inputs(seed, mutants, jobs, Path(out_dir)) if mutants else 0
    if not summary.clean or bad_inputs:
        counts = summary.counts()
        raise MismatchError(f"{counts['mismatch']} mismatch(es) and {counts['crash']} crash(es) in {count} models, "
                            f"{bad_inputs} failing of {mutants} mutated inputs; reproducers in {out_dir}/")


def _fuzz_table(summary, title: str) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("outcome")
    table.add_column("models", justify="right")
    table.add_column("seeds")
    for outcome, number in summary.counts().items():
        seeds = [r.seed for r in summary.results if r.outcome == outcome]
        table.add_row(outcome, str(number), "" if outcome == "ok" else " ".join(map(str, seeds)))
    return table


def _fuzz_inputs(seed: int, count: int, jobs: int, out_dir: Path) -> int:
    """`count` mutated inputs (hlsgen.fuzz.inputs); their failures' reproducers are copied to OUT_DIR/inputs/."""
    from .fuzz.inputs import fuzz_inputs

    with tempfile.TemporaryDirectory(prefix="hlsgen-fuzz-inputs-") as work:
        summary = fuzz_inputs(seed, count, Path(work), main, jobs)
        kept = []
        for folder in summary.failures:
            kept.append(out_dir / "inputs" / Path(folder).name)
            shutil.copytree(folder, kept[-1], dirs_exist_ok=True)
    out.print(summary.format().replace(str(work), str(out_dir / "inputs")))
    return len(kept)


def _warn_out_of_range(lines: list[str]) -> None:
    for line in lines:
        err.print(f"[yellow]warning:[/] {escape(line)}")


def _warn_inputs_of(out: str, inputs_path: str | None, silent: bool) -> None:
    """csim/sim with the user's inputs: say which exceed the range the build was calibrated on."""
    if inputs_path is None or silent:
        return
    _warn_out_of_range(load_build(Path(out)).range_warnings(read_npz(inputs_path)))


def _progress_console(quiet: bool, as_json: bool) -> Console:
    """Spinners and step times go to stderr, and nowhere with --quiet or --json."""
    return Console(stderr=True, quiet=quiet or as_json, highlight=False, soft_wrap=True)


def _print_json(summary: dict) -> None:
    out_console.print_json(json.dumps(summary))


@cli.command()
def targets() -> None:
    """List the built-in hardware targets and their parameters."""

    for name in sorted(builtin_targets(), key=lambda n: (len(n), n)):
        t = load_target(name)
        b, d = t.buffers, t.device
        out.print(f"[bold]{t.name}[/]: {t.description}")
        out.print(f"  array       {t.array.rows} x {t.array.cols} PEs, {t.array.dataflow}, "
                  f"{t.widths.operand_bits}-bit operands, {t.widths.accumulator_bits}-bit accumulators, {t.clock_mhz:g} MHz")
        out.print(f"  buffers     input {b.input.kib} KiB / {b.input.banks} banks, weight {b.weight.kib} KiB / "
                  f"{b.weight.banks} banks, accumulator {b.accumulator.kib} KiB / {b.accumulator.banks} banks")
        package = f" ({d.package}, speed {d.speed})" if d.package else ""
        out.print(f"  device      {d.part}{package}, {d.synth_family or 'no synthesis flow'}: {d.dsp} DSP, "
                  f"{d.bram_18k} BRAM18K, {d.lut} LUT, {d.ff} FF")


def _load(path: str, input_shape: tuple[str, ...] = ()) -> Model:
    model = load_onnx(path, parse_input_shapes(input_shape))
    for notice in model.graph.notices:
        err.print(f"notice: {notice}", markup=False)
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


from .sweep.commands import regress, sweep  # noqa: E402  (they register on the group defined above)

cli.add_command(sweep)
cli.add_command(regress)

from .deploy.commands import boards, deploy  # noqa: E402  (hlsgen.deploy: Zynq boards)

cli.add_command(boards)
cli.add_command(deploy)


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the click group and turn exceptions into one-line messages and the exit codes of
    hlsgen.errors.EXIT_CODES."""
    try:
        cli.main(args=argv, prog_name="hlsgen", standalone_mode=False)
        return 0
    except (click.exceptions.Abort, KeyboardInterrupt) as stop:
        err.print(_stopped(stop, INTERRUPTED_EXIT), markup=False)
        return INTERRUPTED_EXIT
    except Terminated as stop:
        err.print(_stopped(stop, TERMINATED_EXIT), markup=False)
        return TERMINATED_EXIT
    # markup=False: a message quotes paths and values ("[nan, inf]", "runs/[best]/m.onnx") that rich would
    # otherwise take for style tags and drop
    except click.UsageError as exc:
        command = exc.ctx.command_path if exc.ctx else "hlsgen"
        err.print(f"error: {exc.format_message()} (see `{command} --help`)", soft_wrap=True, markup=False)
        return USAGE_EXIT
    except click.ClickException as exc:
        err.print(f"error: {exc.format_message()}", soft_wrap=True, markup=False)
        return USAGE_EXIT
    except HlsgenError as exc:
        err.print(f"error: {exc}", soft_wrap=True, markup=False)
        if "--json" in (sys.argv[1:] if argv is None else argv):  # CI reads the verdict from stdout too
            _print_json({"error": str(exc), "exit_code": exc.exit_code, "category": type(exc).__name__})
        return exc.exit_code
    except OSError as exc:  # the file system refused: permissions, a full disk, a read-only folder
        where = f": {exc.filename}" if exc.filename else ""
        err.print(f"error: {exc.strerror or exc}{where}; check the path and its permissions", soft_wrap=True,
                  markup=False)
        return PathError.exit_code
    except Exception as exc:  # a bug in hlsgen: say so without burying the user in a traceback
        if os.environ.get("HLSGEN_DEBUG"):
            traceback.print_exc()
        err.print(f"internal error: {type(exc).__name__}: {exc} (set HLSGEN_DEBUG=1 for a traceback, and please report it)",
                  soft_wrap=True, markup=False)
        return INTERNAL_ERROR_EXIT


def _stopped(stop: BaseException, code: int) -> str:
    """What an interruption left: nothing, or what the command says it kept (a sweep's finished rows; click
    turns the KeyboardInterrupt that says so into an Abort caused by it)."""
    said = [s.args[0] for s in (stop, stop.__cause__) if s is not None and s.args and isinstance(s.args[0], str)]
    return said[0] if said else STOPPED[code]


def entry_point() -> None:
    """`python -m hlsgen.cli`, and the console script of installs made before it moved to hlsgen.__main__."""
    from .guard import guarded
    guarded(lambda: main)


if __name__ == "__main__":
    entry_point()
