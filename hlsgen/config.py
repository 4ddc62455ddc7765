"""Build options from a YAML file, per-layer bit-width overrides, and the resolved OUT/config.yaml.

Precedence for each option: the command line, then the config file, then the default. Per-layer
overrides resolve by layer name, then op type (Conv, Dense, ...), then the model-wide default.

    target: systolic16x16
    calib: examples/digits/calib.npz
    bits: 8                 # or auto
    max_accuracy_drop: 0.01
    verify: [csim, rtl]
    batch: 8                # images per run (throughput mode; 1: latency mode)
    input_shape: {input: 1x3x480x640}   # fixes an ONNX input's dynamic dims (--input-shape)
    layers:
      Conv: {weight_bits: 6}          # every Conv ...
      conv1: {weight_bits: 8, act_bits: 8}   # ... except conv1
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .errors import UsageError
from .frontend.fold import parse_input_shape
from .paths import require_file
from .ir import Graph
from .quant import BitConfig

OPTION_KEYS = {"model", "target", "calib", "output", "bits", "max_accuracy_drop", "min_sqnr", "verify", "dump_ir", "layers",
               "input_range", "hls_design", "program", "batch", "accelerator_only", "max_host_macs", "input_shape"}
HLS_DESIGNS = ("auto", "overlay", "dataflow")
PROGRAM_RESIDENCIES = ("auto", "rom", "external")  # build's --program (map_model takes rom or external)
MAX_BATCH = 4096  # images per run (--batch): more only multiplies the on-chip vectors past any activation memory
LAYER_KEYS = {"weight_bits", "act_bits"}
WEIGHTED_OPS = ("Conv", "Dense")
BITS_VALUES = ("auto", *(str(b) for b in range(2, 9)))
TEXT_KEYS = ("model", "target", "calib", "output", "input_range", "hls_design", "program")
MAX_FILE_BYTES = 1 << 20  # a config is a few hundred bytes; a bigger file is not one


def load_config(path: str | Path) -> dict[str, Any]:
    p = require_file(path, "config file (YAML)")
    if p.stat().st_size > MAX_FILE_BYTES:
        raise UsageError(f"{p}: {p.stat().st_size:,} bytes is no build config (at most {MAX_FILE_BYTES:,}); "
                         "is it the right file?")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise UsageError(f"{p}: not valid YAML (not UTF-8 text)") from None
    except (yaml.YAMLError, ValueError) as exc:  # ValueError: a number past Python's int-parsing limit
        raise UsageError(f"{p}: not valid YAML ({(str(exc).splitlines() or [type(exc).__name__])[0]})") from None
    data = {} if data is None else data  # an empty file: no options
    if not isinstance(data, dict):
        raise UsageError(f"{p}: the config must be a mapping of option names to values")
    unknown = sorted(map(str, set(data) - OPTION_KEYS))
    if unknown:
        raise UsageError(f"{p}: unknown option(s) {unknown}; known: {sorted(OPTION_KEYS)}")
    data = {k: v for k, v in data.items() if v is not None}  # YAML's null: the option is not given
    _check_types(p, data)
    layers = data.get("layers") or {}
    if not isinstance(layers, dict):
        raise UsageError(f"{p}: 'layers' maps a layer name or op type to {{weight_bits, act_bits}}")
    for key, override in layers.items():
        if not isinstance(override, dict) or set(override) - LAYER_KEYS:
            raise UsageError(f"{p}: layers.{key} may only set {sorted(LAYER_KEYS)}")
        for field, bits in override.items():
            if not isinstance(bits, int) or not 2 <= bits <= 8:
                raise UsageError(f"{p}: layers.{key}.{field} must be a width from 2 to 8, got {bits!r}")
    if data.get("hls_design", "auto") not in HLS_DESIGNS:
        raise UsageError(f"{p}: hls_design must be one of {list(HLS_DESIGNS)}, got {data['hls_design']!r}")
    if data.get("program", "auto") not in PROGRAM_RESIDENCIES:
        raise UsageError(f"{p}: program must be one of {list(PROGRAM_RESIDENCIES)}, got {data['program']!r}")
    if isinstance(data.get("verify"), str):
        data["verify"] = [v.strip() for v in data["verify"].split(",") if v.strip()]
    if "input_shape" in data:
        data["input_shape"] = _input_shapes(p, data["input_shape"])
    return data


def _input_shapes(p: Path, value) -> dict[str, tuple[int, ...]]:
    """`input_shape:` maps an input name to "1x3x480x640" or [1, 3, 480, 640]."""
    if not isinstance(value, dict):
        raise UsageError(f"{p}: input_shape maps an input name to its shape, e.g. input: 1x3x480x640")
    shapes = {}
    for name, dims in value.items():
        if isinstance(dims, list) and all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
            dims = "x".join(map(str, dims))
        try:
            shapes[str(name)] = parse_input_shape(f"{name}:{dims}")[1]
        except UsageError:
            raise UsageError(f"{p}: input_shape.{name} must be a shape like 1x3x480x640 or [1, 3, 480, 640], "
                             f"got {dims!r}") from None
    return shapes


def _check_types(p: Path, data: dict[str, Any]) -> None:
    """Each option's type (and a budget's range), so a wrong one is a config error, not a crash later."""
    def number(value) -> bool:
        # NaN and the infinities fail the comparison (math.isfinite would overflow on a huge int)
        return isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) <= 1e300

    def bad(key: str, expected: str):
        shown = repr(data[key]) if len(repr(data[key])) <= 40 else repr(data[key])[:37] + "..."
        raise UsageError(f"{p}: {key} must be {expected}, got {shown}")

    for key in TEXT_KEYS:
        if key in data and not isinstance(data[key], str):
            bad(key, "text")
    if "bits" in data and str(data["bits"]) not in BITS_VALUES:  # true, 8.0 and [8] are none of them
        bad("bits", "a width from 2 to 8 or 'auto'")  # checked here too: a --bits on the command line hides it
    if "max_accuracy_drop" in data and not (number(data["max_accuracy_drop"]) and 0 <= data["max_accuracy_drop"] <= 1):
        bad("max_accuracy_drop", "a number from 0 to 1 (0.01 = 1 point)")
    if "min_sqnr" in data and not number(data["min_sqnr"]):
        bad("min_sqnr", "a number of dB")
    verify = data.get("verify", [])
    if not isinstance(verify, str) and not (isinstance(verify, list) and all(isinstance(v, str) for v in verify)):
        bad("verify", "a list of checks (csim, rtl)")
    if "batch" in data and not (isinstance(data["batch"], int) and not isinstance(data["batch"], bool)
                                and 1 <= data["batch"] <= MAX_BATCH):
        bad("batch", f"a whole number of images from 1 to {MAX_BATCH}")
    if "dump_ir" in data and not isinstance(data["dump_ir"], bool):
        bad("dump_ir", "true or false")
    if "accelerator_only" in data and not isinstance(data["accelerator_only"], bool):
        bad("accelerator_only", "true or false")
    if "max_host_macs" in data and not (number(data["max_host_macs"]) and 0 <= data["max_host_macs"] <= 100):
        bad("max_host_macs", "a percentage from 0 to 100")
    if "layers" in data and not isinstance(data["layers"], dict):
        bad("layers", "a mapping of layer names or op types to {weight_bits, act_bits}")


def apply_layer_overrides(bits: BitConfig, graph: Graph, layers: dict[str, dict]) -> BitConfig:
    """Per-layer widths from the overrides (name beats op type beats the default)."""
    if not layers:
        return bits
    known = set(graph.nodes) | {node.op for node in graph.nodes.values()}
    unknown = sorted(set(layers) - known)
    if unknown:
        raise UsageError(f"config layers {unknown} match no layer name or op type of the optimized model "
                         f"(layers: {', '.join(graph.nodes)})")
    weight_bits, act_bits = dict(bits.layer_weight_bits), dict(bits.tensor_act_bits)
    for node in graph.topological():
        override = {**layers.get(node.op, {}), **layers.get(node.name, {})}
        if "weight_bits" in override and node.op in WEIGHTED_OPS:
            weight_bits[node.name] = override["weight_bits"]
        if "act_bits" in override:
            act_bits[node.outputs[0]] = override["act_bits"]
    return BitConfig(bits.weight_bits, bits.act_bits, weight_bits, act_bits)


def resolved_config(options, bits: BitConfig, graph: Graph) -> dict[str, Any]:
    """Everything needed to reproduce the build, with every layer's widths spelled out (`model` is a record:
    the command line names the model)."""
    layers = {}
    for node in graph.topological():
        entry = {}
        if node.op in WEIGHTED_OPS:
            entry["weight_bits"] = bits.weights(node.name)
        entry["act_bits"] = bits.activations(node.outputs[0])
        layers[node.name] = entry
    config = {
        "model": str(options.model), "target": options.target,
        "calib": None if options.calib is None else str(options.calib),
        "input_range": None if options.input_range is None else "{:g},{:g}".format(*options.input_range),
        "bits": options.bits,
        "max_accuracy_drop": options.max_accuracy_drop, "min_sqnr": options.min_sqnr_db,
        "verify": list(options.verify), "dump_ir": options.dump_ir, "hls_design": options.hls_design,
        "program": options.program, "batch": options.batch, "accelerator_only": options.accelerator_only,
        "max_host_macs": round(options.max_host_macs * 100, 6),
        "input_shape": {name: "x".join(map(str, dims)) for name, dims in options.input_shapes} or None,
        "layers": layers,
    }
    return {k: v for k, v in config.items() if v is not None}


def dump_yaml(config: dict) -> str:
    return "# hlsgen build configuration, resolved: `hlsgen build MODEL --config config.yaml` reproduces it\n" + \
        yaml.safe_dump(config, sort_keys=False)
