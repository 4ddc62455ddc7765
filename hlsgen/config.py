"""Build options from a YAML file, per-layer bit-width overrides, and the resolved OUT/config.yaml.

Precedence for each option: the command line, then the config file, then the default. Per-layer
overrides resolve by layer name, then op type (Conv, Dense, ...), then the model-wide default.

    target: systolic16x16
    calib: examples/digits/calib.npz
    bits: 8                 # or auto
    max_accuracy_drop: 0.01
    verify: [csim, rtl]
    layers:
      Conv: {weight_bits: 6}          # every Conv ...
      conv1: {weight_bits: 8, act_bits: 8}   # ... except conv1
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .errors import UsageError
from .paths import require_file
from .ir import Graph
from .quant import BitConfig

OPTION_KEYS = {"model", "target", "calib", "output", "bits", "max_accuracy_drop", "min_sqnr", "verify", "dump_ir", "layers",
               "input_range", "hls_design", "program"}
HLS_DESIGNS = ("auto", "overlay", "dataflow")
PROGRAM_RESIDENCIES = ("auto", "rom", "external")  # build's --program (map_model takes rom or external)
LAYER_KEYS = {"weight_bits", "act_bits"}
WEIGHTED_OPS = ("Conv", "Dense")


def load_config(path: str | Path) -> dict[str, Any]:
    p = require_file(path, "config file (YAML)")
    try:
        data = yaml.safe_load(p.read_text()) or {}
    except yaml.YAMLError as exc:
        raise UsageError(f"{p}: not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise UsageError(f"{p}: the config must be a mapping of option names to values")
    unknown = sorted(set(data) - OPTION_KEYS)
    if unknown:
        raise UsageError(f"{p}: unknown option(s) {unknown}; known: {sorted(OPTION_KEYS)}")
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
    return data


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
        "program": options.program, "layers": layers,
    }
    return {k: v for k, v in config.items() if v is not None}


def dump_yaml(config: dict) -> str:
    return "# hlsgen build configuration, resolved: `hlsgen build MODEL --config config.yaml` reproduces it\n" + \
        yaml.safe_dump(config, sort_keys=False)
