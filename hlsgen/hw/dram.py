"""The feature-map image in external memory, as the host sees it: a map at `dram_base` is laid out word
for word as the activation memory holds it (hlsgen.hw.placement): word `(c >> lg) * H * W + y * W + x`,
R bytes, byte j from bank j, which holds channel c = (block << lg) + (j mod G) (0 past the channels);
values in two's complement. An input the host folds (`fold`, hlsgen.ir.InputFold) is packed folded: channel
(ky * kw + kx) * C + c of pixel (y, x) is channel c of image pixel (sy y + ky - top, sx x + kx - left)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from .placement import MapPlacement


def pack_map(values: np.ndarray, placement: MapPlacement, rows: int) -> np.ndarray:
    """The words [words, R] (uint8) of a map's values [C, H, W] (or any shape of C * H * W elements)."""
    p = placement
    x = np.asarray(values, dtype=np.int64)
    if p.fold is not None:  # an input the host folds: pixel blocks or windows into channels (passes.input_fold)
        x = p.fold.apply(x.reshape(p.fold.image))
    x = x.reshape(p.channels, p.height, p.width)
    blocks = -(-p.channels // p.banks)
    padded = np.zeros((blocks * p.banks, p.height, p.width), np.int64)
    padded[:p.channels] = x
    lanes = padded.reshape(blocks, p.banks, p.pixels)[:, np.arange(rows) % p.banks, :]  # [block, bank, pixel]
    return (lanes.transpose(0, 2, 1).reshape(blocks * p.pixels, rows) & 0xFF).astype(np.uint8)


def pack_gather(placement: MapPlacement, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """pack_map as a table, for a host that packs without the placement: (source, constant), the bytes of the
    words [words * R]: byte k is element source[k] of the flat values (& 0xFF), or constant[k] where source[k]
    is -1 (a fold's padding or an unused bank)."""
    p = placement
    count = int(np.prod(p.fold.image)) if p.fold is not None else p.channels * p.pixels
    numbered = replace(p, fold=replace(p.fold, fill=0)) if p.fold is not None else p
    index = np.arange(1, count + 1, dtype=np.int64)  # 0: no element
    source = sum(pack_map(index >> (8 * k), numbered, rows).astype(np.int64) << (8 * k)
                 for k in range(-(-count.bit_length() // 8)))
    constant = pack_map(np.zeros(count, np.int64), p, rows)
    return source.ravel() - 1, constant.ravel()


def unpack_map(words: np.ndarray, placement: MapPlacement) -> np.ndarray:
    """The values [C, H, W] the words of a map hold (the first G banks of each word)."""
    p = placement
    w = np.asarray(words, dtype=np.uint8).reshape(-1, p.pixels, words.shape[-1])[:, :, :p.banks]
    values = w.transpose(0, 2, 1).reshape(-1, p.height, p.width)[:p.channels].astype(np.int64)
    return values - 256 * (values >= 128) if p.quant.signed else values
