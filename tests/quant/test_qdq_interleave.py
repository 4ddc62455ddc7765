"""The QDQ export (model_qdq.onnx) of a transposed convolution's Interleave (each phase spread with zeros,
fitted, summed) and of a DepthToSpace at the output: a valid ONNX model that onnxruntime runs close to the
integer reference, 2-D and 1-D."""
import numpy as np
import onnx
import pytest
from onnx import helper

from hlsgen.build_folder import load_build
from hlsgen.cli import main
from hlsgen.quant.report import sqnr_db
from tests.builders import make_model, run_ort, tensor_value
from tests.rtl.decoder import decoder_model


def _one_d() -> onnx.ModelProto:
    rng = np.random.default_rng(33)
    f = np.float32
    nodes = [helper.make_node("Conv", ["x", "w0"], ["a"], kernel_shape=[3], pads=[1, 1], name="conv"),
             helper.make_node("ConvTranspose", ["a", "w1", "b1"], ["u"], kernel_shape=[3], strides=[2], pads=[1, 1],
                              output_padding=[1], name="up"),
             helper.make_node("Conv", ["u", "w2"], ["y"], kernel_shape=[1], name="head")]
    inits = {"w0": (rng.standard_normal((8, 4, 3)) * 0.3).astype(f), "w1": (rng.standard_normal((8, 8, 3)) * 0.3).astype(f),
             "b1": (rng.standard_normal(8) * 0.1).astype(f), "w2": (rng.standard_normal((4, 8, 1)) * 0.3).astype(f)}
    return make_model(nodes, [tensor_value("x", [1, 4, 20])], [tensor_value("y", None)], inits, name="up1d")


def _pixel_shuffle() -> onnx.ModelProto:
    rng = np.random.default_rng(34)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("DepthToSpace", ["c"], ["d"], blocksize=2, name="shuffle"),
             helper.make_node("Sigmoid", ["d"], ["y"], name="sigmoid")]
    w = (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32)
    return make_model(nodes, [tensor_value("x", [1, 3, 8, 8])], [tensor_value("y", None)], {"w": w}, name="shuffle")


@pytest.mark.parametrize("model", [decoder_model, _one_d, _pixel_shuffle], ids=["decoder", "one_d", "pixel_shuffle"])
def test_the_qdq_export_weaves_the_phases_as_the_integer_reference_does(model, tmp_path):
    onnx.save(model(), str(tmp_path / "m.onnx"))
    out = tmp_path / "build"
    assert main(["build", str(tmp_path / "m.onnx"), "--target", "systolic8x8", "--input-range", "0,1", "-o", str(out),
                 "-q"]) == 0
    exported = onnx.load(str(out / "model_qdq.onnx"))
    onnx.checker.check_model(exported, full_check=True)
    x = np.random.default_rng(5).uniform(0, 1, [d.dim_value for d in exported.graph.input[0].type.tensor_type.shape.dim])
    x = x.astype(np.float32)
    theirs = run_ort(exported, {"x": x}, fused=False)["y"]  # the QDQ graph's own arithmetic
    ours = load_build(out).run({"x": x})["y"]
    assert theirs.shape == ours.shape and sqnr_db(ours, theirs) > 30
