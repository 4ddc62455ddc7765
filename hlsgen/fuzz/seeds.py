"""The valid files the input fuzzer mutates: a tiny 2-conv CNN built here, the bundled digits example (when
hlsgen runs from a checkout), a built-in target's YAML and a build config like the README's."""
from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import yaml
from onnx import TensorProto, helper, numpy_helper

from ..resources import data_dir

DIGITS = Path(__file__).resolve().parents[2] / "examples" / "digits"
SEED_TARGET = "systolic16x16"


@dataclass(frozen=True)
class SeedModel:
    """A model that builds, with the calibration samples it builds with."""

    name: str
    onnx_bytes: bytes
    calib: dict[str, np.ndarray]

    @property
    def proto(self) -> onnx.ModelProto:
        """A fresh copy each time: mutators edit it in place."""
        return onnx.load_model_from_string(self.onnx_bytes)

    @property
    def calib_bytes(self) -> bytes:
        return npz_bytes(self.calib)


@dataclass(frozen=True)
class Seeds:
    models: tuple[SeedModel, ...]
    target_yaml: str
    config: dict  # a build config (`hlsgen build --config`), its calib named relative to the case folder


def npz_bytes(arrays: dict[str, np.ndarray], allow_pickle: bool = False) -> bytes:
    buffer = io.BytesIO()
    if allow_pickle:
        np.savez(buffer, **arrays)
    else:
        with np.errstate(all="ignore"):
            np.savez(buffer, **{k: np.asarray(v) for k, v in arrays.items()})
    return buffer.getvalue()


def tiny_cnn() -> SeedModel:
    """Conv-Relu-Conv-Relu-Flatten-Gemm on 1x1x8x8 inputs: small enough that a whole build takes well under a
    second, with every kind of part a mutator targets (inputs, initializers, value_info, several nodes)."""
    rng = np.random.default_rng(14)
    weights = {
        "w1": rng.standard_normal((4, 1, 3, 3)).astype(np.float32), "b1": rng.standard_normal(4).astype(np.float32),
        "w2": rng.standard_normal((4, 4, 3, 3)).astype(np.float32), "b2": rng.standard_normal(4).astype(np.float32),
        "w3": rng.standard_normal((10, 64)).astype(np.float32) * 0.1, "b3": np.zeros(10, np.float32),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("MaxPool", ["r2"], ["p2"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p2"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "w3", "b3"], ["y"], name="dense", transB=1),
    ]
    graph = helper.make_graph(
        nodes, "tiny_cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        initializer=[numpy_helper.from_array(v, k) for k, v in weights.items()],
        value_info=[helper.make_tensor_value_info("c1", TensorProto.FLOAT, [1, 4, 8, 8]),
                    helper.make_tensor_value_info("p2", TensorProto.FLOAT, [1, 4, 4, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 10
    onnx.checker.check_model(model, full_check=True)
    calib = {"x": rng.uniform(0, 1, (16, 1, 8, 8)).astype(np.float32), "labels": rng.integers(0, 10, 16)}
    return SeedModel("tiny", model.SerializeToString(), calib)


def digits_cnn() -> SeedModel | None:
    """The bundled example, when hlsgen runs from a checkout (an installed wheel has no examples/)."""
    if not (DIGITS / "digits.onnx").is_file():
        return None
    with np.load(DIGITS / "calib.npz") as data:
        calib = {k: data[k][:32] for k in data.files}  # enough samples, a faster calibration
    return SeedModel("digits", (DIGITS / "digits.onnx").read_bytes(), calib)


def load_seeds() -> Seeds:
    models = tuple(m for m in (tiny_cnn(), digits_cnn()) if m is not None)
    target_yaml = (data_dir("hw_models") / f"{SEED_TARGET}.yaml").read_text()
    config = {"target": SEED_TARGET, "calib": "calib.npz", "bits": 8, "verify": [], "dump_ir": False,
              "hls_design": "auto", "program": "auto", "layers": {"Conv": {"weight_bits": 6}}}
    return Seeds(models, target_yaml, config)


def yaml_text(data) -> str:
    return yaml.safe_dump(data, sort_keys=False)
