"""Where every feature map lives in the accelerator's activation memory: its channel banks, plane and
address. Decided once, by the mapping (the layer program); the RTL and the HLS C++ read it.

The memory is two planes of R banks (rtl/hg_act_memory.v). A map with G = 2^lg channel banks
keeps channel c in every bank j = c (mod G), at `base + (c >> lg) * H * W + y * W + x`:
- G = R for most maps: lane r of the array, which only ever reads channels = r (mod R) when R divides
  the channel count, finds them in its own bank;
- G = channels for a map with fewer channels than R (dividing R): the map is replicated R / G times,
  so that the R lanes, which then read several taps of the same channel, never share a bank;
- G = R also for a map whose channel count does neither when every array layer reads one tap of it (a
  1x1 convolution, a Dense on a 1x1 map): k = c_in, so lane r still reads channels = r (mod R) only;
- G = 1 for an input image whose channel count neither divides nor is divided by R: every bank holds
  the whole image (the input stream writes one element per cycle, so the copies cost no time);
- G = 1 also for any other map of such a channel count that an array layer reads several taps of: every
  bank holds the whole map, so the lanes never share a bank, but the writer must write each value into
  every bank (`conflicts`: the RTL does not implement such a writer; the C++ serializes the copies).
A QAdd reads both inputs in the same cycle, so they live in different planes. Maps are placed first-fit
by lifetime: two maps share addresses only if no layer needs both.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, fields

from ..errors import MappingError
from ..quant.params import TensorQuant


@dataclass(frozen=True)
class MapPlacement:
    """A feature map's place in activation memory (one row of the layer program's `maps`)."""

    name: str
    channels: int
    height: int
    width: int
    quant: TensorQuant
    birth: int  # index of the program row that writes it (-1: the input stream)
    death: int  # index of the last row that reads it (rows + 1: the output stream)
    array_read: bool  # a Conv/Dense row reads it (not in depthwise mode)
    tap_read: bool  # ... several taps of it (k = tap * C_in + c_in wraps past C_in)
    dw_read: bool  # a depthwise row reads it: also kept in the depthwise window copies
    lg: int  # G = 2^lg channel banks
    plane: int
    base: int
    dw_base: int  # its place in the depthwise window copies
    conflicts: bool = False  # G = 1 for a map the writer writes: each value goes to every bank

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

    def to_json(self) -> dict:
        return {"channels": self.channels, "height": self.height, "width": self.width, "bits": self.quant.bits,
                "signed": self.quant.signed, "written_by": self.birth, "last_read_by": self.death,
                "array_read": self.array_read, "tap_read": self.tap_read,
                "banks": self.banks, "plane": self.plane, "base": self.base, "words_per_bank": self.words,
                "depthwise_copy_base": self.dw_base if self.dw_read else None, "bank_conflicts": self.conflicts}


@dataclass
class FeatureMap:
    """A map while it is being placed (frozen into a MapPlacement)."""

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
    conflicts: bool = False

    def freeze(self) -> MapPlacement:
        return MapPlacement(**{f.name: getattr(self, f.name) for f in fields(MapPlacement)})

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
    """(channels, height, width) of an activation tensor [N, C, H, W], [N, C, L] or [N, K] (more spatial
    axes: their product is the height)."""
    if len(shape) < 2:
        raise MappingError(f"the activation memory stores feature maps [N, C, ...], not of rank {len(shape)}")
    if len(shape) == 2:
        return int(shape[1]), 1, 1
    return int(shape[1]), math.prod(int(d) for d in shape[2:-1]), int(shape[-1])


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
        fmap.lg, fmap.conflicts = 0, True


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


@dataclass(frozen=True)
class Memory:
    """The activation memory of a layer program: every feature map's placement, the planes' depths and
    the depthwise window copies."""

    maps: tuple[MapPlacement, ...]
    aliases: dict  # tensor -> the map that holds it (a Reshape's output is its input's map)
    plane_depth: tuple[int, int]  # words per bank
    dw_depth: int  # words per depthwise window copy
    dw_copies: int  # depthwise window copies (0: no depthwise row)

    def placement(self, tensor: str) -> MapPlacement:
        name = self.aliases.get(tensor, tensor)
        return next(m for m in self.maps if m.name == name)

    def to_json(self) -> dict:
        return {"plane_depth": list(self.plane_depth), "depthwise_copies": self.dw_copies,
                "depthwise_depth": self.dw_depth, "aliases": dict(sorted(self.aliases.items())),
                "maps": {m.name: m.to_json() for m in self.maps}}


def place_maps(graph, layers, rows: int) -> Memory:
    """Place the maps the program's rows (`layers`, hlsgen.hw.mapping.LayerMap) read and write."""
    maps: dict[str, FeatureMap] = {}
    aliases: dict[str, str] = {}

    def add(name: str, birth: int) -> None:
        c, h, w = map_shape(graph.shape(name))
        maps[name] = FeatureMap(name, c, h, w, graph.quant[name], birth)

    for t in graph.inputs:
        add(t, -1)
    for i, layer in enumerate(layers):
        if layer.kind == "reshape":
            aliases[layer.output] = aliases.get(layer.inputs[0], layer.inputs[0])
        else:
            add(layer.output, i)
    for i, layer in enumerate(layers):
        if layer.kind == "reshape":
            continue
        depthwise, array = layer.kind == "depthwise", layer.unit == "systolic_array"
        for t in layer.inputs:
            fmap = maps[aliases.get(t, t)]
            fmap.death = max(fmap.death, i)
            fmap.array_read |= array and not depthwise
            fmap.tap_read |= array and not depthwise and _taps(layer, fmap) > 1
            fmap.dw_read |= depthwise
    for t in graph.outputs:
        maps[aliases.get(t, t)].death = len(layers) + 1
    for fmap in maps.values():
        choose_banks(fmap, rows)
    apart = [tuple(aliases.get(t, t) for t in layer.inputs) for layer in layers if layer.op == "QAdd"]
    depths = allocate(list(maps.values()), [(a, b) for a, b in apart if a != b])
    dw_depth = allocate_copies(list(maps.values()))
    taps = [layer.tiles.work.reduction for layer in layers if layer.kind == "depthwise"]
    return Memory(tuple(m.freeze() for m in maps.values()), aliases, depths, dw_depth, min(rows, max(taps, default=0)))


def _taps(layer, fmap: FeatureMap) -> int:
    """Kernel positions an array row reduces over: a Conv's kernel, a Dense's input pixels."""
    return int(math.prod(layer.attrs.conv.kernel_shape)) if layer.op == "QConv" else fmap.pixels
