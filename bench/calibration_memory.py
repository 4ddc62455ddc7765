"""Peak memory and time of calibration (`collect_stats`) on a ResNet-18-shaped network at 224x224.

Prints one line: images, tensors, peak resident memory, seconds. The statistics keep at most
SAMPLE_CAP values per tensor, so the peak is one image's activations plus the model, whatever the count.
"""
from __future__ import annotations

import resource
import sys
import time

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import hlsgen
from hlsgen.npz_io import match_inputs
from hlsgen.quant.calibrate import SAMPLE_CAP, collect_stats


def resnet18(rng: np.random.Generator):
    nodes, inits = [], {}

    def conv(x, name, cin, cout, k, stride):
        w = (rng.standard_normal((cout, cin, k, k)) * np.sqrt(2.0 / (cin * k * k))).astype(np.float32)
        inits[f"{name}_w"], inits[f"{name}_b"] = w, np.zeros(cout, np.float32)
        nodes.append(helper.make_node("Conv", [x, f"{name}_w", f"{name}_b"], [name], strides=[stride, stride],
                                      pads=[k // 2] * 4))
        return name

    def relu(x):
        nodes.append(helper.make_node("Relu", [x], [f"{x}_relu"]))
        return f"{x}_relu"

    x = relu(conv("image", "stem", 3, 64, 7, 2))
    nodes.append(helper.make_node("MaxPool", [x], ["pool"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    x, cin = "pool", 64
    for stage, cout in enumerate((64, 128, 256, 512)):
        for block in range(2):
            stride = 2 if stage and not block else 1
            name = f"s{stage}b{block}"
            y = conv(relu(conv(x, f"{name}c1", cin, cout, 3, stride)), f"{name}c2", cout, cout, 3, 1)
            shortcut = conv(x, f"{name}sc", cin, cout, 1, stride) if stride != 1 or cin != cout else x
            nodes.append(helper.make_node("Add", [y, shortcut], [f"{name}_sum"]))
            x, cin = relu(f"{name}_sum"), cout
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap"]))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"]))
    inits["fc_w"] = (rng.standard_normal((1000, 512)) * 0.04).astype(np.float32)
    nodes.append(helper.make_node("Gemm", ["flat", "fc_w"], ["logits"], transB=1))
    graph = helper.make_graph(nodes, "resnet18", [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 224, 224])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 1000])],
                              initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 10
    return model


def main(images: int = 32) -> None:
    from hlsgen.frontend import import_model

    rng = np.random.default_rng(0)
    graph = import_model(resnet18(rng))
    hlsgen.passes.optimize(graph)
    feeds = match_inputs(graph, {"image": rng.uniform(0, 1, (images, 3, 224, 224)).astype(np.float32)})
    start = time.perf_counter()
    stats = collect_stats(graph, feeds)
    seconds = time.perf_counter() - start
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"calibration, ResNet-18 at 224x224: {images} images, {len(stats)} tensors, at most {SAMPLE_CAP:,} "
          f"values kept per tensor, peak resident memory {peak_mib:,.0f} MiB, {seconds:.1f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 32)
