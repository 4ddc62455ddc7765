"""Bilinear upsampling (issue 26, item 5) built with `hlsgen build --verify csim,rtl`: an FPN's top-down path
as torch exports F.interpolate(mode="bilinear", align_corners=False) (a linear half_pixel Resize), and a 1-D
net's linear upsampling by 3. Each Resize is a nearest one repeating its edge pixels on the vector unit and a
depthwise Conv of exact integer weights on the array; with align_corners=True or a fractional factor (a head
resized to its input's size; weights that change from pixel to pixel) the vector unit's interpolation
(QResample); so does a nearest Resize by a fraction (each output pixel's source pixel from the same
counters). The whole model one program, no host node,
bit-exact in C-sim and RTL at the performance model's cycles."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from bench import build_root
from verified_build import verified_build


def _conv(name, x, cin, cout, k, stride, rng, inits):
    inits += [numpy_helper.from_array((rng.standard_normal((cout, cin, *k)) / np.sqrt(cin * np.prod(k)))
                                      .astype(np.float32), f"{name}_w"),
              numpy_helper.from_array((rng.standard_normal(cout) * 0.1).astype(np.float32), f"{name}_b")]
    pads = [p for kk in k for p in [kk // 2]] * 2
    return [helper.make_node("Conv", [x, f"{name}_w", f"{name}_b"], [f"{name}_c"], name=name, strides=[stride] * len(k),
                             pads=pads),
            helper.make_node("Relu", [f"{name}_c"], [name], name=f"{name}_relu")]


def _upsample(name, x, scales, inits, transform="pytorch_half_pixel"):
    inits.append(numpy_helper.from_array(np.array([1, 1, *scales], np.float32), f"{name}_scales"))
    return [helper.make_node("Resize", [x, "", f"{name}_scales"], [name], name=name, mode="linear",
                             coordinate_transformation_mode=transform)]


def fpn_model(transform="pytorch_half_pixel"):
    """stem 3->16 at 16x16, c3 16->24 at 8x8, c4 24->32 at 4x4; laterals to 16; top-down bilinear x2 + Add;
    a 3x3 head on the 8x8 level."""
    rng, inits = np.random.default_rng(26), []
    k3 = (3, 3)
    nodes = (_conv("stem", "input", 3, 16, k3, 2, rng, inits) + _conv("c3", "stem", 16, 24, k3, 2, rng, inits)
             + _conv("c4", "c3", 24, 32, k3, 2, rng, inits) + _conv("lat3", "c3", 24, 16, (1, 1), 1, rng, inits)
             + _conv("lat4", "c4", 32, 16, (1, 1), 1, rng, inits) + _upsample("up4", "lat4", (2, 2), inits, transform)
             + [helper.make_node("Add", ["lat3", "up4"], ["p3"], name="merge")]
             + _conv("head", "p3", 16, 8, k3, 1, rng, inits))
    graph = helper.make_graph(nodes, "fpn", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 32, 32])],
                              [helper.make_tensor_value_info("head", TensorProto.FLOAT, [1, 8, 8, 8])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def head_model(transform, mode="linear", nearest="round_prefer_floor"):
    """A segmentation head resized to its input's size by a fractional factor (12 -> 20 rows, 12 -> 28 columns,
    Resize with sizes), a 3x3 conv after it."""
    rng, inits = np.random.default_rng(28), []
    inits.append(numpy_helper.from_array(np.array([1, 8, 20, 28], np.int64), "sizes"))
    nodes = (_conv("stem", "input", 3, 8, (3, 3), 2, rng, inits)
             + [helper.make_node("Resize", ["stem", "", "", "sizes"], ["up"], name="up", mode=mode,
                                 coordinate_transformation_mode=transform, nearest_mode=nearest)]
             + _conv("out", "up", 8, 4, (3, 3), 1, rng, inits))
    graph = helper.make_graph(nodes, "head", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 24, 24])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 4, 20, 28])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def audio_model(transform="half_pixel"):
    """A 1-D conv at 1/3 rate, upsampled by 3 (half_pixel) and refined by a conv at the full rate."""
    rng, inits = np.random.default_rng(27), []
    nodes = (_conv("down", "input", 4, 16, (5,), 3, rng, inits) + _upsample("up", "down", (3,), inits, transform)
             + _conv("out", "up", 16, 8, (5,), 1, rng, inits))
    graph = helper.make_graph(nodes, "audio_up", [helper.make_tensor_value_info("input", TensorProto.FLOAT,
                                                                                [1, 4, 96])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 8, 96])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.csim
@pytest.mark.rtl
@pytest.mark.parametrize("name, model", [("fpn_bilinear_hp", fpn_model),
                                         pytest.param("fpn_align_corners", lambda: fpn_model("align_corners"),
                                                      marks=pytest.mark.slow),  # fpn_bilinear_hp's rows
                                         pytest.param("head_fractional", lambda: head_model("half_pixel"),
                                                      marks=pytest.mark.slow),  # fpn_bilinear_hp's half_pixel
                                         pytest.param("head_fractional_ac", lambda: head_model("align_corners"),
                                                      marks=pytest.mark.slow),
                                         ("head_nearest_fractional", lambda: head_model("asymmetric", "nearest",
                                                                                        "floor")),
                                         pytest.param("head_nearest_half_pixel",
                                                      lambda: head_model("half_pixel", "nearest"),
                                                      marks=pytest.mark.slow),
                                         pytest.param("audio_linear", audio_model, marks=pytest.mark.slow),
                                         pytest.param("audio_align_corners", lambda: audio_model("align_corners"),
                                                      marks=pytest.mark.slow)])
def test_bilinear_upsampling_runs_on_the_accelerator_bit_exact_at_the_model_s_cycles(name, model, tmp_path,
                                                                                      monkeypatch):
    monkeypatch.setenv("HLSGEN_SIM_BUILD", str(build_root()))
    report = verified_build(model(), tmp_path, name, "--input-range", "0,1")
    assert (len(report["partition"]["segments"]), report["partition"]["host_nodes"]) == (1, [])
    resizes = [layer for layer in report["layers"] if layer["op"] in ("Resize", "QResample")]
    assert len(resizes) == 1 and resizes[0]["unit"] == "vector_unit"
