"""Where every feature map lives in the accelerator's activation memory: its channel banks, plane and
address. Decided once, by the mapping (the layer program); the RTL and the HLS C++ read it.

The memory is two planes of R banks (rtl/hg_act_memory.v). A map with G = 2^lg channel banks
keeps channel c in every bank j = c (mod G), at `base + (c >> lg) * H * W + y * W + x`:
- G = R for most maps: lane r of the array, which only ever reads channels = r (mod R) when R divides
  the channel count, finds them in its own bank;
- G = channels for a map with fewer channels than R (dividing R): the map is replicated R / G times,
  so that the R lanes, which then read several taps of the same channel, never share a bank;
- G = R also for a map whose channel count does neither: a Conv (or a Dense reading several pixels)
  that reads several taps of it pads each tap to C_pad = ceil(C / R) * R reduction lanes (the row's
  `reduction_channels`, decided by the mapping with `reduction_channels` below), so lane r still reads
  channels = r (mod R) only; a padded lane reads nothing and its weights are zero;
- G = 1 for an input image whose channel count neither divides nor is divided by R: every bank holds
  the whole image (the input stream writes one element per cycle, so the copies cost no time) and its
  readers' taps are not padded; or, when the mapping packs it (when the image would live in external
  memory, or its R copies crowd the maps out of the activation memory, hlsgen.hw.mapping.map_model),
  G = the power of two above its channels when it has fewer than R, the empty banks' lanes padded in its
  readers' taps (few_channel_banks), else G = R and its readers' taps padded to C_pad as any map's.
A QAdd or QMul reads both inputs in the same cycle, so they live in different planes. Maps are placed greedy by
size, each at the lowest free address of its lifetime: two maps share addresses only if no layer needs both.

A map the mapping keeps in external memory (hlsgen.hw.banding) has no place on chip: it has a `dram_base`,
the address of its first word in the feature-map image, whose words are the activation memory's (R bytes,
byte j from bank j) laid out exactly as on chip, and it moves through on-chip band buffers (ordinary maps
that `hold` some of its rows, with its banks).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

from ..errors import MappingError
from ..ir import InputFold
from ..quant.params import TensorQuant
from .window_banks import kernel_taps, window_pitch

TWO_MAP_OPS = ("QAdd", "QMul")  # vector ops that read two maps in the same cycle
ALLOCATION_PASSES = 4


class _Extent:
    """The sizes a map's shape and channel banks give it (for MapPlacement and FeatureMap)."""

    height: int  # a batched map's: its images' heights stacked
    width: int
    channels: int
    lg: int
    images: int

    @property
    def pixels(self) -> int:
        return self.height * self.width

    @property
    def image_height(self) -> int:
        return self.height // self.images

    @property
    def banks(self) -> int:
        return 1 << self.lg

    @property
    def words(self) -> int:
        """Words per bank: one H*W slot per group of G channels."""
        return -(-self.channels // self.banks) * self.pixels

    @property
    def dw_stride(self) -> int:
        """Words between its channel blocks in the depthwise window memory (rows `dw_pitch` words apart)."""
        return self.height * self.dw_pitch

    @property
    def dw_words(self) -> int:
        """Words it occupies in the depthwise window memory (hlsgen.hw.window_banks)."""
        return -(-self.channels // self.banks) * self.dw_stride if self.dw_read else 0


@dataclass(frozen=True)
class MapPlacement(_Extent):
    """A feature map's place in activation memory (one row of the layer program's `maps`)."""

    name: str
    channels: int
    height: int
    width: int
    quant: TensorQuant
    birth: int  # index of the program row that writes it (-1: the input stream)
    death: int  # index of the last row that reads it (rows + 1: the output stream)
    array_read: bool  # a Conv/Dense row reads it (not in depthwise mode)
    dw_read: bool  # a depthwise row reads it: also kept in the depthwise window memory
    lg: int  # G = 2^lg channel banks
    plane: int
    base: int
    dw_base: int  # its place in the depthwise window memory
    holds: str = ""  # a band buffer: the map some of whose rows it holds (external, or a run's, nowhere else)
    dram_base: int | None = None  # in external memory: its first word in the feature-map image
    images: int = 1  # a batch's map (hlsgen.hw.batching): N images, image n in rows [n H, (n + 1) H)
    fold: InputFold | None = None  # an input the host folds: its pixel blocks or windows (passes.input_fold)
    dw_pitch: int = 0  # its row pitch in the depthwise window memory (hlsgen.hw.window_banks)

    @property
    def tensor(self) -> str:
        """The graph tensor whose values the map holds."""
        return self.holds or self.name

    def to_json(self) -> dict:
        return {"channels": self.channels, "height": self.height, "width": self.width, "bits": self.quant.bits,
                "signed": self.quant.signed, "written_by": self.birth, "last_read_by": self.death,
                "array_read": self.array_read,
                "banks": self.banks, "plane": self.plane, "base": self.base, "words_per_bank": self.words,
                "depthwise_copy_base": self.dw_base if self.dw_read else None,
                "depthwise_pitch": self.dw_pitch if self.dw_read else None,
                "holds": self.holds or None, "dram_base": self.dram_base, "images": self.images,
                **({"fold": self.fold.to_json()} if self.fold is not None else {})}


@dataclass
class FeatureMap(_Extent):
    """A map while it is being placed (frozen into a MapPlacement)."""

    name: str
    channels: int
    height: int
    width: int
    quant: TensorQuant
    birth: int  # index of the layer that writes it (-1: the input stream)
    death: int = -1  # index of the last layer that reads it (layers + 1: the output stream)
    array_read: bool = False
    dw_read: bool = False  # a depthwise layer reads it: also kept in the depthwise window memory
    lanes: int = 0  # the most reduction lanes per tap an array row reads it with (a packed image: G > channels)
    lg: int = 0
    plane: int = 0
    base: int = 0
    dw_base: int = 0  # its place in the depthwise window memory
    holds: str = ""
    dram_base: int | None = None
    images: int = 1
    fold: InputFold | None = None
    held: bool = False  # a batch's map the head writes image by image: it lives from the program's start
    dw_pitch: int = 0
    dw_taps: list = field(default_factory=list)  # the taps of the depthwise rows that read it

    @property
    def live_from(self) -> int:
        return -1 if self.held else self.birth

    def freeze(self) -> MapPlacement:
        return MapPlacement(**{f.name: getattr(self, f.name) for f in fields(MapPlacement)})


def map_shape(shape: tuple[int, ...]) -> tuple[int, int, int]:
    """(channels, height, width) of an activation tensor [N, C, H, W], [N, C, L] or [N, K] (more spatial
    axes: their product is the height)."""
    if len(shape) < 2:
        raise MappingError(f"the activation memory stores feature maps [N, C, ...], not of rank {len(shape)}")
    if len(shape) == 2:
        return int(shape[1]), 1, 1
    return int(shape[1]), math.prod(int(d) for d in shape[2:-1]), int(shape[-1])


def odd_channels(channels: int, rows: int) -> bool:
    """A channel count that neither divides R nor is a multiple of it (its maps' taps pad to C_pad lanes)."""
    return channels % rows != 0 and rows % channels != 0


def choose_banks(fmap: FeatureMap, rows: int) -> None:
    """Set fmap.lg (see the module docstring)."""
    odd = fmap.array_read and odd_channels(fmap.channels, rows)
    if fmap.array_read and fmap.channels < rows and rows % fmap.channels == 0:
        fmap.lg = fmap.channels.bit_length() - 1
    elif odd and fmap.birth < 0:  # packed (lanes > channels: G = min(lanes, R)) or every bank holding the image
        fmap.lg = min(fmap.lanes, rows).bit_length() - 1 if fmap.lanes > fmap.channels else 0
    else:
        fmap.lg = rows.bit_length() - 1


def concat_replicas(layer, rows: int) -> set[str]:
    """The inputs of a channel Concat that start inside a block of R channels, are fewer than R (dividing R)
    and start at a multiple of their own count: kept replicated like a map an array row reads (G = their
    channels), so that bank j holds channel j mod G and the vector lane j that reads bank j meets output
    channel j of the block (the RTL writes them from the block's first channel: docs/rtl.md, "Copies")."""
    if layer.op != "Concat" or getattr(layer.attrs, "axis", None) != 1:
        return set()
    out, first = set(), 0
    for t, shape in zip(layer.inputs, layer.input_shapes):
        count = int(shape[1])
        if first % rows and count < rows and rows % count == 0 and first % count == 0:
            out.add(t)
        first += count
    return out


def reduction_channels(channels: int, rows: int, taps: int, streamed: bool, packed: bool = False) -> int:
    """C_pad: the reduction lanes per tap of an array row reading `taps` taps of a map of `channels`
    channels (`streamed`: the input image, G = 1, or `packed`, G = few_channel_banks). Past a tap's channels,
    k = tap * C_pad + c wraps onto lane r = c (mod R) only if C_pad is a multiple of R, or R one of C_pad's,
    or G of a packed image (see the module docstring). A packed image's pointwise reader pads its one tap too:
    its lanes past the channels are what makes the image packed (choose_banks)."""
    if not odd_channels(channels, rows) or (streamed and not packed) or (taps == 1 and not streamed):
        return channels
    if streamed and channels < rows:
        return few_channel_banks(channels)
    return -(-channels // rows) * rows


def few_channel_banks(channels: int) -> int:
    """G of a packed input image (fewer channels than R, not dividing it: 3 on 16 rows): the power of two
    above its channels, a bank per channel and the rest empty, replicated R / G times. Its readers' taps are
    padded to G lanes (a 3x3 Conv reads 36 lanes, not 27); in exchange a pixel is one word, not one per
    channel: C times fewer words on chip and in the feature-map image, and C times fewer bytes to load."""
    return 1 << (channels - 1).bit_length()


def read_lanes(layer) -> int:
    """The reduction lanes per tap an array row (not depthwise) reads its input with (0: another row)."""
    array = layer.unit == "systolic_array" and layer.kind != "depthwise"
    return layer.tiles.work.reduction_channels if array and hasattr(layer.tiles, "work") else 0


def allocate(maps: list[FeatureMap], different_planes: list[tuple[str, str]],
             apart: list[tuple[str, str]] = (), limits: tuple[int, int] | None = None) -> tuple[int, int]:
    """Give every map a plane and a base address; returns the two planes' depths (words per bank).
    Greedy by size (the largest maps first, each at the lowest address no map alive at the same time
    holds), in the plane whose depth it grows least, at equal growth away from the maps it is preferably
    `apart` from; then again, knowing the depths the last pass reached (a plane that must grow for later
    maps is free below that depth), while the sum shrinks. `limits`: the planes' words per bank (the target's
    top splits them unevenly, hlsgen.hw.overlay_memory): a plane a map would overflow is its last choice."""
    best: tuple[int, int] | None = None
    hint = (0, 0)
    for _ in range(ALLOCATION_PASSES):
        depths = _greedy(maps, different_planes, hint, apart, limits)
        if best is not None and sum(depths) >= sum(best):
            break
        best, hint, placed = depths, depths, [(m.plane, m.base) for m in maps]
    for fmap, (plane, base) in zip(maps, placed):
        fmap.plane, fmap.base = plane, base
    return max(best[0], 1), max(best[1], 1)


def _greedy(maps: list[FeatureMap], different_planes: list[tuple[str, str]], hint: tuple[int, int],
            apart: list[tuple[str, str]], limits: tuple[int, int] | None) -> tuple[int, int]:
    limit = limits or (math.inf, math.inf)
    by_name = {m.name: m for m in maps}
    placed: set[str] = set()
    depth, grown = list(hint), [0, 0]
    # under uneven limits the maps that must be apart go first, each of a pair taking a plane before a free map
    # of their size fills the small one (ResNet-18's last QAdds on systolic32x32's top)
    paired = {n for pair in different_planes for n in pair} if limits else set()
    for fmap in sorted(maps, key=lambda m: (-m.words, m.name not in paired, m.birth, m.name)):
        required = None
        for a, b in different_planes:
            other = b if a == fmap.name else a if b == fmap.name else None
            if other is not None and other in placed:
                need = 1 - by_name[other].plane
                if required is not None and required != need:
                    raise MappingError(f"feature map {fmap.name!r} must live in both activation planes")
                required = need
        options = [required] if required is not None else [0, 1]
        candidates = [(plane, _first_fit(fmap, [(by_name[n], by_name[n].base) for n in placed
                                                if by_name[n].plane == plane])) for plane in options]
        near = [by_name[b if a == fmap.name else a].plane for a, b in apart
                if fmap.name in (a, b) and (b if a == fmap.name else a) in placed]
        fmap.plane, fmap.base = min(candidates, key=lambda pb: (pb[1] + fmap.words > limit[pb[0]],
                                                                max(0, pb[1] + fmap.words - depth[pb[0]]),
                                                                near.count(pb[0]), pb[1] + fmap.words, pb[0]))
        depth[fmap.plane] = max(depth[fmap.plane], fmap.base + fmap.words)
        grown[fmap.plane] = max(grown[fmap.plane], fmap.base + fmap.words)
        placed.add(fmap.name)
    return grown[0], grown[1]


def allocate_copies(maps: list[FeatureMap], banks: int) -> int:
    """Pitches and addresses in the depthwise window memory (one word per pixel and C-channel block, R banks:
    hlsgen.hw.window_banks) for the maps a depthwise layer reads; returns its words per bank."""
    placed: list[tuple[FeatureMap, int]] = []
    for fmap in (m for m in maps if m.dw_read):
        fmap.dw_pitch = window_pitch(fmap.width, fmap.dw_taps, banks) or 0
        if not fmap.dw_pitch:
            raise MappingError(f"the depthwise layers reading {fmap.name!r} need window pitches no one pitch "
                               f"satisfies on {banks} banks (hlsgen.hw.window_banks)")
    for fmap in sorted((m for m in maps if m.dw_read), key=lambda m: (-m.dw_words, m.birth, m.name)):
        fmap.dw_base = _first_fit(fmap, placed, lambda m: m.dw_words)
        placed.append((fmap, fmap.dw_base))
    return -(-max([base + m.dw_words for m, base in placed], default=1) // banks)


def _first_fit(fmap: FeatureMap, spans: list[tuple[FeatureMap, int]], size=lambda m: m.words) -> int:
    """The lowest base where fmap overlaps no (map, base) of `spans` that is alive at the same time (`size`
    words each)."""
    busy = sorted((base, base + size(m)) for m, base in spans
                  if m.live_from <= fmap.death and fmap.live_from <= m.death)
    base = 0
    for start, end in busy:
        if base + size(fmap) <= start:
            break
        base = max(base, end)
    return base


@dataclass(frozen=True)
class Memory:
    """The activation memory of a layer program: every feature map's placement, the planes' depths and
    the depthwise window memory; and the feature-map image in external memory."""

    maps: tuple[MapPlacement, ...]
    aliases: dict  # tensor -> the map that holds it (a Reshape's output is its input's map)
    plane_depth: tuple[int, int]  # words per bank
    dw_depth: int  # words per bank of the depthwise window memory
    dw_copies: int  # banks of the depthwise window memory (0: no depthwise row; else R)
    dram_words: int = 0  # the feature-map image in external memory, in activation-memory words

    def placement(self, tensor: str) -> MapPlacement:
        name = self.aliases.get(tensor, tensor)
        return next(m for m in self.maps if m.name == name)

    @property
    def held_depth(self) -> tuple[int, int]:
        """Words per bank each plane's maps occupy: a plane that holds none keeps a one-word memory (no memory
        is empty), a register rather than buffer memory, and occupies 0."""
        held = {m.plane for m in self.maps if m.dram_base is None}
        return tuple(depth if plane in held else 0 for plane, depth in enumerate(self.plane_depth))

    @property
    def words_per_bank(self) -> int:
        """What the placement occupies: both planes and the depthwise window memory, per bank."""
        return sum(self.held_depth) + self.dw_copies * self.dw_depth

    @property
    def external(self) -> tuple[MapPlacement, ...]:
        return tuple(m for m in self.maps if m.dram_base is not None)

    def to_json(self) -> dict:
        return {"plane_depth": list(self.plane_depth), "depthwise_copies": self.dw_copies,
                "depthwise_depth": self.dw_depth, "dram_words": self.dram_words,
                "aliases": dict(sorted(self.aliases.items())), "maps": {m.name: m.to_json() for m in self.maps}}


def batched_maps(layers) -> dict[str, tuple[int, bool]]:
    """The maps a batched tail (hlsgen.hw.batching: its rows have `images` N) keeps N images of, stacked
    along their height: map -> (N, whether the head writes it image by image, so that it lives from the
    program's start while the head runs again for the next images)."""
    tail = next((i for i, layer in enumerate(layers) if layer.images > 1), len(layers))
    alias: dict[str, str] = {}
    birth: dict[str, int] = {}
    for i, layer in enumerate(layers):
        if layer.kind == "reshape":
            alias[layer.output] = alias.get(layer.inputs[0], layer.inputs[0])
        else:
            birth.setdefault(layer.output, i)
    batched = {}
    for layer in layers[tail:]:
        if layer.kind != "reshape":
            for t in layer.inputs:
                batched[alias.get(t, t)] = (layer.images, birth.get(alias.get(t, t), -1) < tail)
            batched[layer.output] = (layer.images, False)
    return batched


def place_maps(graph, layers, rows: int, limits: tuple[int, int] | None = None) -> Memory:
    """Place the maps the program's rows (`layers`, hlsgen.hw.rows.LayerMap) read and write: a map a
    `store` row writes lives in external memory, a map a `load` row (or a row whose output a `store` row
    moves) writes is a band buffer. `limits`: the planes' words per bank, when they are split (allocate)."""
    maps: dict[str, FeatureMap] = {}
    aliases: dict[str, str] = {}
    moves = {layer.move.buffer: layer.move for layer in layers if layer.move is not None}
    external = {layer.move.tensor for layer in layers if layer.move is not None}
    batched = batched_maps(layers)

    def add(name: str, birth: int, writer=None) -> None:
        move = moves.get(name)
        if move is None and name not in graph.quant:  # a band of a run (banding's fused-layer tiling): rows of
            tensor = graph.nodes[writer.nodes[-1]].outputs[0]  # its layer's output, which lives nowhere else
            c, h, w = map_shape(writer.output_shape)
            maps[name] = FeatureMap(name, c, h, w, graph.quant[tensor], birth, holds=tensor)
            return
        c, h, w = map_shape(graph.shape(move.tensor if move else name))
        if move is not None:
            h = move.rows[1] - move.rows[0]
            c = move.channels[1] - move.channels[0] if move.channels else c
        images, held = batched.get(name, (1, False))
        maps[name] = FeatureMap(name, c, h * images, w, graph.quant[move.tensor if move else name], birth,
                                holds=move.tensor if move else "", images=images, held=held)

    for t in graph.inputs:
        add(t, -1)
        maps[t].fold = graph.input_folds.get(t)  # an input the host folds (hlsgen.passes.input_fold)
    for i, layer in enumerate(layers):
        if layer.kind == "reshape":
            aliases[layer.output] = aliases.get(layer.inputs[0], layer.inputs[0])
        elif layer.output not in maps:
            add(layer.output, i, layer)
    for i, layer in enumerate(layers):
        if layer.kind == "reshape":
            continue
        depthwise, array = layer.kind == "depthwise", layer.unit == "systolic_array"
        replicated = concat_replicas(layer, rows)
        for t in layer.inputs:
            fmap = maps[aliases.get(t, t)]
            fmap.death = max(fmap.death, i)
            fmap.array_read |= (array and not depthwise) or t in replicated
            fmap.lanes = max(fmap.lanes, read_lanes(layer))
            fmap.dw_read |= depthwise
            if depthwise:
                fmap.dw_taps.append(window_taps(graph, layer))
    for t in graph.outputs:
        maps[aliases.get(t, t)].death = len(layers) + 1
    for fmap in maps.values():
        if fmap.holds in maps:  # the external map is read as its buffers are
            maps[fmap.holds].array_read |= fmap.array_read
            maps[fmap.holds].lanes = max(maps[fmap.holds].lanes, fmap.lanes)
    for fmap in maps.values():
        choose_banks(fmap, rows)
    for fmap in maps.values():
        if fmap.holds in maps:  # a buffer moves whole words of its external map: the same banks
            fmap.lg = maps[fmap.holds].lg
    dram = 0
    for fmap in sorted((maps[t] for t in external), key=lambda m: (m.birth, m.name)):
        fmap.dram_base, fmap.dw_read = dram, False
        dram += fmap.words
    on_chip = [m for m in maps.values() if m.name not in external]
    apart = [tuple(aliases.get(t, t) for t in layer.inputs) for layer in layers if layer.op in TWO_MAP_OPS]
    depths = allocate(on_chip, [(a, b) for a, b in apart if a != b], _apart_bands(layers, aliases, external), limits)
    dw_depth = allocate_copies(on_chip, rows)
    depthwise = any(layer.kind == "depthwise" for layer in layers)
    return Memory(tuple(m.freeze() for m in maps.values()), aliases, depths, dw_depth, rows if depthwise else 0, dram)


def window_taps(graph, layer) -> tuple[tuple[int, int], ...]:
    """The taps (dy, dx) of a depthwise row, in lane order."""
    conv = graph.nodes[layer.nodes[0]].attrs.conv
    return kernel_taps(conv.kernel_shape, conv.dilations)


def _apart_bands(layers, aliases: dict[str, str], external: set[str]) -> list[tuple[str, str]]:
    """Pairs of maps best placed in different planes: a band's inputs and the outputs of its layer's bands
    next to it, so that while a band computes, the next band's load writes one plane as the engine writes
    the other, and the last band's store reads one as the engine reads the other (hlsgen.hw.queues)."""
    bands: dict[str, list] = {}
    for layer in layers:
        if layer.band is not None:
            ins = [aliases.get(t, t) for t in layer.inputs]
            bands.setdefault(layer.nodes[0], []).append(([t for t in ins if t not in external], layer.output))
    pairs = []
    for rows in bands.values():
        for k, (ins, _) in enumerate(rows):
            pairs += [(t, out) for _, out in rows[max(k - 1, 0):k + 2] for t in ins]
    return pairs
