"""How the host rearranges an input image before the accelerator reads it (hlsgen.passes.input_fold).

The folded map's channel (ky * kw + kx) * C + c at pixel (y, x) is channel c of the image's pixel
(sy * y + ky - top, sx * x + kx - left), `fill` where that is off the image: the windows of a kernel
kh x kw moved into channels (im2col). A kernel equal to its strides with no pads moves each b x b pixel
block into channels (SpaceToDepth b); kernel and strides 1 leave the image as it is."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class InputFold:
    image: tuple[int, int, int]  # the model's image: channels, height, width
    kernel: tuple[int, int]
    strides: tuple[int, int]
    pads: tuple[int, int, int, int] = (0, 0, 0, 0)  # top, left, bottom, right
    fill: int = 0  # the value of a tap off the image (the reading convolution's input zero point)

    @classmethod
    def identity(cls, channels: int, height: int, width: int) -> "InputFold":
        """A map the host packs as it is: a 1 x 1 kernel of stride 1."""
        return cls((channels, height, width), (1, 1), (1, 1))

    @property
    def shape(self) -> tuple[int, int, int]:
        """The folded map's channels, height and width."""
        c, h, w = self.image
        (kh, kw), (sy, sx), (top, left, bottom, right) = self.kernel, self.strides, self.pads
        return c * kh * kw, (h + top + bottom - kh) // sy + 1, (w + left + right - kw) // sx + 1

    @property
    def windows(self) -> bool:
        """Overlapping or padded windows (im2col), not disjoint pixel blocks (SpaceToDepth)."""
        return self.kernel != self.strides or any(self.pads)

    def apply(self, x: np.ndarray) -> np.ndarray:
        """The folded array [..., K, H', W'] of an image array [..., C, H, W]."""
        x = np.asarray(x)
        lead, (kh, kw), (sy, sx), (top, left, bottom, right) = x.shape[:-3], self.kernel, self.strides, self.pads
        _, height, width = self.shape
        padded = np.pad(x, [(0, 0)] * (x.ndim - 2) + [(top, bottom), (left, right)], constant_values=self.fill)
        view = np.lib.stride_tricks.sliding_window_view(padded, (kh, kw), axis=(-2, -1))
        view = view[..., :(height - 1) * sy + 1:sy, :(width - 1) * sx + 1:sx, :, :]  # [..., C, H', W', kh, kw]
        return np.moveaxis(view, (-2, -1), (-5, -4)).reshape(*lead, -1, height, width)

    def to_json(self) -> dict:
        return {"image": list(self.image), "kernel": list(self.kernel), "strides": list(self.strides),
                "pads": list(self.pads), "fill": self.fill}

    @classmethod
    def from_json(cls, doc: dict) -> "InputFold":
        return cls(tuple(doc["image"]), tuple(doc["kernel"]), tuple(doc["strides"]), tuple(doc["pads"]),
                   int(doc["fill"]))
