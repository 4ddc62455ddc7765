"""Regenerate the exporter-made test models in this folder (run by hand: `make test-data`).

Each model is a tiny PyTorch module defined here (torchvision/YOLO/SSD-style architectures written for
this script, random weights, BatchNorm running statistics set to non-trivial values, eval mode),
exported by PyTorch's own TorchScript ONNX exporter (`torch.onnx.export(..., dynamo=False)`) so the
files carry exactly the graph code real exports have: Shape/Gather/Unsqueeze/Concat feeding Reshape
and Resize, strided Slice for YOLO's Focus, Transpose between Reshapes for the channel shuffle,
DepthToSpace for PixelShuffle, Cast/Transpose and QuantizeLinear/DequantizeLinear on a uint8 NHWC
input, Exp/ReduceSum/ReduceMean/ArgMax/TopK decoding. Beside each `<name>.onnx` it writes
`<name>_calib.npz`: 8 calibration samples stacked on axis 0 under the ONNX input's name.

Needs torch (CPU), onnx and onnxruntime: the Makefile's `test-data` target makes `.venv-data` for it.
The test suite never imports torch; it reads only the committed files. Deterministic: fixed seeds.
"""
from __future__ import annotations

import collections
import io
import sys
import warnings
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torch.nn.functional as F
from torch import nn

HERE = Path(__file__).resolve().parent
OPSET = 13
IR_VERSION = 10          # onnxruntime refuses IR versions newer than it knows (tests/builders.py)
N_CALIB = 8
MAX_BYTES = 200 * 1024
warnings.filterwarnings("ignore", message="You are using the legacy TorchScript-based ONNX export")


# ---------------------------------------------------------------- building blocks

def conv_bn(cin: int, cout: int, k: int = 3, stride: int = 1, act: type[nn.Module] | None = nn.ReLU,
            groups: int = 1) -> nn.Sequential:
    layers: list[nn.Module] = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False),
                               nn.BatchNorm2d(cout)]
    if act is not None:
        layers.append(act())
    return nn.Sequential(*layers)


def plausible_batchnorm(module: nn.Module, seed: int) -> None:
    """Running statistics and affine parameters as a trained net has them (not 0/1)."""
    gen = torch.Generator().manual_seed(seed)
    for m in module.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            c = m.num_features
            with torch.no_grad():
                m.running_mean.copy_(torch.randn(c, generator=gen) * 0.2)
                m.running_var.copy_(torch.rand(c, generator=gen) * 1.5 + 0.5)
                m.weight.copy_(torch.rand(c, generator=gen) + 0.5)
                m.bias.copy_(torch.randn(c, generator=gen) * 0.1)


# ---------------------------------------------------------------- a. FPN detector (RetinaFace-like)

class FPNDetector(nn.Module):
    """Backbone of stride-2 conv-bn-relu blocks (C3/C4/C5 at strides 8/16/32), FPN with 1x1 laterals and
    nearest top-down upsampling (scale_factor=2, then size= of the lateral map), and per-level
    box/class/landmark heads concatenated over levels."""

    def __init__(self, anchors: int = 2, ch: int = 16):
        super().__init__()
        self.stem = nn.Sequential(conv_bn(3, 8, stride=2), conv_bn(8, 16, stride=2))   # stride 4
        self.c3 = conv_bn(16, 16, stride=2)                                           # stride 8
        self.c4 = conv_bn(16, 24, stride=2)                                           # stride 16
        self.c5 = conv_bn(24, 32, stride=2)                                           # stride 32
        self.lateral = nn.ModuleList([nn.Conv2d(c, ch, 1) for c in (16, 24, 32)])
        self.smooth = nn.ModuleList([conv_bn(ch, ch) for _ in range(3)])
        self.box = nn.ModuleList([nn.Conv2d(ch, anchors * 4, 1) for _ in range(3)])
        self.cls = nn.ModuleList([nn.Conv2d(ch, anchors * 2, 1) for _ in range(3)])
        self.ldm = nn.ModuleList([nn.Conv2d(ch, anchors * 10, 1) for _ in range(3)])
        self.register_buffer("box_scale", torch.tensor([0.1, 0.1, 0.2, 0.2]))
        self.register_buffer("box_offset", torch.tensor([0.5, 0.5, 0.0, 0.0]))

    def forward(self, x):
        x = self.stem(x)
        c3 = self.c3(x)
        c4 = self.c4(c3)
        c5 = self.c5(c4)
        p5 = self.lateral[2](c5)
        p4 = self.lateral[1](c4) + F.interpolate(p5, scale_factor=2, mode="nearest")
        # RetinaFace-style: the second upsampling is sized from the lateral map's runtime shape
        p3 = self.lateral[0](c3) + F.interpolate(p4, size=[c3.size(2), c3.size(3)], mode="nearest")
        feats = [s(p) for s, p in zip(self.smooth, (p3, p4, p5))]
        boxes = torch.cat([h(f).permute(0, 2, 3, 1).contiguous().view(f.size(0), -1, 4)
                           for h, f in zip(self.box, feats)], dim=1)
        logits = torch.cat([h(f).permute(0, 2, 3, 1).contiguous().view(f.size(0), -1, 2)
                            for h, f in zip(self.cls, feats)], dim=1)
        landmarks = torch.cat([h(f).permute(0, 2, 3, 1).contiguous().view(f.size(0), -1, 10)
                               for h, f in zip(self.ldm, feats)], dim=1)
        boxes = boxes * self.box_scale + self.box_offset
        return boxes, torch.sigmoid(logits), landmarks * 0.1


# ---------------------------------------------------------------- b. YOLOv5-style Focus + SiLU

class FocusSiLU(nn.Module):
    """Focus stem (space-to-depth by strided slicing), conv-bn-SiLU blocks, a YOLO detection head."""

    def __init__(self, classes: int = 3, anchors: int = 3):
        super().__init__()
        self.na, self.no = anchors, classes + 5
        self.focus_conv = conv_bn(12, 16, 3, act=nn.SiLU)
        self.body = nn.Sequential(conv_bn(16, 24, 3, 2, act=nn.SiLU), conv_bn(24, 24, 1, act=nn.SiLU),
                                  conv_bn(24, 32, 3, 2, act=nn.SiLU), conv_bn(32, 32, 3, act=nn.SiLU))
        self.detect = nn.Conv2d(32, anchors * self.no, 1)

    def forward(self, x):
        x = torch.cat([x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2], x[..., 1::2, 1::2]], 1)
        x = self.body(self.focus_conv(x))
        y = self.detect(x)
        bs, _, ny, nx = y.shape
        y = y.view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
        return torch.sigmoid(y).view(bs, -1, self.no)


# ---------------------------------------------------------------- c. ShuffleNetV2-style

def channel_shuffle(x, groups: int):
    b, c, h, w = x.size()
    x = x.view(b, groups, c // groups, h, w)
    x = torch.transpose(x, 1, 2).contiguous()
    return x.view(b, -1, h, w)


class ShuffleUnit(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.stride = stride
        half = cout // 2
        if stride > 1:
            self.branch1 = nn.Sequential(conv_bn(cin, cin, 3, stride, act=None, groups=cin),
                                         conv_bn(cin, half, 1))
        bin_ = cin if stride > 1 else half
        self.branch2 = nn.Sequential(conv_bn(bin_, half, 1), conv_bn(half, half, 3, stride, act=None, groups=half),
                                     conv_bn(half, half, 1))

    def forward(self, x):
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = torch.cat((x1, self.branch2(x2)), dim=1)
        else:
            out = torch.cat((self.branch1(x), self.branch2(x)), dim=1)
        return channel_shuffle(out, 2)


class ShuffleNetSmall(nn.Module):
    def __init__(self, classes: int = 10):
        super().__init__()
        self.stem = conv_bn(3, 16, 3, 2)
        self.pool = nn.MaxPool2d(3, 2, 1)
        self.units = nn.Sequential(ShuffleUnit(16, 32, 2), ShuffleUnit(32, 32, 1), ShuffleUnit(32, 32, 1))
        self.conv_last = conv_bn(32, 32, 1)
        self.fc = nn.Linear(32, classes)

    def forward(self, x):
        x = self.conv_last(self.units(self.pool(self.stem(x))))
        x = x.mean([2, 3])
        return torch.softmax(self.fc(x), dim=1)


# ---------------------------------------------------------------- d. 1-D conv net for IQ radio samples

def conv1d_bn(cin: int, cout: int, k: int, stride: int = 1, dilation: int = 1, groups: int = 1,
              act: bool = True) -> nn.Sequential:
    layers: list[nn.Module] = [nn.Conv1d(cin, cout, k, stride, dilation * (k - 1) // 2, dilation, groups,
                                         bias=False), nn.BatchNorm1d(cout)]
    if act:
        layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class Conv1dAudio(nn.Module):
    def __init__(self, classes: int = 8):
        super().__init__()
        self.features = nn.Sequential(
            conv1d_bn(2, 16, 33, stride=2),            # long front-end filter
            conv1d_bn(16, 16, 9, dilation=2),
            nn.MaxPool1d(2),
            conv1d_bn(16, 16, 9, groups=16, act=False),  # depthwise-separable: depthwise 9 ...
            conv1d_bn(16, 32, 1),                        # ... then pointwise
            conv1d_bn(32, 32, 3, stride=2, dilation=4),
        )
        self.gap = nn.AdaptiveAvgPool1d(1)
        self.fc = nn.Linear(32, classes)

    def forward(self, x):
        x = self.gap(self.features(x)).flatten(1)
        return torch.softmax(self.fc(x), dim=1)


# ---------------------------------------------------------------- e. ESPCN super-resolution

class ESPCN(nn.Module):
    def __init__(self, r: int = 3, channels: int = 1):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(channels, 32, 5, padding=2), nn.Tanh(),
                                  nn.Conv2d(32, 16, 3, padding=1), nn.Tanh(),
                                  nn.Conv2d(16, channels * r * r, 3, padding=1))
        self.shuffle = nn.PixelShuffle(r)

    def forward(self, x):
        return torch.sigmoid(self.shuffle(self.body(x)))


# ---------------------------------------------------------------- f. SSD with a uint8 NHWC input

class SSDUint8NHWC(nn.Module):
    """Takes uint8 NHWC images as TFLite-converted detectors do: Cast/Transpose, (x-127.5)/127.5, a fake
    quantization of the normalized input (QuantizeLinear/DequantizeLinear as in QDQ models), then an
    SSD backbone with box/class heads on two feature maps, Reshape/Concat and Softmax over classes."""

    def __init__(self, classes: int = 4, anchors: int = 3):
        super().__init__()
        self.classes = classes
        self.b1 = nn.Sequential(conv_bn(3, 8, 3, 2, act=nn.ReLU6), conv_bn(8, 8, 3, 1, act=nn.ReLU6, groups=8),
                                conv_bn(8, 16, 1, act=nn.ReLU6), conv_bn(16, 16, 3, 2, act=nn.ReLU6, groups=16),
                                conv_bn(16, 24, 1, act=nn.ReLU6), conv_bn(24, 24, 3, 2, act=nn.ReLU6))  # 8x8
        self.b2 = nn.Sequential(conv_bn(24, 32, 3, 2, act=nn.ReLU6))                                 # 4x4
        self.box = nn.ModuleList([nn.Conv2d(c, anchors * 4, 3, padding=1) for c in (24, 32)])
        self.cls = nn.ModuleList([nn.Conv2d(c, anchors * classes, 3, padding=1) for c in (24, 32)])

    def forward(self, x):
        x = x.permute(0, 3, 1, 2).float()
        x = (x - 127.5) / 127.5
        x = torch.fake_quantize_per_tensor_affine(x, 1.0 / 128, 0, -128, 127)
        f1 = self.b1(x)
        f2 = self.b2(f1)
        feats = (f1, f2)
        boxes = torch.cat([h(f).permute(0, 2, 3, 1).reshape(f.size(0), -1, 4) for h, f in zip(self.box, feats)], 1)
        logits = torch.cat([h(f).permute(0, 2, 3, 1).reshape(f.size(0), -1, self.classes)
                            for h, f in zip(self.cls, feats)], 1)
        return boxes, torch.softmax(logits, dim=-1)


# ---------------------------------------------------------------- g. anchor-free head with host-side decoding

class ClsHeadDecode(nn.Module):
    """FCOS/CenterNet-like head: class heatmap (Sigmoid), ltrb distances (Exp * stride), centerness
    (Sigmoid); decoded with ReduceMean, ReduceSum, ArgMax and TopK, which an accelerator leaves to the host."""

    def __init__(self, classes: int = 4, k: int = 10):
        super().__init__()
        self.k = k
        self.backbone = nn.Sequential(conv_bn(3, 8, 3, 2), conv_bn(8, 16, 3, 2), conv_bn(16, 24, 3, 2),
                                      conv_bn(24, 24, 3))
        self.cls = nn.Conv2d(24, classes, 3, padding=1)
        self.reg = nn.Conv2d(24, 4, 3, padding=1)
        self.ctr = nn.Conv2d(24, 1, 3, padding=1)

    def forward(self, x):
        f = self.backbone(x)
        heat = torch.sigmoid(self.cls(f)) * torch.sigmoid(self.ctr(f))   # (b, C, h, w)
        dist = torch.exp(self.reg(f)) * 8.0                                 # stride 8
        b, c = heat.shape[0], heat.shape[1]
        flat = heat.view(b, c, -1)
        best, class_ids = flat.max(dim=1)                                   # ReduceMax + ArgMax
        topk_scores, topk_indices = torch.topk(best, self.k, dim=1)
        image_scores = heat.mean(dim=[2, 3])
        box_area = (dist[:, 0] + dist[:, 2]) * (dist[:, 1] + dist[:, 3])
        total_area = box_area.sum(dim=[1, 2])
        return topk_scores, topk_indices, class_ids, image_scores, dist, total_area


# ---------------------------------------------------------------- calibration data

# ---------------------------------------------------------------- h. U-Net-style decoder (ConvTranspose)

class UNetDecoder(nn.Module):
    """A two-level encoder and its decoder: learned upsampling by ConvTranspose2d (k 2 s 2, and k 4 s 2 p 1 as
    edge and text-segmentation nets use), skip Concats, a 1x1 mask head with Sigmoid."""

    def __init__(self):
        super().__init__()
        self.enc1 = conv_bn(3, 8)
        self.enc2 = conv_bn(8, 16, stride=2)
        self.enc3 = conv_bn(16, 24, stride=2)
        self.up2 = nn.ConvTranspose2d(24, 16, 2, stride=2)
        self.dec2 = conv_bn(32, 16)
        self.up1 = nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1)
        self.dec1 = conv_bn(16, 8)
        self.head = nn.Conv2d(8, 1, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(e1)
        e3 = self.enc3(e2)
        d2 = self.dec2(torch.cat([self.up2(e3), e2], dim=1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], dim=1))
        return torch.sigmoid(self.head(d1))


# ---------------------------------------------------------------- i. MobileNetV3 blocks (SE, HardSwish)

class SqueezeExcite(nn.Module):
    def __init__(self, c: int, squeeze: int):
        super().__init__()
        self.reduce, self.expand = nn.Conv2d(c, squeeze, 1), nn.Conv2d(squeeze, c, 1)

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        return x * F.hardsigmoid(self.expand(F.relu(self.reduce(s))))


class InvertedResidualSE(nn.Module):
    def __init__(self, cin: int, expand: int, cout: int, k: int, stride: int):
        super().__init__()
        self.expand = conv_bn(cin, expand, 1, act=nn.Hardswish)
        self.depthwise = conv_bn(expand, expand, k, stride, act=nn.Hardswish, groups=expand)
        self.se = SqueezeExcite(expand, max(8, expand // 4))
        self.project = conv_bn(expand, cout, 1, act=None)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.project(self.se(self.depthwise(self.expand(x))))
        return x + y if self.residual else y


class MobileNetV3Small(nn.Module):
    """torchvision's MobileNetV3 building blocks, small: HardSwish (opset 13 exports it as x * HardSigmoid(x)),
    squeeze-and-excitation (GlobalAveragePool -> 1x1 convs -> HardSigmoid -> Mul by the map), residual Add."""

    def __init__(self, classes: int = 10):
        super().__init__()
        self.stem = conv_bn(3, 16, 3, 2, act=nn.Hardswish)
        self.blocks = nn.Sequential(InvertedResidualSE(16, 32, 16, 3, 1), InvertedResidualSE(16, 48, 24, 5, 2),
                                    InvertedResidualSE(24, 64, 24, 3, 1))
        self.head = conv_bn(24, 64, 1, act=nn.Hardswish)
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        x = self.head(self.blocks(self.stem(x)))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


# ---------------------------------------------------------------- j. FPN with bilinear upsampling

class FPNBilinear(nn.Module):
    """A segmentation FPN (DeepLab/PANet-like): top-down F.interpolate(mode="bilinear") with align_corners False
    (half_pixel) and True, and a 4x bilinear upsampling of the logits to the input size."""

    def __init__(self, ch: int = 16, classes: int = 4):
        super().__init__()
        self.c2 = nn.Sequential(conv_bn(3, 16, stride=2), conv_bn(16, 16))
        self.c3 = conv_bn(16, 24, stride=2)
        self.c4 = conv_bn(24, 32, stride=2)
        self.lat = nn.ModuleList([nn.Conv2d(c, ch, 1) for c in (16, 24, 32)])
        self.fuse = conv_bn(ch, ch)
        self.cls = nn.Conv2d(ch, classes, 1)

    def forward(self, x):
        c2 = self.c2(x)
        c3 = self.c3(c2)
        c4 = self.c4(c3)
        p3 = self.lat[1](c3) + F.interpolate(self.lat[2](c4), scale_factor=2, mode="bilinear", align_corners=False)
        p2 = self.lat[0](c2) + F.interpolate(p3, scale_factor=2, mode="bilinear", align_corners=True)
        logits = self.cls(self.fuse(p2))
        return F.interpolate(logits, scale_factor=2, mode="bilinear", align_corners=False)


# ---------------------------------------------------------------- k. 1-D depthwise-separable audio net (GELU)

class DWSeparableAudio1d(nn.Module):
    """A keyword-spotting-style 1-D net on 40 mel bands: kernel 33 depthwise-separable blocks, dilations 2 and
    4, GELU (exported before opset 20 as x * 0.5 * (1 + Erf(x / sqrt 2))), GAP, Linear."""

    def __init__(self, mels: int = 40, ch: int = 48, classes: int = 12):
        super().__init__()

        def block(cin, cout, k, dilation, stride=1):
            return nn.Sequential(nn.Conv1d(cin, cin, k, stride, dilation * (k // 2), dilation, groups=cin, bias=False),
                                 nn.BatchNorm1d(cin), nn.Conv1d(cin, cout, 1, bias=False), nn.BatchNorm1d(cout),
                                 nn.GELU())

        self.front = nn.Sequential(nn.Conv1d(mels, ch, 3, padding=1, bias=False), nn.BatchNorm1d(ch), nn.GELU())
        self.blocks = nn.Sequential(block(ch, ch, 33, 1, 2), block(ch, ch, 9, 2), block(ch, 64, 9, 4))
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        x = self.blocks(self.front(x))
        return self.fc(x.mean(dim=2))


def smooth_images(rng: np.random.Generator, n: int, c: int, h: int, w: int) -> np.ndarray:
    """Natural-ish images in [0, 1]: coarse random fields upsampled bilinearly plus a little noise, on the
    256 levels of an 8-bit image (k / 255)."""
    out = np.empty((n, c, h, w), np.float32)
    for i in range(n):
        gh, gw = max(2, h // 8), max(2, w // 8)
        coarse = rng.uniform(0, 1, (c, gh, gw))
        ys, xs = np.linspace(0, gh - 1, h), np.linspace(0, gw - 1, w)
        y0, x0 = np.floor(ys).astype(int), np.floor(xs).astype(int)
        y1, x1 = np.minimum(y0 + 1, gh - 1), np.minimum(x0 + 1, gw - 1)
        fy, fx = (ys - y0)[:, None], (xs - x0)[None, :]
        img = (coarse[:, y0][:, :, x0] * (1 - fy) * (1 - fx) + coarse[:, y1][:, :, x0] * fy * (1 - fx)
               + coarse[:, y0][:, :, x1] * (1 - fy) * fx + coarse[:, y1][:, :, x1] * fy * fx)
        out[i] = np.round(np.clip(img + rng.normal(0, 0.03, img.shape), 0, 1) * 255) / 255
    return out


def iq_signals(rng: np.random.Generator, n: int, length: int) -> np.ndarray:
    """Complex baseband bursts (a few tones with random frequency/phase plus noise) as I/Q channels."""
    t = np.arange(length)
    out = np.empty((n, 2, length), np.float32)
    for i in range(n):
        sig = np.zeros(length, complex)
        for _ in range(3):
            sig += rng.uniform(0.1, 0.4) * np.exp(1j * (2 * np.pi * rng.uniform(-0.25, 0.25) * t
                                                      + rng.uniform(0, 2 * np.pi)))
        sig += (rng.normal(0, 0.05, length) + 1j * rng.normal(0, 0.05, length))
        out[i, 0], out[i, 1] = sig.real, sig.imag
    return out


def log_mels(rng: np.random.Generator, n: int, mels: int, frames: int) -> np.ndarray:
    """Log-mel spectrogram-like inputs: a smooth spectral envelope, formant-like bands drifting over time, noise;
    standardized per sample as keyword-spotting front ends do."""
    out = np.empty((n, mels, frames), np.float32)
    bands, times = np.arange(mels)[:, None], np.arange(frames)[None, :]
    for i in range(n):
        x = -0.05 * bands + rng.normal(0, 0.3, (mels, frames))
        for _ in range(3):
            centre = rng.uniform(5, mels - 5) + rng.uniform(-4, 4) * np.sin(times / rng.uniform(10, 40))
            x += rng.uniform(1, 3) * np.exp(-((bands - centre) ** 2) / rng.uniform(2, 8))
        out[i] = (x - x.mean()) / x.std()
    return out


# ---------------------------------------------------------------- export

MODELS = []   # (name, factory(rng) -> (module, calibration batch), torch.onnx.export kwargs, what it covers)


def register(name, covers, **export_kwargs):
    def wrap(fn):
        MODELS.append((name, fn, export_kwargs, covers))
        return fn
    return wrap


@register("fpn_detector", "FPN: Resize nearest 2x + Add; Shape/Gather/Unsqueeze/Concat -> Reshape; 3 outputs; dynamic N/H/W",
          input_names=["input"], output_names=["boxes", "scores", "landmarks"],
          dynamic_axes={"input": {0: "batch", 2: "height", 3: "width"}, "boxes": {0: "batch", 1: "priors"},
                        "scores": {0: "batch", 1: "priors"}, "landmarks": {0: "batch", 1: "priors"}})
def _fpn(rng):
    return FPNDetector(), smooth_images(rng, N_CALIB, 3, 64, 64)


@register("focus_silu", "YOLOv5 Focus (strided Slice + Concat), SiLU as Sigmoid*Mul, YOLO head Reshape/Transpose",
          input_names=["images"], output_names=["output"])
def _focus(rng):
    return FocusSiLU(), smooth_images(rng, N_CALIB, 3, 64, 64)


@register("shufflenet_block", "ShuffleNetV2: channel shuffle Reshape-Transpose-Reshape, chunk -> Split, GAP, Gemm, Softmax",
          input_names=["input"], output_names=["probs"])
def _shuffle(rng):
    return ShuffleNetSmall(), smooth_images(rng, N_CALIB, 3, 32, 32)


@register("conv1d_audio", "1-D Conv (k 33/9/3, dilation 2/4, depthwise-separable), BatchNormalization kept (TrainingMode.PRESERVE), MaxPool1d, GAP, Softmax",
          input_names=["iq"], output_names=["probs"], training=torch.onnx.TrainingMode.PRESERVE,
          do_constant_folding=False)
def _audio(rng):
    return Conv1dAudio(), iq_signals(rng, N_CALIB, 512)


@register("espcn_sr", "ESPCN: conv5x5-Tanh, conv3x3-Tanh, conv3x3 -> 9 ch, PixelShuffle(3) = DepthToSpace; dynamic H/W",
          input_names=["input"], output_names=["output"],
          dynamic_axes={"input": {2: "height", 3: "width"}, "output": {2: "out_height", 3: "out_width"}})
def _espcn(rng):
    return ESPCN(), smooth_images(rng, N_CALIB, 1, 32, 32)


@register("ssd_uint8_nhwc", "uint8 NHWC input: Cast, Transpose, Sub/Div, QuantizeLinear/DequantizeLinear; SSD heads, Softmax; dynamic batch",
          input_names=["image"], output_names=["boxes", "scores"],
          dynamic_axes={"image": {0: "batch"}, "boxes": {0: "batch"}, "scores": {0: "batch"}})
def _ssd(rng):
    imgs = smooth_images(rng, N_CALIB, 3, 64, 64)
    return SSDUint8NHWC(), np.round(imgs.transpose(0, 2, 3, 1) * 255).astype(np.uint8)   # exact: k / 255


@register("cls_head_decode", "anchor-free head: Sigmoid, Exp, ReduceMax/ArgMax, TopK, ReduceMean, ReduceSum on the host",
          input_names=["input"],
          output_names=["topk_scores", "topk_indices", "class_ids", "image_scores", "distances", "total_area"])
def _cls_head(rng):
    return ClsHeadDecode(), smooth_images(rng, N_CALIB, 3, 64, 64)


@register("unet_decoder", "U-Net decoder: ConvTranspose2d (k 2 s 2; k 4 s 2 p 1), skip Concat, Sigmoid mask",
          input_names=["input"], output_names=["mask"])
def _unet(rng):
    return UNetDecoder(), smooth_images(rng, N_CALIB, 3, 64, 64)


@register("se_mobilenetv3", "MobileNetV3: HardSwish as x * HardSigmoid(x) (opset 13), squeeze-and-excitation Mul by a "
          "per-channel vector, depthwise 3x3/5x5, residual Add, GAP, Gemm", input_names=["input"], output_names=["logits"])
def _mbv3(rng):
    return MobileNetV3Small(), smooth_images(rng, N_CALIB, 3, 64, 64)


@register("fpn_bilinear", "segmentation FPN: Resize linear (half_pixel and align_corners) by scale 2, logits upsampled",
          input_names=["input"], output_names=["logits"])
def _fpn_bilinear(rng):
    return FPNBilinear(), smooth_images(rng, N_CALIB, 3, 64, 64)


@register("dwsep_audio1d", "1-D depthwise-separable (k 33 stride 2, k 9 dilation 2 and 4), GELU as Erf, ReduceMean, Gemm",
          input_names=["mels"], output_names=["logits"])
def _dwsep(rng):
    return DWSeparableAudio1d(), log_mels(rng, N_CALIB, 40, 128)


def export_one(index: int, name: str, factory, export_kwargs: dict) -> tuple[Path, onnx.ModelProto]:
    torch.manual_seed(1000 + index)
    rng = np.random.default_rng(2000 + index)
    module, calib = factory(rng)
    plausible_batchnorm(module, 3000 + index)
    module.eval()
    example = torch.from_numpy(calib[:1].copy())
    buf = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(module, (example,), buf, dynamo=False, opset_version=OPSET,
                          **{"do_constant_folding": True, **export_kwargs})
    model = onnx.load_from_string(buf.getvalue())
    model.ir_version = min(model.ir_version, IR_VERSION)
    model.producer_name, model.producer_version = "pytorch", torch.__version__
    onnx.checker.check_model(model, full_check=True)
    path = HERE / f"{name}.onnx"
    data = model.SerializeToString()
    assert len(data) < MAX_BYTES, (name, len(data))
    path.write_bytes(data)
    input_name = model.graph.input[0].name
    np.savez_compressed(HERE / f"{name}_calib.npz", **{input_name: calib})

    # the file loads and runs in onnxruntime and agrees with torch on every calibration sample
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for i in range(N_CALIB):
        sample = calib[i:i + 1]
        got = sess.run(None, {input_name: sample})
        with torch.no_grad():
            want = module(torch.from_numpy(sample.copy()))
        want = want if isinstance(want, tuple) else (want,)
        for g, w in zip(got, want, strict=True):
            w = w.numpy()
            assert g.shape == w.shape and g.dtype == w.dtype, (name, g.shape, w.shape, g.dtype, w.dtype)
            if g.dtype.kind == "f":
                np.testing.assert_allclose(g, w, rtol=1e-3, atol=1e-4, err_msg=name)
    return path, model


def dims(vi: onnx.ValueInfoProto) -> str:
    t = vi.type.tensor_type
    shape = "x".join(d.dim_param or str(d.dim_value) for d in t.shape.dim)
    return f"{vi.name}[{shape}]:{onnx.helper.tensor_dtype_to_np_dtype(t.elem_type).name}"


def main() -> int:
    rows = []
    for index, (name, factory, export_kwargs, covers) in enumerate(MODELS):
        path, model = export_one(index, name, factory, export_kwargs)
        hist = collections.Counter(n.op_type for n in model.graph.node)
        rows.append((path.name, path.stat().st_size, len(model.graph.node),
                     ", ".join(f"{op}:{c}" for op, c in sorted(hist.items(), key=lambda kv: (-kv[1], kv[0]))),
                     " ".join(dims(i) for i in model.graph.input), " ".join(dims(o) for o in model.graph.output)))
    print(f"torch {torch.__version__}, onnx {onnx.__version__}, onnxruntime {ort.__version__}, "
          f"TorchScript exporter, opset {OPSET}, IR version <= {IR_VERSION}\n")
    print(f"{'file':<22} {'bytes':>7} {'nodes':>5}  ops / inputs / outputs")
    for fname, size, nodes, ops, ins, outs in rows:
        print(f"{fname:<22} {size:>7} {nodes:>5}  {ops}\n{'':<37}in:  {ins}\n{'':<37}out: {outs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
