"""The overlay C++ in throughput mode (--batch N): a call takes N images, the head runs once per image and
the Dense tail once for all of them (hlsgen.hw.batching), C-simulated bit-exact against the integer
reference for every image, the last call padded with zero images that are not checked."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper

from hlsgen.hls import write_hls
from hlsgen.hls.overlay.cycles import inference_cycles, row_cycles
from hlsgen.hls.overlay.program import build_program
from hlsgen.hw import load_target, map_model
from tests.builders import make_model, tensor_value
from tests.hls.conftest import EXAMPLE
from tests.hls.helpers import csim, quantize_model

pytestmark = pytest.mark.csim
RNG = np.random.default_rng(15)


def weights(*shape):
    return (RNG.standard_normal(shape) * 0.3).astype(np.float32)


def digits():
    data = np.load(EXAMPLE / "calib.npz")
    return onnx.load(str(EXAMPLE / "digits.onnx")), {k: data[k][:12] for k in data.files}


def mlp():
    """Flatten, Dense, Relu, Dense: the whole program is the tail, the input stream's map is held."""
    nodes = [helper.make_node("Flatten", ["x"], ["f"]),
             helper.make_node("Gemm", ["f", "w1", "b1"], ["h"], transB=1),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("Gemm", ["r", "w2", "b2"], ["y"], transB=1)]
    inits = {"w1": weights(40, 48), "b1": weights(40), "w2": weights(10, 40), "b2": weights(10)}
    model = make_model(nodes, [tensor_value("x", [1, 3, 4, 4])], [tensor_value("y", None)], inits)
    return model, {"x": RNG.uniform(-1, 1, (7, 3, 4, 4)).astype(np.float32)}


def global_pool_head():
    """A Conv, a GlobalAveragePool (the vector unit writes the held vectors) and a Dense."""
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["a"], ["r"]),
             helper.make_node("GlobalAveragePool", ["r"], ["g"]),
             helper.make_node("Flatten", ["g"], ["f"]),
             helper.make_node("Gemm", ["f", "w2", "b2"], ["y"], transB=1)]
    inits = {"w1": weights(24, 3, 3, 3), "w2": weights(10, 24), "b2": weights(10)}
    model = make_model(nodes, [tensor_value("x", [1, 3, 6, 6])], [tensor_value("y", None)], inits)
    return model, {"x": RNG.uniform(-1, 1, (5, 3, 6, 6)).astype(np.float32)}


def convs_only():
    """No Dense: nothing to batch, every row runs once per image and each image streams out after it."""
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["a"], ["y"])]
    model = make_model(nodes, [tensor_value("x", [1, 3, 6, 6])], [tensor_value("y", None)], {"w1": weights(8, 3, 3, 3)})
    return model, {"x": RNG.uniform(-1, 1, (5, 3, 6, 6)).astype(np.float32)}


def batched_overlay(tmp_path: Path, build, batch: int, target: str = "systolic16x16"):
    model, feeds = build()
    quantized = quantize_model(model, feeds)
    mapping = map_model(quantized.graph, load_target(target), batch=batch)
    int_inputs = quantized.quantize_inputs(feeds)
    design = write_hls(tmp_path / "hls", quantized.graph, load_target(target), "tiny", "tiny.onnx", int_inputs,
                       quantized.run_int(int_inputs), mapping=mapping, design="overlay")
    return design, mapping, quantized, feeds


@pytest.mark.parametrize("target", ["systolic16x16", "systolic8x8"])
@pytest.mark.parametrize("batch", [8, 32])
def test_digits_in_batches_is_bit_exact_for_every_image(tmp_path, target, batch):
    _, mapping, _, feeds = batched_overlay(tmp_path, digits, batch, target)
    assert mapping.batching.tail == 2  # fc1 and fc2 run once per call
    program = (tmp_path / "hls" / "tiny_program.h").read_text()
    assert f"static const int IMAGES = {batch};" in program and "static const int HEAD = 2;" in program
    result = csim(tmp_path / "hls")
    assert result.mismatches == 0, result.log[-2000:]
    assert result.compared == 10 * len(feeds["image"])  # 12 images: a padded last call, its padding unchecked


@pytest.mark.parametrize("name, build, tail", [("mlp", mlp, 0), ("global pool head", global_pool_head, 2),
                                               ("convs only", convs_only, 1)])
def test_other_shapes_of_batch_are_bit_exact(tmp_path, name, build, tail):
    _, mapping, _, feeds = batched_overlay(tmp_path, build, 4)
    assert mapping.batching.tail == tail, name
    result = csim(tmp_path / "hls")
    assert result.mismatches == 0, result.log[-2000:]
    assert result.compared == len(feeds["x"]) * (10 if name != "convs only" else 8 * 36)


def test_the_cpp_cycles_count_the_head_per_image_and_the_tail_once(tmp_path):
    model, feeds = digits()
    quantized = quantize_model(model, feeds)
    target = load_target("systolic16x16")
    single = build_program(quantized.graph, map_model(quantized.graph, target))
    batched = build_program(quantized.graph, map_model(quantized.graph, target, batch=8))
    assert (batched.images, batched.head, single.images, single.head) == (8, 2, 1, 4)
    per_row = row_cycles(batched, 16)
    ports = 256 + 10
    assert inference_cycles(batched, 16) == 8 * (ports + sum(per_row[:2])) + sum(per_row[2:])
    assert row_cycles(single, 16)[:2] == per_row[:2]  # the convolutions as at batch 1
    assert inference_cycles(batched, 16) < 8 * inference_cycles(single, 16)
