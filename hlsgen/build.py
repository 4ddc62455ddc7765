"""`hlsgen build`: the whole flow as named steps, writing into a temporary folder that replaces OUT
only when everything succeeded (an interrupted or failed build never leaves a half-written OUT)."""
from __future__ import annotations

import json
import shutil
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import onnx

from .build_folder import BUILD_MARKER, is_build_folder
from .calibration import calibration
from .children import stop_descendants
from .config import apply_layer_overrides, dump_yaml, resolved_config
from .errors import DataError, HlsgenError, MappingError, PathError, Terminated, UnsupportedModelError, UsageError
from .frontend import read_onnx
from .frontend.fold import fold_shape_code
from .frontend.onnx_import import first_line as _first_line
from .frontend.onnx_import import load_onnx_proto
from .partition.build import MAX_HOST_MACS, host_notices
from .partition.onnx_graph import HostRuntimeError
from .partition.plan import Partition
from .hls import write_hls
from .hls.design import refuse_external_maps
from .hls.verify import csim_build
from .graph_io import save_graph
from .hw import Target, load_target, map_model, report_json
from .hw.report import format_program
from .hw.program_io import write_program
from .hw.preflight import preflight
from .ir import Graph
from .loopir import checked_nests, dump
from .npz_io import write_npz
from .passes import optimize
from .passes.input_fold import KINDS as FOLD_KINDS, fold_input
from .paths import require_file
from .progress import Step, silent
from .provenance import provenance
from .quant import BitConfig, QuantizedModel, quantize
from .quant.bitwidth import search_bit_widths
from .quant.calibrate import collect_stats
from .quant.prequant import absorb_quantization
from .quant.qdq_export import export_qdq
from .quant.report import quality, quant_json
from .quant.search_report import format_table
from .report_page import record_verification, write_report_page
from .rtl.emit import write_build_rtl
from .rtl.overlay import OverlayFitError
from .rtl.program import compile_program
from .rtl.sim import sim_build_dir, simulate
from .staging import staging_for
from .synth_flow import check_flow, synthesize_build

VERIFY_SAMPLES = 16


@dataclass(frozen=True)
class BuildOptions:
    model: Path
    target: str = "systolic16x16"
    out: Path | None = None
    calib: Path | None = None
    bits: str = "8"  # a width 2..8 for every layer, or "auto"
    max_accuracy_drop: float | None = None
    min_sqnr_db: float | None = None
    input_range: tuple[float, float] | None = None  # without calib: the range synthetic inputs are drawn from
    dump_ir: bool = False  # also write OUT/program.txt and OUT/loop_ir.txt
    hls_design: str = "auto"  # "overlay", "dataflow" (one process per layer), or auto: the overlay where it runs
    program: str = "auto"  # the RTL's program: "rom" (the model's top), "external" (the target's top loads
    # program.bin), or auto: external when the model uses external memory and the target's top holds it
    verify: tuple[str, ...] = ()  # "csim", "rtl": simulations that must be bit-exact before OUT is written
    batch: int = 1  # images per run of the program (throughput mode, hlsgen.hw.batching); 1: latency mode
    synth: bool = False  # also synthesize the RTL (and place and route it on Lattice targets): OUT/synth/
    bitstream: bool = False  # also write a bitstream and its .lpf (Lattice targets; implies synth)
    seeds: int = 1  # nextpnr placer seeds to try, the fastest kept (Lattice targets)
    layers: tuple[tuple[str, tuple[tuple[str, int], ...]], ...] = ()  # per-layer overrides (hlsgen.config)
    accelerator_only: bool = False  # a node the accelerator cannot run is an error (no host/accelerator partition)
    max_host_macs: float = MAX_HOST_MACS  # a partition leaving more of the MACs than this to the host is refused
    input_shapes: tuple[tuple[str, tuple[int, ...]], ...] = ()  # --input-shape: dynamic input dims fixed

    def out_dir(self) -> Path:
        return self.out or Path(f"{Path(self.model).stem}_{Path(self.target).stem}")


@dataclass
class BuildResult:
    out: Path
    target: Target
    quantized: QuantizedModel
    quality: dict
    bits_table: str | None = None
    warnings: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    mapping: object = None  # hlsgen.hw.Mapping: the performance model (report.json)
    verified: dict[str, str] = field(default_factory=dict)  # check ("csim", "rtl") -> what was proven
    synth: dict | None = None  # report.json's `synth` when --synth or --bitstream ran
    partition: Partition | None = None  # where each node runs, when the model is partitioned
    segments: dict[str, "BuildResult"] = field(default_factory=dict)  # a partitioned build's segments


def build(options: BuildOptions, step: Step = silent) -> BuildResult:
    """The whole model on the accelerator when it runs there (today's flow, nothing partitioned); else, unless
    --accelerator-only, the model split between host and accelerator (hlsgen.partition)."""
    _check_out_dir(options.out_dir())
    refused = None
    if options.accelerator_only or all_importable(options):
        try:
            return build_accelerator(options, step)
        except HlsgenError as exc:
            if not names_nodes(exc):
                raise
            if options.accelerator_only:
                exc.args = (f"{exc}; --accelerator-only: without it the host runs these",)
                raise
            refused = exc
    try:
        return build_partitioned(options, step)
    except HostRuntimeError:  # nor can the host run them: the nodes the accelerator refuses are the answer
        if refused is not None:
            raise refused from None
        read_onnx(options.model, dict(options.input_shapes))  # raises the import's list of unsupported nodes, if that is what it is
        raise


def build_accelerator(options: BuildOptions, step: Step = silent) -> BuildResult:
    """The whole model as one layer program on the accelerator."""
    out = options.out_dir()
    _check_out_dir(out)
    if options.calib is not None:  # read only after the import: check the path before any work
        require_file(options.calib, "file (an .npz of calibration inputs)")
    bit_mode = _parse_bits(options.bits)
    _check_batch_option(options)
    user_warnings: list[str] = []
    with step("load target"):
        target = load_target(options.target)
        if options.synth or options.bitstream:  # a target without the flow asked for fails before any work
            check_flow(target, options.bitstream, options.seeds)
    with step("import and optimize"):
        graph = read_onnx(options.model, dict(options.input_shapes))
        own = graph.copy()  # the model's own execution, its quantizers included: what quality is measured against
        prequantized = absorb_quantization(graph)
        if prequantized:
            graph.notices.append("the model is pre-quantized: its scales, zero points, bit widths and integer weights are kept")
        optimize(graph)
        _check_batch_axes(graph)
    with step("check the target's limits"):
        preflight(graph, target)
    with step("calibrate"):
        calib = calibration(graph, options.calib, options.input_range)
        if calib.synthetic and prequantized and options.input_range is None:  # no range may come from synthetic data
            stats = {}
            graph.notices.append(f"no --calib: the model's own quantization decides every range; {calib.source} "
                                 "serve only as verification vectors")
        else:
            stats = collect_stats(graph, calib.feeds)
            if calib.synthetic:
                _warn(user_warnings, f"calibrated on {calib.source}: every range and quality figure comes from "
                                     "synthetic data; pass --calib with real samples for accurate ranges")
        labels = calib.labels
    bits_table, measured_search = None, None
    if bit_mode == "auto":
        budget_drop, budget_sqnr = _budget(options, labels)
        with step("search bit widths") as detail:
            search = search_bit_widths(graph, calib.feeds, labels, budget_drop, budget_sqnr, stats=stats,
                                       progress=lambda n: detail(f"{n} evaluations"))
        bits, bits_table = search.config, format_table(search)
        measured_search = search.to_json()
    else:
        bits = BitConfig(bit_mode, bit_mode)
    bits = apply_layer_overrides(bits, graph, {key: dict(values) for key, values in options.layers})
    with step("quantize"):
        quantized = quantize(graph, calib.feeds, bits, stats=stats)
        measured = {**quality(own if prequantized else graph, quantized, calib.feeds, labels), "data": calib.source}
        if measured_search is not None:
            measured["bit_search"] = measured_search
    with step("map"):
        # rejects a layer that does not fit, before anything is written
        mapping = map_model(quantized.graph, target, program="rom" if options.program == "auto" else options.program)
        folded = None  # (the integer model the accelerator runs, its mapping), once the input's fold is chosen
        if options.program == "auto" and (mapping.weights_external or mapping.maps_external or mapping.input_in_dram):
            folded = overlay_or_rom(mapping, quantized.graph, target, graph.notices,
                                    fold=lambda m, said: _folded_input(quantized, m, target, options, said))
            mapping = folded[1]
        latency_mode = None  # a batch build's figures at batch 1, for the report
        if options.batch > 1:  # the same program at N images per run (the back ends keep the batch-1 one)
            residency = "external" if mapping.program_external else "rom"
            latency_mode = {"cycles": mapping.cycles, "utilization": round(mapping.utilization, 4)}
            mapping = map_model(quantized.graph, target, program=residency, batch=options.batch)
            if mapping.batching.tail == len(mapping.layers):
                graph.notices.append(f"--batch {options.batch}: the model ends in no Dense layer to batch; every row "
                                     "runs once per image, as at batch 1")
        if options.hls_design == "dataflow":  # its processes' loop nests must meet their pipelining
            refuse_external_maps(mapping)
            checked_nests(map_model(quantized.graph, target, fuse_pools=False))
        machine, mapping = folded if folded is not None and folded[1] is mapping else \
            _folded_input(quantized, mapping, target, options, graph.notices)
    staging = staging_for(out)
    try:
        with step("render the HLS C++, RTL and report"):
            _write(staging.folder, options, target, graph, quantized, machine, measured, calib.feeds, bits_table,
                   mapping, bits, latency_mode)
        verified = _verify(staging.folder, options.verify, step)
        synth = (synthesize_build(staging.folder, options.bitstream, step, options.seeds)
                 if options.synth or options.bitstream else None)
        staging.commit()
    except HlsgenError as exc:
        _keep_logs(exc, staging.folder, out.parent / f"{out.name}.logs")
        raise
    except OSError as exc:  # a full disk, a quota: the message names OUT, never the staging folder
        raise _write_error(exc, out, staging.folder) from None
    except (KeyboardInterrupt, Terminated):
        stop_descendants()  # a compiler still running would write into the folder being removed
        raise
    finally:
        staging.discard()
    notices = graph.notices + [n for n in quantized.graph.notices if n not in graph.notices]  # and the quantizer's
    return BuildResult(out, target, quantized, measured, bits_table, user_warnings, notices, mapping, verified,
                       synth)


def _check_batch_option(options: BuildOptions) -> None:
    """Before any work: the designs that run no batch (the per-layer dataflow C++, the target's RTL top)."""
    if options.batch > 1 and options.hls_design == "dataflow":
        raise UsageError(f"--batch {options.batch} with --hls-design dataflow: only the overlay design runs a batch "
                         "(--hls-design overlay or auto)")
    if options.batch > 1 and options.program == "external":
        raise UsageError(f"--batch {options.batch} with --program external: the target's RTL top runs one image per "
                         "call; build the batch with --program rom or auto")


def _check_batch_axes(graph: Graph) -> None:
    scalars = [name for name in graph.inputs if not graph.shape(name)]
    if scalars:
        raise UnsupportedModelError(f"input(s) {scalars} are scalars; hlsgen compiles models whose inputs have a "
                                    "batch axis (N, C, ...)")
    batches = {name: graph.shape(name)[0] for name in graph.inputs}
    if len(set(batches.values())) > 1:
        shapes = ", ".join(f"{name} {graph.shape(name)}" for name in graph.inputs)
        raise UnsupportedModelError(f"the inputs do not share a batch axis ({shapes}); hlsgen compiles models whose "
                                    "inputs all stack samples along axis 0")


def _parse_bits(bits: str) -> int | str:
    if bits == "auto":
        return "auto"
    if bits.isdigit() and 2 <= int(bits) <= 8:
        return int(bits)
    raise UsageError(f"--bits {bits!r}: give a width from 2 to 8 (e.g. 8, 6, 4) or 'auto'")


def _budget(options: BuildOptions, labels: np.ndarray | None) -> tuple[float | None, float | None]:
    if options.max_accuracy_drop is not None:
        if labels is None:
            raise DataError("--max-accuracy-drop needs a 'labels' array in the calibration npz; "
                            "without labels use --min-sqnr DB")
        return options.max_accuracy_drop, None
    if options.min_sqnr_db is not None:
        return None, options.min_sqnr_db
    return (0.01, None) if labels is not None else (None, 30.0)


def _keep_logs(error: HlsgenError, staging: Path, logs: Path) -> None:
    """A failed verification's tool logs outlive the staging folder: they move to OUT.logs/, and the
    message names them there (OUT itself is left as it was)."""
    if str(staging) not in str(error):
        return
    shutil.rmtree(logs, ignore_errors=True)
    try:
        for log in staging.rglob("*.log"):
            (logs / log.relative_to(staging)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(log, logs / log.relative_to(staging))
    except OSError:  # a full disk: the error itself matters more than its logs
        shutil.rmtree(logs, ignore_errors=True)
        return
    error.args = (str(error).replace(str(staging), str(logs)),)


def _write_error(exc: OSError, out: Path, staging: Path) -> PathError:
    """The file system refused a write (full, over quota, read-only): name OUT, not its staging folder."""
    written = exc.filename2 or exc.filename  # a copy's error names its source first, its destination second
    where = written if written and str(staging) not in str(written) else out
    reason = (exc.strerror or str(exc)).lower()
    return PathError(f"cannot write {where}: {reason}; {out} is left as it was (free space or choose another -o)")


def _warn(user_warnings: list[str], message: str) -> None:
    user_warnings.append(message)
    warnings.warn(message, stacklevel=3)


def _check_out_dir(out: Path) -> None:
    """Before any work: OUT must be new or a previous build, and its nearest existing parent a folder."""
    try:
        out.exists()
    except OSError as exc:  # e.g. a name longer than the file system takes
        raise PathError(f"cannot create the build folder {out}: {exc.strerror or exc}; choose another -o") from None
    if out.exists() and not (out.is_dir() and is_build_folder(out)):
        raise PathError(f"{out} exists and is not an hlsgen build folder; choose another -o or remove it")
    parent = next(p for p in out.absolute().parents if p.exists())
    if not parent.is_dir():
        raise PathError(f"cannot create the build folder {out}: {parent} is a file, not a folder; choose another -o")


def _folded_input(quantized: QuantizedModel, mapping, target: Target, options: BuildOptions,
                  notices: list[str]) -> tuple[QuantizedModel, object]:
    """The integer model the accelerator runs and its mapping: with its input folded by the host
    (hlsgen.passes.input_fold: pixel blocks or the first convolution's windows into channels) where the input
    lives in external memory either way and that program takes the fewest cycles, else `quantized` and
    `mapping` as they are."""
    if options.batch > 1 or options.hls_design == "dataflow" or not mapping.input_in_dram:
        return quantized, mapping
    program = "external" if mapping.program_external else "rom"
    best = None
    for kind in FOLD_KINDS:
        folded = fold_input(quantized.graph, target.array.rows, kind)
        if folded is None:
            continue
        try:
            refolded = map_model(folded, target, program=program)
        except MappingError:
            continue
        if refolded.input_in_dram and refolded.cycles < (best or (None, mapping))[1].cycles:
            best = folded, refolded
    if best is None:
        return quantized, mapping
    folded, refolded = best
    names = ", ".join(f"{t!r} ({FOLD_TEXT[f.windows]})" for t, f in folded.input_folds.items())
    notices.append(f"the host folds input {names} as it packs it: the first convolution reads more lanes "
                   f"a word ({mapping.cycles:,} -> {refolded.cycles:,} cycles)")
    return replace(quantized, lowered=replace(quantized.lowered, graph=folded)), refolded


FOLD_TEXT = {False: "its pixel blocks into channels", True: "the first convolution's windows into channels"}


def _write(tmp: Path, options: BuildOptions, target: Target, graph: Graph, quantized: QuantizedModel,
           machine: QuantizedModel, measured: dict, calib: dict, bits_table: str | None, mapping, bits: BitConfig,
           latency_mode: dict | None) -> None:
    """Every output file, into the staging folder `tmp`: `machine` is the integer model the accelerator runs
    (`quantized`, or it with its input folded: _folded_input)."""
    tmp.chmod(0o755)
    save_graph(graph, tmp / "float")
    save_graph(machine.graph, tmp / "integer")
    (tmp / "quant.json").write_text(json.dumps(quant_json(quantized, measured), indent=1) + "\n")
    if bits_table is not None:
        (tmp / "bits.txt").write_text(bits_table + "\n")
    write_program(mapping, tmp)
    if options.dump_ir:
        (tmp / "program.txt").write_text(format_program(mapping))
    batch = graph.shape(graph.inputs[0])[0]
    count = max(batch, VERIFY_SAMPLES // batch * batch)  # whole batches of the graph's batch size
    sample = {k: v[:count] for k, v in calib.items()}
    int_inputs = quantized.quantize_inputs(sample)
    write_npz(tmp / "verify" / "inputs.npz", sample)
    write_npz(tmp / "verify" / "int_inputs.npz", int_inputs)
    int_outputs = machine.run_int(int_inputs)
    write_npz(tmp / "verify" / "int_outputs.npz", int_outputs)
    # HLS C++ (OUT/hls/), with these test vectors as its testbench's data
    design, hls = _write_hls(tmp / "hls", options, target, machine.graph, int_inputs, int_outputs, mapping,
                             graph.notices)
    hls_summary = hls.to_json() if design == "overlay" else hls.cost(machine.graph, target)
    if design == "dataflow":  # the overlay proves its banking when it is written; this design may not meet II=1
        conflicts = hls.bank_conflicts()
        hls_summary["bank_conflicts"] = {"count": len(conflicts), "first": conflicts[:3]}
    # Verilog RTL (OUT/rtl/): the generated top and testbench, ROM images, the hand-written modules
    rtl_summary = write_build_rtl(tmp / "rtl", mapping, machine.graph, graph.notices)
    designs = {"hls": hls_summary, "rtl": rtl_summary}
    if mapping.images > 1:
        designs["batch"] = (f"`layers`, `total`, OUT/hls and OUT/rtl run {mapping.images} images per call "
                            "(program.json's `batch`)")
    report = report_json(mapping, designs)
    report["partition"] = {"segments": ["segment0"], "host_nodes": [], "accelerator_nodes": len(graph.origins and
                           {origin[0] for origin in graph.origins.values()} or graph.nodes),
                           "macs_total": mapping.macs, "macs_on_accelerator": mapping.macs}
    if latency_mode is not None:  # a batch build's program at batch 1: the latency mode it is compared with
        report["total"]["latency_mode"] = latency_mode
    (tmp / "report.json").write_text(json.dumps(report, indent=1) + "\n")
    try:
        export_qdq(graph, quantized, tmp / "model_qdq.onnx")
    except onnx.checker.ValidationError as exc:  # an op form the export's opset cannot express
        graph.notices.append(f"no model_qdq.onnx: the QDQ export is not a valid ONNX model ({_first_line(exc)})")
    if options.dump_ir:  # the overlay's units, or the loop nests of the dataflow design's per-layer processes
        (tmp / "loop_ir.txt").write_text(hls.loop_ir if design == "overlay" else
                                         dump(map_model(quantized.graph, target, fuse_pools=False)))
    manifest = {"model": str(options.model), "target": target.name, "bits": options.bits, "hls_design": design,
                "batch": options.batch, "inputs": quantized.graph.inputs, "outputs": graph.outputs} | \
        provenance(options.model, options.calib)
    (tmp / BUILD_MARKER).write_text(json.dumps(manifest, indent=1) + "\n")
    (tmp / "config.yaml").write_text(dump_yaml(resolved_config(options, bits, graph)))
    write_report_page(tmp)


OVERLAY_SLOWDOWN = 0.02  # --program auto keeps the model's own top when the target's would be slower than this


def overlay_or_rom(own, graph: Graph, target: Target, notices: list[str], fold=None):
    """--program auto, for a model that uses external memory anyway: the target's top when it holds the model
    at no more than OVERLAY_SLOWDOWN extra cycles, else the model's own mapping `own` (with a notice saying
    why). With `fold` (mapping, notices -> (integer model, mapping): the host's input fold, _folded_input) both
    are compared as they would run, each with its fastest fold, and the chosen pair is returned; without it,
    the chosen mapping."""
    why = "the RTL is the model's own top (--program rom), not the target's"
    own_said: list[str] = []
    own_run = fold(own, own_said) if fold is not None else (None, own)

    def keep_own(reason: str | None = None):
        notices.extend(own_said + ([f"{why}: {reason}"] if reason else []))
        return own_run if fold is not None else own

    try:
        loaded = map_model(graph, target, program="external")
    except MappingError as exc:  # even bands do not fit the top's split of the activation memory
        return keep_own(str(exc))
    try:
        compile_program(loaded, graph)
    except OverlayFitError as exc:
        return keep_own(str(exc))
    except MappingError:  # no RTL for this model at all: write_build_rtl says why
        return keep_own()
    loaded_said: list[str] = []
    loaded_run = fold(loaded, loaded_said) if fold is not None else (None, loaded)
    if loaded_run[1].cycles > own_run[1].cycles * (1 + OVERLAY_SLOWDOWN):
        return keep_own(f"the target's top would take {loaded_run[1].cycles:,} cycles per inference against its "
                        f"{own_run[1].cycles:,} (its fixed split of the activation memory needs more bands); "
                        "--program external takes it anyway")
    notices.extend(loaded_said)
    return loaded_run if fold is not None else loaded


def _write_hls(folder: Path, options: BuildOptions, target: Target, graph: Graph, int_inputs: dict,
               int_outputs: dict, mapping, notices: list[str]):
    """OUT/hls/ in the design asked for; `auto`: the overlay, or the per-layer dataflow design where the
    overlay's units do not implement a layer or the target's array (never with feature maps in external
    memory). Returns (design, what write_hls gave)."""
    args = (folder, graph, target, Path(options.model).stem, Path(options.model).name, int_inputs, int_outputs,
            mapping)
    # only the overlay moves maps to external memory and runs a batch
    if options.hls_design != "auto" or mapping.maps_external or mapping.images > 1:
        design = "overlay" if options.hls_design == "auto" else options.hls_design
        return design, write_hls(*args, design=design)
    try:
        return "overlay", write_hls(*args, design="overlay")
    except UnsupportedModelError as exc:
        shutil.rmtree(folder, ignore_errors=True)
        notices.append(f"OUT/hls/ is the per-layer dataflow design (one array per layer; report.json's cycles "
                       f"describe the overlay, not it): {exc}")
        checked_nests(map_model(graph, target, fuse_pools=False))  # its processes must meet their pipelining
        return "dataflow", write_hls(*args, design="dataflow")


def _verify(staging: Path, checks: tuple[str, ...], step: Step) -> dict[str, str]:
    """The simulations that must be bit-exact before the staging folder becomes OUT; what each proved."""
    verified = {}
    if "csim" in checks:  # the HLS C++, compiled by g++, on the stored test vectors
        result = csim_build(staging, step=step)
        verified["csim"] = f"{result.compared:,} output integers of {result.samples} samples"
    if "rtl" in checks:  # the RTL, built and simulated by Verilator (report.json gets its cycles)
        result = simulate(staging, build_root=sim_build_dir(), step=step)
        verified["rtl"] = (f"{result.compared:,} output integers of {result.images} images, "
                           f"{result.cycles_per_inference:,} cycles per "
                           + ("inference" if result.batch == 1 else f"run of {result.batch} images"))
    for check, details in verified.items():
        record_verification(staging, check, True, details)
    return verified


def all_importable(options: BuildOptions) -> bool:
    """Every node of the model is one hlsgen imports (the accelerator may still refuse some)."""
    from .partition.colour import importable

    model = fold_model(load_onnx_proto(options.model), options)
    return all(importable(node) for node in model.graph.node)


def names_nodes(error: HlsgenError) -> bool:
    """The error names node(s) of the model that the accelerator has no implementation of (the host could
    run them)."""
    from .partition.colour import unimplemented

    return bool(unimplemented(error))


def build_partitioned(options: BuildOptions, step: Step = silent) -> BuildResult:
    """The model split between host and accelerator: each segment built by `build_accelerator` into
    OUT/segments/, the host stages as ONNX, the whole model's quality measured end to end
    (hlsgen.partition.build)."""
    from .partition import build as whole
    from .partition.colour import colour
    from .partition.onnx_graph import named_nodes, tensor_types
    from .partition.page import write_partition_page

    out = options.out_dir()
    whole.check_partition_options(options)
    with step("load target"):
        target = load_target(options.target)
    with step("import, fold and partition") as detail:
        fold_notices: list[str] = []
        model = named_nodes(fold_shape_code(load_onnx_proto(options.model), dict(options.input_shapes),
                                            fold_notices))
        types = tensor_types(model)
        calib = calibration(whole.inputs_graph(model, types), options.calib, options.input_range)
        values = whole.FloatValues(model, calib.feeds)
        refusals: dict[str, str] = {}
        detail("probing the segments' build steps")
        partition = colour(model, types, values, target, refusals)
        whole.check_host_share(partition, refusals, options.max_host_macs, options.accelerator_only)
    notices = fold_notices + host_notices(partition, refusals)
    user_warnings: list[str] = []
    if calib.synthetic:
        _warn(user_warnings, f"calibrated on {calib.source}: every range and quality figure comes from "
                             "synthetic data; pass --calib with real samples for accurate ranges")
    staging = staging_for(out)
    try:
        def one(seg_options: BuildOptions, step_: Step) -> BuildResult:
            name = seg_options.out.name
            return build_accelerator(seg_options, lambda label: step_(f"{name}: {label}"))

        results = whole.build_segments(options, step, model, types, partition, values, staging.folder, one)
        with step("run the whole model (host stages and integer segments)"):
            measured = whole.write_whole(staging.folder, options, model, types, partition, refusals, values,
                                         calib.labels, calib.source, results)
        manifest = {"model": str(options.model), "target": target.name, "bits": options.bits,
                    "partition": [s.name for s in partition.stages], "inputs": list(partition.inputs),
                    "outputs": list(partition.outputs)} | provenance(options.model, options.calib)
        (staging.folder / BUILD_MARKER).write_text(json.dumps(manifest, indent=1) + "\n")
        config = resolved_config(options, BitConfig(), Graph(name="whole"))  # each segment's has its layers
        config.pop("layers")
        (staging.folder / "config.yaml").write_text(dump_yaml(config))
        write_partition_page(staging.folder)
        staging.commit()
    except HlsgenError as exc:
        _keep_logs(exc, staging.folder, out.parent / f"{out.name}.logs")
        raise
    except OSError as exc:
        raise _write_error(exc, out, staging.folder) from None
    except (KeyboardInterrupt, Terminated):
        stop_descendants()
        raise
    finally:
        staging.discard()
    for name, result in results.items():
        notices += [f"{name}: {n}" for n in result.notices]
        user_warnings += [w for w in result.warnings if w not in user_warnings and "synthetic" not in w]
    verified = {}
    for check in options.verify:
        verified[check] = "; ".join(f"{name}: {r.verified[check]}" for name, r in results.items() if check in r.verified)
    return BuildResult(out, target, None, measured, None, user_warnings, notices, None, verified, None, partition,
                       results)


def fold_model(model: onnx.ModelProto, options: BuildOptions) -> onnx.ModelProto:
    """The model with its shape-computing code folded for the fixed input shape (hlsgen.frontend.fold)."""
    return fold_shape_code(model, dict(options.input_shapes))
