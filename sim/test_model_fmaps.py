"""Whole models whose feature maps do not fit the activation memory: the layer program keeps the input and the
large maps in the feature-map image, runs the layers that read or write them in bands over on-chip buffers,
and moves the bands with dma rows; the generated top runs those rows on hg_fmap_dma's AXI4 master
(m_axi_fmap) against cocotbext-axi's AXI RAM, paced at the target's sustained bytes per cycle behind its
latency. Bit-exact against the integer reference, within 3% of the model's cycles, and still bit-exact (only
slower) with random pauses on all five channels: MLPerf Tiny's ResNet-8 (residual QAdds in bands), its
MobileNetV1-0.25 (depthwise bands of rows and of channel blocks, weights in external memory too; 48 KiB) and
a network of padded average pools (the counted region of a band), the others with 16 KiB of activation memory
on systolic16x16; MobileNetV1-0.25 on the shipped systolic16x16, whose first five layers run band by band
together (runs: the maps between them never leave the chip); under `make
test-slow`, MobileNetV2-0.5 (128 px) and ResNet-18 (224 px) on the shipped systolic16x16, and ResNet-8 on
systolic32x32 with 32 KiB (a word of 32 bytes is two beats of its 128-bit port)."""
import json
from pathlib import Path

import numpy as np
import onnx
import pytest
import yaml
from onnx import TensorProto, helper

from bench import build_root
from hlsgen import architectures
from hlsgen.cli import main
from hlsgen.hw.target import builtin_targets
from hlsgen.rtl.sim import simulate
from tests.builders import make_model, tensor_value
from tests.hw.models import rgb_stem_model

CYCLE_TOLERANCE = 0.03


def avg_pools(seed: int = 3) -> onnx.ModelProto:
    """A 3x3 Conv to 16 channels over 64x48, then a 3x3/2 AveragePool with its padding counted and a 3x3/1 one
    without (the rows a band's window counts depend on where the band starts), a Conv, a global pool and a
    Dense."""
    rng = np.random.default_rng(seed)
    inits = {"w1": rng.standard_normal((16, 3, 3, 3)).astype(np.float32) * 0.3,
             "w2": rng.standard_normal((16, 16, 3, 3)).astype(np.float32) * 0.1,
             "fc": rng.standard_normal((16, 10)).astype(np.float32) * 0.2}
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("AveragePool", ["r1"], ["p1"], name="avg1", kernel_shape=[3, 3], strides=[2, 2],
                              pads=[1, 1, 1, 1], count_include_pad=1),
             helper.make_node("AveragePool", ["p1"], ["p2"], name="avg2", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["p2", "w2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
             helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
             helper.make_node("Flatten", ["g"], ["f"], name="flat"),
             helper.make_node("MatMul", ["f", "fc"], ["y"], name="fc")]
    return make_model(nodes, [tensor_value("x", [1, 3, 64, 48])], [tensor_value("y", [1, 10], TensorProto.FLOAT)],
                      inits)


def model_files(name: str, folder: Path) -> tuple[Path, Path, Path]:
    model = {"avg_pools": avg_pools, "rgb_stem": rgb_stem_model}.get(name, getattr(architectures, name, None))()
    onnx.save(model, str(folder / "model.onnx"))
    key = model.graph.input[0].name
    np.savez(folder / "calib.npz", **{key: architectures.calibration_data(model, n=8, seed=0)})
    np.savez(folder / "test.npz", **{key: architectures.calibration_data(model, n=1, seed=1)})
    return folder / "model.onnx", folder / "calib.npz", folder / "test.npz"


def target_file(folder: Path, target: str, input_kib: int | None) -> str:
    """A built-in target, or a copy of it with `input_kib` of activation memory, as a target file."""
    if input_kib is None:
        return target
    data = yaml.safe_load(builtin_targets()[target].read_text())
    data["name"] = f"{target}_a{input_kib}"
    data["buffers"]["input"]["kib"] = input_kib
    path = folder / f"{data['name']}.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def build(folder: Path, name: str, target: str, input_kib: int | None, program: str = "auto") -> tuple[Path, Path, dict]:
    model, calib, test = model_files(name, folder)
    out = folder / "build"
    assert main(["build", str(model), "--target", target_file(folder, target, input_kib), "--calib", str(calib),
                 "--program", program, "-o", str(out), "-q"]) == 0
    program = json.loads((out / "program.json").read_text())
    assert program["residency"]["feature_maps"] == "external"
    return out, test, program


def check(out: Path, test: Path, outputs: int, backpressure: bool = True):
    paced = simulate(out, test, 1, build_root())
    assert not paced.mismatches and paced.compared == outputs
    gap = (paced.cycles_per_inference - paced.model_cycles) / paced.model_cycles
    assert abs(gap) <= CYCLE_TOLERANCE, f"{paced.cycles_per_inference} RTL cycles vs {paced.model_cycles} modelled"
    if backpressure:
        jammed = simulate(out, test, 1, build_root(), backpressure=True)
        assert not jammed.mismatches and jammed.compared == outputs
        assert jammed.cycles_per_inference > paced.cycles_per_inference, "the random pauses stall the moves"
    return paced


def banded(program: dict, kind: str) -> bool:
    return any(r["kind"] == kind and r["band"] and r["band"]["count"] > 1 for r in program["rows"])


CASES = [pytest.param("resnet8", 16, 10, "elementwise", id="resnet8"),
         pytest.param("mobilenet_v1", 48, 2, "depthwise", marks=pytest.mark.slow, id="mobilenet_v1"),
         pytest.param("avg_pools", 16, 10, "pool", marks=pytest.mark.slow, id="avg_pools"),  # double-buffered below
         # an RGB image the host folds into its stem's 3x3 windows (hlsgen.passes.input_fold), the stem in bands
         pytest.param("rgb_stem", 16, 10, "conv", id="rgb_stem")]


@pytest.mark.rtl
@pytest.mark.parametrize("name, kib, outputs, kind", CASES)
def test_bands_through_external_memory_are_bit_exact(tmp_path, name, kib, outputs, kind):
    out, test, program = build(tmp_path, name, "systolic16x16", kib)
    assert program["residency"]["input"] == "external" and banded(program, kind)
    if name == "rgb_stem":  # folded by the host: 27 channels a pixel, two words; the stem a 1x1 Conv over 32 lanes
        image = program["memory"]["maps"]["x"]
        assert (image["banks"], image["channels"], image["fold"]["kernel"], image["fold"]["strides"]) == (16, 27, [3, 3], [2, 2])
        assert {r["tiles"]["reduction"] for r in program["rows"] if r["nodes"] == ["stem"]} == {32}
    check(out, test, outputs)


@pytest.mark.rtl
def test_a_run_of_layers_computes_band_by_band_with_its_maps_between_on_chip(tmp_path):
    """MobileNetV1-0.25 (96 px, MLPerf Tiny's visual wake words) on systolic16x16 with 96 KiB of activation
    memory (the shipped 160 KiB band only its stem), its image folded by the host: conv1 to sep2_dw run band
    by band together (hlsgen.hw.banding's runs), each row reading the band buffer the row before it wrote; the
    maps between them live nowhere else; the run's last row writes its bands' rows of its output on chip
    (Band.written_row). Bit-exact, within 3% of the model, with random pauses."""
    out, test, program = build(tmp_path, "mobilenet_v1", "systolic16x16", 96)
    maps = program["memory"]["maps"]
    inner = {m["holds"] for m in maps.values() if m["holds"] and m["holds"] not in maps}
    assert {"conv1_relu6", "sep1_dw_relu6", "sep1_pw_relu6"} <= inner
    last = [r["band"] for r in program["rows"] if r["nodes"][:1] == ["sep2_dw_conv"]]
    assert len(last) > 1 and [b["written_row"] for b in last] == [b["out_rows"][0] for b in last]
    assert not any(r["move"] and r["move"]["tensor"] in inner for r in program["rows"])
    check(out, test, 2)


# the average pools' image is packed (a word per pixel): at 24 KiB single bands beat double ones, at 48 KiB not
OVERLAPPED = [pytest.param("resnet8", 24, 10, "elementwise", marks=pytest.mark.slow, id="resnet8"),  # avg_pools'
              pytest.param("avg_pools", 48, 10, "pool", id="avg_pools")]


@pytest.mark.rtl
@pytest.mark.parametrize("name, kib, outputs, kind", OVERLAPPED)
def test_double_buffered_bands_move_beside_the_layers(tmp_path, name, kib, outputs, kind):
    """With 24 (48) KiB the mapping double-buffers the bands (the model's own top, whose memory split is the
    mapping's): the moves run beside the layers (the program's layer cycles are well under its rows' sum),
    and the RTL still matches the model and the reference. The average pools' bands write their rows of the
    map on chip (Band.written_row)."""
    out, test, program = build(tmp_path, name, "systolic16x16", kib, "rom")
    assert banded(program, kind) and any(r["wait"] for r in program["rows"] if r["unit"] == "dma")
    if name == "avg_pools":
        assert any(r["band"]["written_row"] for r in program["rows"] if r["band"] and r["unit"] == "vector_unit")
    assert program["cycles"]["layers"] < 0.95 * sum(r["cycles"] for r in program["rows"])
    check(out, test, outputs)


SLOW = [("mobilenet_v2", "systolic16x16", None, 1000), ("resnet18", "systolic16x16", None, 1000),
        ("resnet8", "systolic32x32", 32, 10)]


@pytest.mark.rtl
@pytest.mark.slow
@pytest.mark.parametrize("name, target, input_kib, outputs", SLOW, ids=[f"{s[0]}-{s[1]}" for s in SLOW])
def test_real_networks_and_two_beat_words(tmp_path, name, target, input_kib, outputs):
    out, test, _ = build(tmp_path, name, target, input_kib)
    check(out, test, outputs, backpressure=input_kib is not None)
