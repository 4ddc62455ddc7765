"""The partition's probe of a segment (hlsgen.partition.colour.refused): the nodes a segment's build refuses,
with why, so that the host runs them."""
import numpy as np
from onnx import TensorProto, helper

from hlsgen.hw.target import load_target
from hlsgen.partition.colour import refused
from tests.builders import make_model, tensor_value


def test_a_layer_whose_maps_no_plan_fits_goes_to_the_host():
    """A segmentation head resized to 8 x 200 x 200 by an align_corners Resize (the model's output, 640 KB, five
    times systolic16x16's activation memory; the interpolation runs whole): the Resize goes to the host, the
    Conv before it stays."""
    rng = np.random.default_rng(0)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Resize", ["r", "", "", "sizes"], ["y"], name="up", mode="linear",
                              coordinate_transformation_mode="align_corners")]
    model = make_model(nodes, [tensor_value("x", [1, 3, 32, 32])],
                       [tensor_value("y", [1, 8, 200, 200], TensorProto.FLOAT)],
                       {"w": (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32),
                        "sizes": np.array([1, 8, 200, 200], np.int64)}, opset=13)
    feeds = {"x": rng.uniform(0, 1, (4, 3, 32, 32)).astype(np.float32)}
    why = refused(model, feeds, load_target("systolic16x16"))
    assert list(why) == ["up"] and "even in the smallest bands" in why["up"], why
    assert refused(make_model(nodes[:2], [tensor_value("x", [1, 3, 32, 32])], [tensor_value("r", [1, 8, 16, 16])],
                              {"w": (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32)}, opset=13),
                   feeds, load_target("systolic16x16")) == {}
