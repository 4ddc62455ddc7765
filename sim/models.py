"""The test models of the whole-model benches and of bench/rtl.py, with their calibration and test images:
the example (digits), mnist-8 (its three test inputs are all the data it ships with: they calibrate and
test), the zoo's residual and mobilenet networks (48 calibration, 32 held-out test images), and the zoo's
dense-only anomaly-detection autoencoder (48 calibration, 32 test log-mel feature vectors), its hidden
layers narrowed from 128 to 32 so its weights fit every shipped target's weight memory (autoencoder24: to
24, which neither divides nor is divided by 16 array rows), odd_cnn (tests/hw/models.py: 3x3 Convs
to 24, 40 and 12 channels and a Dense over a 4x4 map, whose taps the layer program pads) and pools
(tests/hw/models.py: padded, overlapping, dilated and ceil-mode pools on the vector unit) and grouped
(tests/hw/models.py: grouped convolutions, a pass per group and packed groups) strided (a Conv and a
MaxPool of stride 16), copies (a channel Concat, a standalone Pad, a Transpose) and spatial_concat (Concats
along rows and columns)."""
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from hlsgen import zoo
from tests.hw.models import (copies_model, depthwise_multiplier_model, grouped_cnn_model, odd_cnn_model,
                             spatial_concat_model, stem_model, strided_model, window_pools_model)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "digits"
MNIST = ROOT / "tests" / "data" / "mnist-8"
NAMES = ("digits", "mnist", "residual", "mobilenet", "autoencoder")
AUTOENCODER_HIDDEN = {"autoencoder": 32, "autoencoder24": 24}


def mnist_images() -> np.ndarray:
    load = lambda i: numpy_helper.to_array(onnx.load_tensor(str(MNIST / f"test_data_set_{i}" / "input_0.pb")))  # noqa: E731
    return np.concatenate([load(i) for i in range(3)])


def model_files(name: str, folder: Path) -> tuple[Path, Path, Path]:
    """(model.onnx, calibration npz, test-image npz) of a test model; generated files go to `folder`."""
    if name == "digits":
        return EXAMPLE / "digits.onnx", EXAMPLE / "calib.npz", EXAMPLE / "test.npz"
    if name == "mnist":
        images = folder / "mnist_images.npz"
        np.savez(images, Input3=mnist_images())
        return MNIST / "model.onnx", images, images
    hidden = AUTOENCODER_HIDDEN.get(name)
    if name == "odd_cnn":
        model = odd_cnn_model()
    elif name == "pools":
        model = window_pools_model()
    elif name == "fold_stem":
        model = stem_model(2, 16, 24)
    elif name == "window_stem":
        model = stem_model(3, 12, 16)
    elif name == "grouped":
        model = grouped_cnn_model()
    elif name == "strided":
        model = strided_model()
    elif name == "copies":
        model = copies_model()
    elif name == "spatial_concat":
        model = spatial_concat_model()
    elif name == "depthwise_multiplier":
        model = depthwise_multiplier_model()
    else:
        model = zoo.anomaly_autoencoder(hidden=hidden) if hidden else zoo.ZOO[name]()
    path = folder / f"{name}.onnx"
    onnx.save(model, str(path))
    key = model.graph.input[0].name
    np.savez(folder / "calib.npz", **{key: zoo.calibration_data(model, n=48, seed=0)})
    np.savez(folder / "test.npz", **{key: zoo.calibration_data(model, n=32, seed=1)})
    return path, folder / "calib.npz", folder / "test.npz"
