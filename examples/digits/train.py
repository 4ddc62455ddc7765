"""Train the bundled `digits` example CNN and export it to ONNX for hlsgen.

Usage (needs the optional `train` extra: torch + scikit-learn):

    pip install .[train]
    python examples/digits/train.py

Writes next to this file: digits.onnx, test.npz (held-back test set) and
calib.npz (256 training images for post-training quantization calibration).
Everything is seeded and single-threaded, so reruns give identical files.
"""
from __future__ import annotations

import time
import zipfile
from collections import OrderedDict
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from torch import nn

OUT = Path(__file__).resolve().parent
SEED, EPOCHS, BATCH, LR, N_CALIB = 0, 30, 64, 2e-3, 256


def load_data() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Digits scaled to [0,1], upsampled 8x8 -> 16x16; stratified 80/20 split."""
    digits = load_digits()
    x = torch.from_numpy(digits.images.astype(np.float32) / 16.0).unsqueeze(1)
    x = F.interpolate(x, size=(16, 16), mode="bilinear", align_corners=False).numpy()
    y = digits.target.astype(np.int64)
    return train_test_split(x, y, test_size=0.2, stratify=y, random_state=SEED)


class DigitsCNN(nn.Sequential):
    """Conv-BN-ReLU-Pool x2, then a 2-layer MLP head (16x16 input, 10 classes)."""

    def __init__(self) -> None:
        super().__init__(OrderedDict(
            conv1=nn.Conv2d(1, 16, 3, padding=1), bn1=nn.BatchNorm2d(16),
            relu1=nn.ReLU(), pool1=nn.MaxPool2d(2),
            conv2=nn.Conv2d(16, 32, 3, padding=1), bn2=nn.BatchNorm2d(32),
            relu2=nn.ReLU(), pool2=nn.MaxPool2d(2),
            flatten=nn.Flatten(), fc1=nn.Linear(32 * 4 * 4, 64), relu3=nn.ReLU(), fc2=nn.Linear(64, 10),
        ))


def train(model: nn.Module, x: np.ndarray, y: np.ndarray) -> None:
    """Adam + cosine learning-rate decay, seeded mini-batch shuffling."""
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    gen = torch.Generator().manual_seed(SEED)
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=EPOCHS)
    model.train()
    for _ in range(EPOCHS):
        for idx in torch.randperm(len(xt), generator=gen).split(BATCH):
            opt.zero_grad()
            F.cross_entropy(model(xt[idx]), yt[idx]).backward()
            opt.step()
        sched.step()
    model.eval()


def to_onnx(model: DigitsCNN) -> onnx.ModelProto:
    """Build the ONNX graph by hand from the trained weights (BN kept unfolded)."""
    sd = {k: v.detach().numpy().astype(np.float32) for k, v in model.state_dict().items()}
    inits, nodes = [], []

    def param(name: str) -> str:
        inits.append(numpy_helper.from_array(sd[name], name))
        return name

    def add(op: str, name: str, inputs: list[str], **attrs) -> str:
        nodes.append(helper.make_node(op, inputs, [name], name=name, **attrs))
        return name

    t = "image"
    for i in (1, 2):
        t = add("Conv", f"conv{i}", [t, param(f"conv{i}.weight"), param(f"conv{i}.bias")],
                kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1])
        bn = [param(f"bn{i}.{p}") for p in ("weight", "bias", "running_mean", "running_var")]
        t = add("BatchNormalization", f"bn{i}", [t] + bn, epsilon=model.get_submodule(f"bn{i}").eps)
        t = add("Relu", f"relu{i}", [t])
        t = add("MaxPool", f"pool{i}", [t], kernel_shape=[2, 2], strides=[2, 2])
    t = add("Flatten", "flatten", [t], axis=1)
    t = add("Gemm", "fc1", [t, param("fc1.weight"), param("fc1.bias")], transB=1)
    t = add("Relu", "relu3", [t])
    nodes.append(helper.make_node("Gemm", [t, param("fc2.weight"), param("fc2.bias")], ["logits"],
                                  name="fc2", transB=1))
    graph = helper.make_graph(
        nodes, "digits_cnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 1, 16, 16])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="hlsgen-examples-digits")
    m.ir_version = 10  # onnx 1.23 writes IR 14 by default; onnxruntime 1.31 accepts <= 11
    onnx.checker.check_model(m, full_check=True)
    return m


def save_npz(path: Path, **arrays: np.ndarray) -> None:
    """Like np.savez_compressed, but with fixed zip timestamps so reruns are byte-identical."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for key, arr in arrays.items():
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            with zf.open(info, "w") as f:
                np.lib.format.write_array(f, np.ascontiguousarray(arr), allow_pickle=False)


def main() -> None:
    """Train, verify onnxruntime against torch, write digits.onnx / test.npz / calib.npz."""
    torch.manual_seed(SEED)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)  # fixed reduction order on any machine
    x_tr, x_te, y_tr, y_te = load_data()
    model = DigitsCNN()
    t0 = time.perf_counter()
    train(model, x_tr, y_tr)
    secs = time.perf_counter() - t0
    with torch.no_grad():
        ref = model(torch.from_numpy(x_te)).numpy()
    acc = float((ref.argmax(1) == y_te).mean())
    n_params = sum(p.numel() for p in model.parameters())
    print(f"trained {EPOCHS} epochs on {len(x_tr)} images in {secs:.1f} s; {n_params} parameters")
    print(f"torch float test accuracy: {acc:.4f} ({len(x_te)} images)")

    proto = to_onnx(model)
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    got = sess.run(["logits"], {"image": x_te})[0]
    diff = float(np.abs(got - ref).max())
    ort_acc = float((got.argmax(1) == y_te).mean())
    print(f"onnxruntime test accuracy: {ort_acc:.4f}; max |logit diff| vs torch: {diff:.2e}")
    assert diff < 1e-4 and ort_acc == acc, "onnxruntime does not reproduce torch"
    assert acc >= 0.95, f"accuracy {acc:.4f} below the 95% floor"

    onnx.save(proto, OUT / "digits.onnx")
    save_npz(OUT / "test.npz", image=x_te, labels=y_te)
    save_npz(OUT / "calib.npz", image=x_tr[:N_CALIB], labels=y_tr[:N_CALIB])
    print("ops:", " ".join(n.op_type for n in proto.graph.node))
    for name in ("digits.onnx", "test.npz", "calib.npz"):
        print(f"wrote {OUT / name} ({(OUT / name).stat().st_size} bytes)")


if __name__ == "__main__":
    main()
