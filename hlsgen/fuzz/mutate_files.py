"""Mutators of the other files a user hands hlsgen: calibration/input npz (10), target YAML (9) and build
config YAML (2). Each takes a seeded generator and the valid seed and returns the mutated file's bytes with
the exit codes hlsgen may answer it with (the docstring says why those)."""
from __future__ import annotations

import io
import pickle
import zipfile

import numpy as np
import yaml

from .mutant import CONFIG, DATA, FIT, TARGET, Mutant
from .seeds import SeedModel, npz_bytes, yaml_text

FLOAT_KEYS = ("clock_mhz", "bytes_per_cycle")  # the target's float fields
HUGE_NUMBER_DIGITS = (5_000, 100_000, 100_000_000)  # past Python's int-parsing limit; the last is 100 MB


def _pick(rng: np.random.Generator, items):
    return items[int(rng.integers(len(items)))]


def _split(seed: SeedModel) -> tuple[str, np.ndarray, dict[str, np.ndarray]]:
    """The seed's input key, its samples, and the other arrays (labels)."""
    key = next(k for k in seed.calib if k != "labels")
    return key, seed.calib[key], {k: v for k, v in seed.calib.items() if k != key}


# ---- calibration / input npz: DataError (10)


def npz_keys(rng: np.random.Generator, seed: SeedModel) -> Mutant:
    """The input's array missing (only `labels` left, or nothing): the input cannot be matched (10); or an
    extra array beside it, under another name than the input's: two candidates for a one-input model (10).
    The input's own name picks its array among others, and a lone array under another name is taken for
    a one-input model: those build (0)."""
    key, samples, rest = _split(seed)
    kind = _pick(rng, ("extra", "extra_renamed", "missing", "renamed"))
    if kind == "extra":
        return Mutant(npz_bytes({**seed.calib, "extra": samples[:, :1]}), 0, f"an array 'extra' beside {key!r}")
    if kind == "extra_renamed":
        return Mutant(npz_bytes({"a": samples, "b": samples, **rest}), DATA, f"array {key!r} twice, as 'a' and 'b'")
    if kind == "missing":
        return Mutant(npz_bytes(rest if rng.random() < 0.5 else {}), DATA, f"array {key!r} removed")
    return Mutant(npz_bytes({"renamed_input": samples, **rest}), 0, f"array {key!r} renamed 'renamed_input'")


def npz_shape(rng: np.random.Generator, seed: SeedModel) -> Mutant:
    """The input array with another rank or other per-sample dims: does not fit the input (10)."""
    key, samples, rest = _split(seed)
    kind = _pick(rng, ("rank_down", "rank_up", "dims", "scalar"))
    if kind == "rank_down":
        changed = samples.reshape(samples.shape[0], -1)
    elif kind == "rank_up":
        changed = samples[..., None]
    elif kind == "scalar":
        changed = np.float32(0.5)
    else:
        axis = int(rng.integers(1, samples.ndim))
        changed = np.repeat(samples, 2, axis=axis)
    return Mutant(npz_bytes({key: changed, **rest}), DATA, f"array {key!r} reshaped ({kind}) to {np.shape(changed)}")


def npz_dtype(rng: np.random.Generator, seed: SeedModel) -> Mutant:
    """The input as complex, strings, bytes or object (pickled) values: not numeric samples hlsgen reads
    (10). As integers or booleans it still casts to the model's float input: a valid (if coarse) set (0),
    or one whose values all round to one constant (10)."""
    key, samples, rest = _split(seed)
    dtype = _pick(rng, ("int8", "int64", "uint16", "bool", "complex64", "U8", "S4", "float16", "float64", "object"))
    if dtype == "object":
        return Mutant(npz_bytes({key: samples.astype(object), **rest}, allow_pickle=True), DATA, f"{key!r} as object")
    with np.errstate(all="ignore"):
        changed = (samples * 10).astype(dtype)
    benign = dtype.startswith(("int", "uint", "float", "bool"))
    return Mutant(npz_bytes({key: changed, **rest}), DATA, f"array {key!r} as {dtype}",
                  frozenset({0}) if benign else frozenset())


def npz_values(rng: np.random.Generator, seed: SeedModel) -> Mutant:
    """NaN or Inf among the samples, or every value one constant: nothing to calibrate on (10). `run` on a
    model (float reference) computes on NaN and Inf like onnxruntime would, so there they may succeed (0)."""
    key, samples, rest = _split(seed)
    kind = _pick(rng, ("nan", "inf", "-inf", "constant"))
    changed = samples.copy()
    if kind == "constant":
        changed[...] = float(rng.integers(-3, 4))
    else:
        flat = changed.reshape(-1)
        flat[rng.integers(0, flat.size, int(rng.integers(1, 5)))] = float(kind)
    return Mutant(npz_bytes({key: changed, **rest}), DATA, f"array {key!r} with {kind} values", frozenset({0}))


def npz_empty(rng: np.random.Generator, seed: SeedModel) -> Mutant:
    """Zero samples (the labels cut to match, or not): nothing to calibrate on (10)."""
    key, samples, rest = _split(seed)
    cut_labels = bool(rng.random() < 0.5)
    rest = {k: v[:0] for k, v in rest.items()} if cut_labels else rest
    return Mutant(npz_bytes({key: samples[:0], **rest}), DATA, f"array {key!r} with 0 samples")


def npz_container(rng: np.random.Generator, seed: SeedModel) -> Mutant:
    """Not an npz: random bytes, text, an empty file, a truncated or bit-flipped zip, a zip whose member is
    no .npy, or a pickle: not readable as samples (10)."""
    good = seed.calib_bytes
    kind = _pick(rng, ("random", "text", "empty", "truncated", "flipped", "bad_member", "pickle"))
    if kind == "random":
        data = rng.bytes(int(rng.integers(1, 4096)))
    elif kind == "text":
        data = b"image,labels\n0.5,3\n"
    elif kind == "empty":
        data = b""
    elif kind == "truncated":
        data = good[:int(rng.integers(1, len(good)))]
    elif kind == "flipped":
        flipped = bytearray(good)
        for bit in rng.integers(0, len(flipped) * 8, int(rng.integers(1, 9))):
            flipped[bit // 8] ^= 1 << (bit % 8)
        data = bytes(flipped)
    elif kind == "bad_member":
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("x.npy", b"\x93NUMPY garbage")
        data = buffer.getvalue()
    else:
        data = pickle.dumps(dict(seed.calib))
    # a bit flip in the zip's stored data can leave a readable npz of other values: then any answer of a
    # readable calibration set is right
    return Mutant(data, DATA, f"calibration file {kind}", frozenset({0}) if kind == "flipped" else frozenset())


def npz_labels(rng: np.random.Generator, seed: SeedModel) -> Mutant:
    """`labels` of the wrong count, rank or dtype (floats, strings, complex): a build refuses them (10); `run`
    only uses them to print an accuracy, and must refuse them the same way rather than crash."""
    key, samples, _ = _split(seed)
    n = samples.shape[0]
    kind = _pick(rng, ("short", "long", "2d", "float", "string", "complex", "scalar"))
    labels = {"short": np.zeros(max(n - 3, 1), np.int64), "long": np.zeros(n + 5, np.int64),
              "2d": np.zeros((n, 2), np.int64), "float": np.linspace(0, 9, n), "string": np.array(["a"] * n),
              "complex": np.zeros(n, np.complex64), "scalar": np.int64(3)}[kind]
    return Mutant(npz_bytes({key: samples, "labels": labels}), DATA, f"labels {kind}")


CALIB_MUTATORS = (npz_keys, npz_shape, npz_dtype, npz_values, npz_empty, npz_container, npz_labels)
# Mutants that every command must refuse before running anything (csim and sim on them stay fast).
REFUSED_INPUTS = (npz_shape, npz_empty, npz_container)


# ---- a build folder's own files: PathError (6)

# The files `run` and `report` read back from a build folder (paths inside it).
BUILD_FILES = ("build.json", "quant.json", "report.json", "integer/graph.json", "integer/constants.json",
               "integer/constants.npz", "float/graph.json", "float/constants.npz")


def build_file(rng: np.random.Generator, files: dict[str, bytes]) -> tuple[str, Mutant]:
    """One file of a good build folder truncated, emptied, replaced by garbage or by valid JSON of another
    shape: the folder is no readable build (6). A cut that leaves valid JSON, or a file `report` does not
    need, can leave it readable (0); a constants file cut inside its zip is unreadable data (10)."""
    name = _pick(rng, BUILD_FILES)
    good = files[name]
    kind = _pick(rng, ("truncated", "empty", "garbage", "other_json", "flipped"))
    if kind == "truncated":
        data = good[:int(rng.integers(0, len(good)))]
    elif kind == "empty":
        data = b""
    elif kind == "garbage":
        data = rng.bytes(int(rng.integers(1, 512)))
    elif kind == "other_json":
        data = _pick(rng, (b"[]", b"{}", b"null", b"42", b'{"nodes": 5}', b'{"format": 99}'))
    else:
        flipped = bytearray(good)
        for bit in rng.integers(0, len(flipped) * 8, int(rng.integers(1, 5))):
            flipped[bit // 8] ^= 1 << (bit % 8)
        data = bytes(flipped)
    return name, Mutant(data, 6, f"build folder's {name} {kind}", frozenset({0, DATA}))


# ---- YAML files: target (9) and config (2)


def _paths(data, prefix=()) -> list[tuple]:
    """Every key path of a nested mapping, leaves and inner mappings alike."""
    found = []
    for key, value in data.items():
        found.append((*prefix, key))
        if isinstance(value, dict):
            found.extend(_paths(value, (*prefix, key)))
    return found


def _set(data: dict, path: tuple, value) -> None:
    for key in path[:-1]:
        data = data[key]
    data[path[-1]] = value


def _get(data: dict, path: tuple):
    for key in path:
        data = data[key]
    return data


def _wrong_value(rng: np.random.Generator, current):
    """A value of another type than `current`: strings, lists, null, bools, floats, mappings."""
    choices = ["sixteen", "", [16, 16], None, True, False, 16.5, {"value": 16}, "1e3", -0.0]
    choices = [c for c in choices if type(c) is not type(current)]
    if isinstance(current, float):  # an int is a float's right type
        choices = [c for c in choices if not isinstance(c, (int, float)) or isinstance(c, bool)]
    return _pick(rng, choices)


def _not_yaml(rng: np.random.Generator, text: str, kind: str, number_key: str) -> bytes:
    if kind == "syntax":
        return (text + "\n  : [unclosed\n\tbad: {").encode()
    if kind == "binary":
        return rng.bytes(int(rng.integers(1, 2048)))
    if kind == "not_mapping":
        return _pick(rng, (b"- 16\n- 16\n", b"42\n", b"just a string\n", b"[]\n", b"!!binary aGk=\n"))
    digits = int(_pick(rng, HUGE_NUMBER_DIGITS))
    return text.replace(f"{number_key}: 16", f"{number_key}: " + "9" * digits, 1).encode()


def target_keys(rng: np.random.Generator, text: str) -> Mutant:
    """A key removed, or an unknown key added: a target must name every required key and no other (9).
    The optional keys (array.dataflow, external_memory) may go: then the target is valid (0), or without
    DRAM the model may not fit on chip (3)."""
    data = yaml.safe_load(text)
    path = _pick(rng, _paths(data))
    if rng.random() < 0.5:
        parent = _get(data, path[:-1])
        del parent[path[-1]]
        return Mutant(yaml_text(data).encode(), TARGET, f"key {'.'.join(path)} removed", frozenset({0, FIT}))
    parent = _get(data, path[:-1])
    parent[f"{path[-1]}_extra"] = 1
    return Mutant(yaml_text(data).encode(), TARGET, f"unknown key {path[-1]}_extra beside {'.'.join(path)}")


def target_types(rng: np.random.Generator, text: str) -> Mutant:
    """A value replaced by one of another type (a string, list, null, bool, float or mapping where an
    int is expected, ...): an invalid target (9). A float where the seed wrote a whole number of a float
    field (clock_mhz: 200 -> 16.5) is still a valid target (0)."""
    data = yaml.safe_load(text)
    path = _pick(rng, _paths(data))
    value = _wrong_value(rng, _get(data, path))
    _set(data, path, value)
    still_valid = path[-1] in FLOAT_KEYS and isinstance(value, float) and value > 0
    return Mutant(yaml_text(data).encode(), TARGET, f"{'.'.join(path)} set to {value!r}",
                  frozenset({0}) if still_valid else frozenset())


def target_values(rng: np.random.Generator, text: str) -> Mutant:
    """A number made zero, negative or huge: an invalid target (9). (A big but sane value that builds
    is not drawn: huge means far past any device.) A DRAM read latency of 0 cycles is an ideal memory, not
    an invalid one: that target builds (0)."""
    data = yaml.safe_load(text)
    numeric = [p for p in _paths(data) if isinstance(_get(data, p), (int, float))]
    path = _pick(rng, numeric)
    value = _pick(rng, (0, -1, -(2**31), 2**40, 10**18, 2**64, 10**400, 1e300, float("inf"), float("nan")))
    _set(data, path, value)
    ideal_memory = path[-1] == "read_latency" and value == 0
    return Mutant(yaml_text(data).encode(), TARGET, f"{'.'.join(path)} set to {value!r}",
                  frozenset({0}) if ideal_memory else frozenset())


def target_small(rng: np.random.Generator, text: str) -> Mutant:
    """A valid target shrunk: a few keys set to small but legal values (arrays of 1 to 3 PEs a side, 1 KiB
    buffers of 1 to 3 banks, 2-bit operands, a slow or narrow DRAM port, a tiny device). The model does not
    fit (3), fits anyway (0), or the 8-bit build needs wider operands than the target has (3)."""
    data = yaml.safe_load(text)
    choices = (("array", "rows", (1, 2, 3)), ("array", "cols", (1, 2, 3)), ("widths", "operand_bits", (2, 3, 4)),
               ("widths", "accumulator_bits", (17, 20)), ("external_memory", "data_bits", (32, 64)),
               ("external_memory", "bytes_per_cycle", (0.001, 0.5, 1)), ("external_memory", "read_latency", (0, 10**6)),
               ("device", "dsp", (1, 4)), ("device", "bram_18k", (1, 2)), ("device", "lut", (1, 100)),
               ("device", "ff", (1, 100)), ("clock_mhz", None, (0.001, 1e6)))
    changed = []
    for index in rng.choice(len(choices), int(rng.integers(1, 4)), replace=False):
        section, key, values = choices[int(index)]
        value = _pick(rng, values)
        if key is None:
            data[section] = value
        else:
            data[section][key] = value
        changed.append(f"{section}{'.' + key if key else ''}={value}")
    for name in ("input", "weight", "accumulator") if rng.random() < 0.5 else ():
        data["buffers"][name] = {"kib": 1, "banks": int(rng.integers(1, 4))}
        changed.append(f"buffers.{name}=1 KiB")
    return Mutant(yaml_text(data).encode(), FIT, "target shrunk: " + ", ".join(changed), frozenset({0, TARGET}))


def target_file(rng: np.random.Generator, text: str) -> Mutant:
    """Not a target description at all: broken YAML, binary garbage, a list or scalar, a 100 MB number (9)."""
    kind = _pick(rng, ("syntax", "binary", "not_mapping", "huge_number"))
    return Mutant(_not_yaml(rng, text, kind, "rows"), TARGET, f"target file {kind}")


TARGET_MUTATORS = (target_keys, target_types, target_values, target_file, target_small)


def config_keys(rng: np.random.Generator, config: dict) -> Mutant:
    """An unknown option (2), or an option removed: every option is optional, so the build runs (0), except
    without `calib` it has no calibration data (10)."""
    data = {k: v for k, v in config.items()}
    if rng.random() < 0.5:
        data[_pick(rng, ("targte", "calibration", "Bits", "layer", "verify_all"))] = 1
        return Mutant(yaml_text(data).encode(), CONFIG, "an unknown option")
    key = _pick(rng, sorted(data))
    del data[key]
    return Mutant(yaml_text(data).encode(), CONFIG, f"option {key} removed", frozenset({0, DATA}))


def config_types(rng: np.random.Generator, config: dict) -> Mutant:
    """An option or a layer width of another type (a list for `bits`, a number for `target`, a string
    for `dump_ir`, ...): a bad config (2). A null takes the option's default instead (see below)."""
    data = yaml.safe_load(yaml_text(config))
    data["max_accuracy_drop"], data["min_sqnr"] = 0.01, 30.0  # their wrong types too
    path = _pick(rng, [p for p in _paths(data) if p != ("model",)])
    value = _wrong_value(rng, _get(data, path))
    _set(data, path, value)
    # null is YAML's "not given": the option takes its default (0), and a build without calib has no data (10);
    # `verify` also takes a comma-separated string, and an empty one asks for no check (0)
    valid = value is None or (path == ("verify",) and value == "")
    return Mutant(yaml_text(data).encode(), CONFIG, f"{'.'.join(map(str, path))} set to {value!r}",
                  frozenset({0, DATA}) if valid else frozenset())


def config_values(rng: np.random.Generator, config: dict) -> Mutant:
    """An option of the right type but an unusable value: widths outside 2..8, a budget outside its range,
    an unknown check, design or residency, an input range that is no range (2)."""
    data = yaml.safe_load(yaml_text(config))
    key, value = _pick(rng, (("bits", 0), ("bits", 99), ("bits", -8), ("bits", "nine"), ("max_accuracy_drop", -0.5),
                             ("max_accuracy_drop", 7.0), ("min_sqnr", float("nan")), ("min_sqnr", 10**400), ("verify", ["csim", "gates"]),
                             ("hls_design", "both"), ("program", "flash"), ("input_range", "1,0"),
                             ("input_range", "0,inf"), ("layers", {"Conv": {"weight_bits": 0}}),
                             ("layers", {"Conv": {"act_bits": 99}}), ("layers", {"Conv": {"bias_bits": 8}}),
                             ("layers", {"Conv": [8]}), ("layers", [1, 2])))
    data[key] = value
    return Mutant(yaml_text(data).encode(), CONFIG, f"{key} set to {value!r}")


def config_file(rng: np.random.Generator, config: dict) -> Mutant:
    """Not a config at all: broken YAML, binary garbage, a list or scalar, a 100 MB number (2)."""
    kind = _pick(rng, ("syntax", "binary", "not_mapping", "huge_number"))
    text = yaml_text(config).replace("bits: 8", "bits: 16")  # a `: 16` for the huge number to replace
    return Mutant(_not_yaml(rng, text, kind, "bits"), CONFIG, f"config file {kind}")


CONFIG_MUTATORS = (config_keys, config_types, config_values, config_file)
