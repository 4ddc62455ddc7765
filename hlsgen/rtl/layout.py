"""Where every feature map lives in the RTL's activation memory: its channel banks, plane and address.

The memory is two planes of R byte-wide banks (rtl/hg_act_memory.v). A map with G = 2^lg channel banks
keeps channel c in every bank j = c (mod G), at `base + (c >> lg) * H * W + y * W + x`:
- G = R for most maps: lane r of the array, which only ever reads channels = r (mod R) when R divides
  the channel count, finds them in its own bank;
- G = channels for a map with fewer channels than R (dividing R): the map is replicated R / G times,
  so that the R lanes, which then read several taps of the same channel, never share a bank;
- G = R also for a map whose channel count does neither when every array layer reads one tap of it (a
  1x1 convolution, a Dense on a 1x1 map): k = c_in, so lane r still reads channels = r (mod R) only;
- G = 1 for an input image whose channel count neither divides nor is divided by R: every bank holds
  the whole image (the input stream writes one element per cycle, so the copies cost no time).
A QAdd reads both inputs in the same cycle, so they live in different planes. Maps are placed first-fit
by lifetime: two maps share addresses only if no layer needs both.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import MappingError
from ..quant.params import TensorQuant


@dataclass
class FeatureMap:
    name: str
    channels: int
    height: int
    width: int
    quant: TensorQuant
    birth: int  # index of the layer that writes it (-1: the input stream)
    death: int = -1  # index of the last layer that reads it (layers + 1: the output stream)
    array_read: bool = False
    tap_read: bool = False  # an array layer reads several taps of it (k = tap * C_in + c_in wraps past C_in)
    dw_read: bool = False  # a depthwise layer reads it: also kept in the depthwise window copies
    lg: int = 0
    plane: int = 0
    base: int = 0
    dw_base: int = 0  # its place in the depthwise window copies

    @property
    def pixels(self) -> int:
        return self.height * self.width

    @property
    def banks(self) -> int:
        return 1 << self.lg

    @property
    def words(self) -> int:
        """Words per bank: one H*W slot per group of G channels."""
        return -(-self.channels // self.banks) * self.pixels


def map_shape(shape: tuple[int, ...]) -> tuple[int, int, int]:
    """(channels, height, width) of an activation tensor [N, C, H, W], [N, C, L] or [N, K]."""
    if len(shape) == 4:
        return int(shape[1]), int(shape[2]), int(shape[3])
    if len(shape) == 3:
        return int(shape[1]), 1, int(shape[2])
    if len(shape) == 2:
        return int(shape[1]), 1, 1
    raise MappingError(f"the RTL stores feature maps of rank 2 to 4, not {len(shape)}")


def choose_banks(fmap: FeatureMap, rows: int) -> None:
    """Set fmap.lg (see the module docstring)."""
    lg_rows = rows.bit_length() - 1
    if not fmap.array_read or fmap.channels % rows == 0:
        fmap.lg = lg_rows
    elif rows % fmap.channels == 0:
        fmap.lg = fmap.channels.bit_length() - 1
    elif fmap.birth < 0:
        fmap.lg = 0
    elif not fmap.tap_read:
        fmap.lg = lg_rows
    else:
        raise MappingError(
            f"feature map {fmap.name!r} has {fmap.channels} channels, which neither divide nor are divided by the "
            f"array's {rows} rows, and a Conv/Dense layer reads several taps of it: the RTL's line buffer cannot "
            "spread it over its banks without bank conflicts")


def allocate(maps: list[FeatureMap], different_planes: list[tuple[str, str]]) -> tuple[int, int]:
    """Give every map a plane and a base address; returns the two planes' depths (words per bank)."""
    by_name = {m.name: m for m in maps}
    placed: list[FeatureMap] = []
    for fmap in sorted(maps, key=lambda m: (m.birth, m.name)):
        required = None
        for a, b in different_planes:
            other = b if a == fmap.name else a if b == fmap.name else None
            if other is not None and by_name[other] in placed:
                need = 1 - by_name[other].plane
                if required is not None and required != need:
                    raise MappingError(f"feature map {fmap.name!r} must live in both activation planes")
                required = need
        options = [required] if required is not None else [0, 1]
        candidates = [(plane, _first_fit(fmap, [(m, m.base) for m in placed if m.plane == plane])) for plane in options]
        fmap.plane, fmap.base = min(candidates, key=lambda pb: (pb[1] + fmap.words, pb[0]))
        placed.append(fmap)
    depth = [max([m.base + m.words for m in placed if m.plane == p], default=0) for p in (0, 1)]
    return max(depth[0], 1), max(depth[1], 1)


def allocate_copies(maps: list[FeatureMap]) -> int:
    """Addresses in the depthwise window copies (one word per pixel and C-channel block) for the maps a
    depthwise layer reads; returns the copies' depth."""
    placed: list[tuple[FeatureMap, int]] = []
    for fmap in sorted((m for m in maps if m.dw_read), key=lambda m: (m.birth, m.name)):
        fmap.dw_base = _first_fit(fmap, placed)
        placed.append((fmap, fmap.dw_base))
    return max([base + m.words for m, base in placed], default=1)


def _first_fit(fmap: FeatureMap, spans: list[tuple[FeatureMap, int]]) -> int:
    """The lowest base where fmap overlaps no (map, base) of `spans` that is alive at the same time."""
    busy = sorted((base, base + m.words) for m, base in spans if m.birth <= fmap.death and fmap.birth <= m.death)
    base = 0
    for start, end in busy:
        if base + fmap.words <= start:
            break
        base = max(base, end)
    return base
