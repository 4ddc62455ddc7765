"""Feature maps in external memory: which maps the activation memory cannot hold, and the bands the rows
that read or write them run in (docs/program.md, "Feature maps in external memory").

- Every map stays on chip while every row's live maps fit `buffers.input` (small models keep their speed).
- Otherwise maps go to external memory one at a time, the largest map live at the first row that does not
  fit, until every row fits. A row with an external operand runs in bands of output rows: before a band,
  `load` rows copy the rows of its external inputs the band reads (with the kernel's halo) into on-chip
  band buffers; after it, a `store` row copies its output band out (hlsgen.hw.cycles.dma_cycles).
- A row whose bands fit twice over is double-buffered (_pipelined): its copies can overlap its compute on
  the two queues of hlsgen.hw.queues.
- Runs (fused-layer tiling, _Planner.runs): a banded array row whose external output only the next
  banded array row reads (its one operand) runs band by band with it; the next row reads the band buffer
  the row wrote, so the map between them never moves through the port (its halo rows are computed twice).
  A run's first row may read its input on chip, whole: its bands' windows start their rows down the map
  (`in_rows` the whole map, `pad_top` = pad - y0 * stride, negative past the first band).
  fit_activation_memory plans without runs, with runs, and with runs where array rows take bands over all
  their channels when they fit (a row in channel slices is in no run), and keeps the fastest program.
- A row in more than one band has all its operands external (a band reads and writes only buffers), but for
  an output that fits on chip beside them (a model output, or any other written through the writer in bands
  of rows over all its channels): its bands write their rows of it there (Band.written_row).
- A row that is not split by rows (a Dense, a Transpose, a Concat of rows, a non-constant Pad, a 1-D map,
  a batch) runs as one band that moves its external operands whole. A global pool runs in bands of input
  rows that add to the same output pixel (band_geometry.RowGeometry.reduces), one channel block each.
Graph outputs stay on chip (they stream out); maps wider than 8 bits stay on chip (a word is R bytes).

Sizes are what a map really occupies (hlsgen.hw.placement): words per bank of its channel banks (an input
image with G = 1 fills every bank, G < R replicates), times R bytes, plus the depthwise window memory of a
map a depthwise row reads. The placement can still need more than the rows' live sizes (two planes, QAdd
inputs apart, first fit): it is checked, and the plan made again for a smaller budget until it fits.
"""
from __future__ import annotations

import math
from dataclasses import replace

from ..errors import MappingError
from . import cycles as cyc
from .band_geometry import RowGeometry, channel_blocks, row_geometry
from .overlay_memory import MemorySplit, memory_split
from .placement import (FeatureMap, Memory, batched_maps, choose_banks, map_shape, place_maps, read_lanes,
                        window_taps)
from .queues import queue_cycles
from .rows import ARRAY, DMA, Band, BufferUse, LayerMap, Move, Transfer
from .target import Target
from .tiling import ACC_BYTES, search_tiles
from .window_banks import window_pitch

# a row too big for the buffers whose output is a model output (hlsgen.partition moves it to the host)
OUTPUT_ON_CHIP = "a model output is one of its operands (model outputs stay on chip)"
# a model no plan fits: it names the layers needing the most (hlsgen.partition moves them to the host)
SMALLEST_BANDS = "even in the smallest bands"
MAX_PLANS = 12  # plans for ever smaller budgets before giving up


class NoRuns(MappingError):
    """A plan with runs of layers was asked for and no rows form one (fit_activation_memory skips it)."""


class _Planner:
    """Decides the external maps and every row's band height (module docstring), for `capacity` bytes of
    the planes and of the depthwise window memory (two memories: each must hold its own)."""

    def __init__(self, graph, layers: list[LayerMap], target: Target, capacity: tuple[int, int], double: bool,
                 whole_channels: bool = False):  # whole_channels: array rows in bands over all channels if they fit
        self.graph, self.layers, self.target = graph, layers, target
        self.whole_channels = whole_channels
        self.capacity, self.double = capacity, double
        root = {t: t for t in graph.inputs}
        self.birth = {t: -1 for t in graph.inputs}
        self.death = {t: -1 for t in graph.inputs}
        self.operands: list[tuple[list[str], str | None]] = []
        for i, layer in enumerate(layers):
            if layer.kind == "reshape":
                root[layer.output] = root[layer.inputs[0]]
                self.operands.append(([], None))
                continue
            ins = [root[t] for t in layer.inputs]
            for t in ins:
                self.death[t] = max(self.death[t], i)
            root[layer.output] = layer.output
            self.birth[layer.output] = self.death[layer.output] = i
            self.operands.append((ins, layer.output))
        self.outputs = {root[t] for t in graph.outputs}
        for t in self.outputs:
            self.death[t] = len(layers)
        self.root = root
        self.batched = batched_maps(layers)  # a batch's maps: N images each, the head's held from the start
        self.size = self._sizes()
        self.external: set[str] = set(graph.input_folds)  # the host folds an input as it packs it into DRAM
        self.lanes = target.array.cols
        self.shapes: dict[int, tuple[int, int, bool]] = {}  # row -> (band height, blocks per band, double)

    def _sizes(self) -> dict[str, int]:
        """Bytes each stored map occupies on chip: its words per bank (placement's banks) x R, with its
        depthwise window memory."""
        R = self.target.array.rows
        maps = {}
        for t in self.birth:
            c, h, w = map_shape(self.graph.shape(t))
            images = self.batched.get(t, (1, False))[0]
            maps[t] = FeatureMap(t, c, h * images, w, self.graph.quant[t], self.birth[t], images=images)
        for i, layer in enumerate(self.layers):
            for t in self.operands[i][0]:
                maps[t].array_read |= layer.unit == ARRAY and layer.kind != "depthwise"
                maps[t].dw_read |= layer.kind == "depthwise"
                maps[t].lanes = max(maps[t].lanes, read_lanes(layer))
                if layer.kind == "depthwise":
                    maps[t].dw_taps.append(window_taps(self.graph, layer))
        self.pitch = {t: window_pitch(m.width, m.dw_taps, R) or m.width for t, m in maps.items() if m.dw_read}
        sizes = {}
        for t, fmap in maps.items():
            choose_banks(fmap, R)
            plane = fmap.words * R * -(-getattr(fmap.quant, "bits", 8) // 8)
            sizes[t] = (plane, self._copied(t, plane) if fmap.dw_read else 0)
        return sizes

    def _copied(self, t: str, plane: int) -> int:
        """Bytes in the depthwise window memory of `plane` bytes of map t's plane (its rows at its window pitch)."""
        return -(-plane * self.pitch[t] // map_shape(self.graph.shape(t))[2])

    def least(self) -> tuple[tuple[int, str], tuple[int, str]]:
        """The fewest bytes of the planes and of the depthwise window memory any plan needs, each with the row that
        needs them: every row's smallest bands, with every map that may live in external memory there."""
        movable = {t for t in self.birth if t not in self.outputs and getattr(self.graph.quant.get(t), "bits", 8) <= 8}
        kept, self.external = self.external, movable
        needs = [((0, 0), "")]
        for i, layer in enumerate(self.layers):
            if self.operands[i][1] is None:
                continue
            g, blocks = row_geometry(self.graph, layer), channel_blocks(self.graph, layer, self.lanes)
            bands = g.bands(1) if g.splits else [(0, g.height_out)]
            needs += [(tuple(a + b for a, b in zip(self.resident(i), self._buffers(i, g, y0, y1, 1, blocks))),
                       layer.nodes[0]) for y0, y1 in bands]
        self.external = kept
        return tuple(max(((need[k], name) for need, name in needs), key=lambda x: x[0]) for k in (0, 1))

    def alive(self, i: int) -> list[str]:
        held = {t for t, (_, head) in self.batched.items() if head}
        return [t for t in self.birth if (-1 if t in held else self.birth[t]) <= i <= self.death[t]]

    def resident(self, i: int) -> tuple[int, int]:
        """Bytes of the planes and of the depthwise window memory the maps on chip live at row i occupy."""
        held = [self.size[t] for t in self.alive(i) if t not in self.external]
        return sum(p for p, _ in held), sum(q for _, q in held)

    def plan(self) -> None:
        while not self._fits():
            pass

    def _fits(self) -> bool:
        """One pass over the rows; False after moving a map out (start again)."""
        self.shapes = {}
        for i, layer in enumerate(self.layers):
            ins, out = self.operands[i]
            if out is None:
                continue
            operands = {*ins, out}
            space = _minus(self.capacity, self.resident(i))
            if not operands & self.external:
                if min(space) >= 0:
                    continue
                self._move_out(i, layer)
                return False
            shape = self._shape(i, space)
            if shape is None:
                self._move_out(i, layer)
                return False
            g, blocks = row_geometry(self.graph, layer), channel_blocks(self.graph, layer, self.lanes)
            on_chip = operands - self.external
            if (len(g.bands(shape[0])) > 1 or shape[1] < blocks) and on_chip:
                writes_output = self._writes_output_in_bands(layer, g, shape, blocks)
                if on_chip == {out} and writes_output:
                    self.shapes[i] = shape  # its bands write their rows of the output, on chip
                    continue
                self.external |= on_chip - self.outputs
                kept = on_chip & self.outputs
                if kept and (kept != {out} or not writes_output):
                    self._fail(layer, OUTPUT_ON_CHIP)
                return False
            self.shapes[i] = shape
        return True

    def _writes_output_in_bands(self, layer: LayerMap, g: RowGeometry, shape: tuple[int, int, bool],
                                blocks: int) -> bool:
        """Whether the bands of a row may write its output on chip, band by band at its rows (Band.written_row):
        bands of rows over all of its channels, one image, by a unit that writes through the writer (not a
        copy's segments)."""
        return (g.splits and not g.reduces and shape[1] == blocks
                and layer.kind != "copy" and layer.output not in self.batched)

    def _move_out(self, i: int, layer: LayerMap) -> None:
        if self.target.external_memory is None:
            self._fail(layer, f"its live feature maps need {sum(self.resident(i)):,} bytes "
                              f"({', '.join(self.alive(i))}), and the target has no external_memory")
        candidates = [t for t in self.alive(i) if t not in self.external and t not in self.outputs
                      and getattr(self.graph.quant.get(t), "bits", 8) <= 8]
        if not candidates:
            g, blocks = row_geometry(self.graph, layer), channel_blocks(self.graph, layer, self.lanes)
            smallest = self._buffers(i, g, 0, 1, 1, blocks) if g.splits else self._buffers(i, g, 0, g.height_out, 1,
                                                                                          blocks)
            self._fail(layer, f"with every other map in external memory, its smallest band still needs "
                              f"{sum(self.resident(i)) + sum(smallest):,} bytes on chip")
        self.external.add(max(candidates, key=lambda t: (sum(self.size[t]), t)))

    def _fail(self, layer: LayerMap, why: str):
        raise MappingError(f"{self.graph.describe(layer.nodes[0])}: does not fit the activation memory "
                           f"(buffers.input = {self.target.buffers.input.kib} KiB): {why}")

    def _shape(self, i: int, space: int) -> tuple[int, int, bool] | None:
        """(band height, channel blocks per band, double-buffered) whose buffers fit `space` bytes, moving
        the fewest bytes through the port (fewest copies at equal bytes), or None: double-buffered when the
        plan is and such bands fit, else single. With whole_channels, an array row takes bands over all its
        channels wherever they fit, even single-buffered, before slices: a run may then take the row."""
        whole = self.whole_channels and self.layers[i].unit == ARRAY
        for only_whole, double in dict.fromkeys([(True, self.double), (True, False)] * whole
                                                + [(False, self.double), (False, False)]):
            shape = self._shape_of(i, space, double, only_whole)
            if shape is not None:
                return (*shape, double)
        return None

    def _shape_of(self, i: int, space: int, double: bool, only_whole: bool = False) -> tuple[int, int] | None:
        layer = self.layers[i]
        g, blocks = row_geometry(self.graph, layer), channel_blocks(self.graph, layer, self.lanes)
        best = None
        for per_band in range(blocks, blocks - 1 if only_whole else 0, -1):
            height = self._height(i, g, per_band, blocks, space, double)
            if height is None:
                continue
            slices, bands = -(-blocks // per_band), g.bands(height)
            passes = per_band if blocks > 1 else -(-map_shape(layer.output_shape)[0] // self.lanes)
            if g.reduces and passes > 1 and len(bands) > 1:
                continue  # the engine keeps one pass's totals from band to band: one block per band
            moved = slices * sum(self._buffers(i, g, y0, y1, per_band, blocks)[0] for y0, y1 in bands)
            key = (moved + slices * len(bands) * sum(self.capacity) // 64, -per_band)  # a copy's latency, roughly
            if best is None or key < best[0]:
                best = (key, (height, per_band))
        return best[1] if best else None

    def _height(self, i: int, g: RowGeometry, per_band: int, blocks: int, space: tuple[int, int],
                double: bool) -> int | None:
        """The tallest band of `per_band` channel blocks whose buffers (twice, `double`) fit `space` bytes,
        or None."""
        def fits(h: int) -> bool:
            bands = g.bands(h)
            copies = 2 if double and len(bands) * -(-blocks // per_band) > 1 else 1  # the next band's too
            return all(min(_minus(space, tuple(copies * n for n in self._buffers(i, g, y0, y1, per_band, blocks))))
                       >= 0 for y0, y1 in bands)

        if not g.splits:
            return g.height_out if fits(g.height_out) else None
        if g.reduces and fits(g.height_out):  # one band (never double-copied): the search below would miss it
            return g.height_out
        lo, hi = 0, g.height_out
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if fits(mid) else (lo, mid - 1)
        return lo or None

    def runs(self) -> dict[int, tuple[tuple[int, ...], int]]:
        """Runs of banded rows computed band by band together (fused-layer tiling), by their first row: the
        rows and the last row's band height (module docstring). A run grows while its buffers of one band
        fit in bands of at least one row."""
        runs, i = {}, 0
        while i < len(self.layers) - 1:
            members, height = (i,), 0
            while members[-1] + 1 < len(self.layers) and self._links(members[-1]):
                longer = (*members, members[-1] + 1)
                found = self._run_height(longer)
                if not found:
                    break
                members, height = longer, found
            if len(members) > 1:
                runs[i] = (members, height)
            i = members[-1] + 1
        return runs

    def _links(self, i: int) -> bool:
        """Whether row i's output, in external memory, is row i + 1's only operand, read by no other row,
        both array rows in bands of rows over all their channels."""
        out = self.operands[i][1]
        return (self._runnable(i) and self._runnable(i + 1) and out in self.external and out not in self.outputs
                and self.operands[i + 1][0] == [out] and self.death[out] == i + 1)

    def _runnable(self, i: int) -> bool:
        """Whether row i may be in a run: an array row of one operand in bands of rows over all its channels."""
        layer = self.layers[i]
        if i not in self.shapes or layer.unit != ARRAY or len(self.operands[i][0]) != 1:
            return False
        g = row_geometry(self.graph, layer)
        return (g.splits and not g.reduces and layer.images == 1
                and self.shapes[i][1] == channel_blocks(self.graph, layer, self.lanes))

    def run_bands(self, members: tuple[int, ...], height: int) -> list[list[tuple[int, int, int, int]]]:
        """Per band of the run's last row (`height` rows): per row of the run, first to last, the output rows
        [y0, y1) it computes and the input rows [a, b) it reads; a row computes the rows the next one reads."""
        bands = []
        for y0, y1 in row_geometry(self.graph, self.layers[members[-1]]).bands(height):
            spans = []
            for i in reversed(members):
                a, b, _, _ = row_geometry(self.graph, self.layers[i]).band(y0, y1)
                spans.append((y0, y1, a, b))
                y0, y1 = a, b
            bands.append(spans[::-1])
        return bands

    def _run_height(self, members: tuple[int, ...]) -> int:
        """The tallest band of the run's last row whose buffers fit beside what every row of the run keeps
        on chip, or 0."""
        space = tuple(min(s) for s in zip(*(_minus(self.capacity, self.resident(i)) for i in members)))

        def fits(h: int) -> bool:
            bands = self.run_bands(members, h)
            double = self.double and len(bands) > 1
            return all(min(_minus(space, self._run_buffers(members, spans, double))) >= 0 for spans in bands)

        lo, hi = 0, row_geometry(self.graph, self.layers[members[-1]]).height_out
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if fits(mid) else (lo, mid - 1)
        return lo

    def _run_buffers(self, members: tuple[int, ...], spans: list[tuple[int, int, int, int]],
                     double: bool) -> tuple[int, int]:
        """Bytes of the planes and of the depthwise window memory one band of a run keeps at its fullest: the first
        row's loaded inputs and the last row's stored output all band long (twice, `double`: the next band's
        load and the last band's store overlap it), and beside them, while a row runs, its input band and
        its output band (with their window memory where a depthwise row reads them). The engines run the
        rows one after another, so a band between two rows lives only while those two run."""
        twice = 2 if double else 1
        head, tail = members[0], members[-1]

        def band_bytes(t: str, rows: int) -> int:
            return -(-self.size[t][0] * rows // max(map_shape(self.graph.shape(t))[1], 1))

        def copied(k: int, n: int) -> int:  # a band member k + 1 reads: in the window memory if depthwise
            t = self.operands[members[k]][1]
            return self._copied(t, n) if self.layers[members[k + 1]].kind == "depthwise" else 0

        plane = copies = 0
        for t in self.operands[head][0]:
            if t in self.external:
                n = twice * band_bytes(t, spans[0][3] - spans[0][2])
                plane, copies = plane + n, copies + (self._copied(t, n) if self.layers[head].kind == "depthwise" else 0)
        if self.operands[tail][1] in self.external:
            plane += twice * band_bytes(self.operands[tail][1], spans[-1][1] - spans[-1][0])
        between = [band_bytes(self.operands[i][1], spans[k][1] - spans[k][0]) for k, i in enumerate(members[:-1])]

        def running(k: int) -> tuple[int, int]:  # member k runs: the band it reads (k > 0), the band it writes
            held = range(max(k - 1, 0), min(k + 1, len(between)))
            return sum(between[j] for j in held), sum(copied(j, between[j]) for j in held)

        peaks = [running(k) for k in range(len(members))]
        return plane + max(p for p, _ in peaks), copies + max(c for _, c in peaks)

    def _buffers(self, i: int, g: RowGeometry, y0: int, y1: int, per_band: int, blocks: int) -> tuple[int, int]:
        """Bytes of the planes and of the depthwise window memory the buffers of one band (output rows [y0, y1),
        `per_band` of `blocks` channel blocks) of the external operands of row i occupy."""
        ins, out = self.operands[i]
        a, b, _, _ = g.band(y0, y1)
        used = copies = 0
        for t in ins:
            if t in self.external:
                plane = self.size[t][0]
                n = plane * (b - a) // max(map_shape(self.graph.shape(t))[1], 1) if g.splits else plane
                used += n
                copies += self._copied(t, n) if self.layers[i].kind == "depthwise" else 0  # its window memory
        if out in self.external:
            used += self.size[out][0] if g.reduces else self.size[out][0] * (y1 - y0) // g.height_out
        return used * per_band // blocks, copies * per_band // blocks


def fit_activation_memory(graph, layers: list[LayerMap], target: Target, finish=lambda rows: rows,
                          split: MemorySplit | None = None) -> tuple[list[LayerMap], Memory]:
    """The program's rows, banded where the activation memory needs it, and their placement, which fits
    `buffers.input` (module docstring): with double-buffered bands (their copies overlap the compute, but
    the bands are smaller: more copies, more halo rows) or single ones (the copies wait for the compute),
    whichever runs in fewer cycles on the two queues (hlsgen.hw.queues), its rows completed by `finish`
    (the weights' streaming); then that plan again with runs of layers, and with runs where array rows
    band over all their channels (_Planner.whole_channels), the fastest kept. With `split` (the
    target's own top, hlsgen.hw.overlay_memory) the planes and the copies each fit their share of it; the
    model's own top tries that split as well (its uneven planes can band a model better than the shares
    _fit_shares tries)."""
    single = _fit_shares(graph, layers, target, False, split)
    if single[1].dram_words == 0:
        return single  # every map on chip: nothing to double-buffer

    def cycles(fit: tuple[list[LayerMap], Memory]) -> int:
        return queue_cycles(finish_moves(finish(fit[0]), fit[1], target), fit[1])

    splits = [split] if split is not None else [None, memory_split(target)]  # the own top may take the top's
    plans = {(False, split): single}
    for double, shares in [(double, shares) for shares in splits for double in (False, True)][1:]:
        try:
            plans[double, shares] = _fit_shares(graph, layers, target, double, shares)
        except MappingError:
            pass
    timed = {plan: cycles(fit) for plan, fit in plans.items()}
    for base in list(plans):
        for whole_channels in (False, True):
            try:
                chained = _fit_shares(graph, layers, target, *base, chained=True, whole_channels=whole_channels)
            except MappingError:  # no runs (NoRuns), or none that fit
                continue
            timed[base, whole_channels] = cycles(chained)
            plans[base, whole_channels] = chained
    return plans[min(timed, key=timed.get)]


def _fit_shares(graph, layers: list[LayerMap], target: Target, double: bool,
                split: MemorySplit | None = None, chained: bool = False,
                whole_channels: bool = False) -> tuple[list[LayerMap], Memory]:
    """The planes and the depthwise window memory share `buffers.input` in proportion to what the model's maps
    would need of each on chip, or else in the first of a few other shares that fits."""
    capacity = target.buffers.input.bytes
    need = _Planner(graph, layers, target, (capacity, capacity), double)
    if target.external_memory is None:
        for i, layer in enumerate(layers):
            if sum(need.resident(i)) > capacity:
                need._fail(layer, f"its live feature maps need {sum(need.resident(i)):,} bytes "
                                  f"({', '.join(need.alive(i))}), and the target has no external_memory")
    peaks = [max((need.resident(i)[k] for i in range(len(layers))), default=0) for k in (0, 1)]
    (planes, planes_row), (copies, copies_row) = need.least()  # with every map it may move in external memory
    if planes + copies > capacity:
        whole = {layer.nodes[0] for layer in layers if layer.nodes and not row_geometry(graph, layer).splits}
        band = {name: "layer" if name in whole else "one output row of layer" for name in (planes_row, copies_row)}
        why = f"{band[planes_row]} {planes_row!r} needs {planes:,} bytes of the activation memory's planes"
        if copies:
            why += f" and {band[copies_row]} {copies_row!r} {copies:,} bytes of its depthwise window memory"
        if whole & {planes_row, copies_row}:  # a Transpose, a Concat of rows, a 1-D map: moved whole
            why += " (it does not run in bands of rows)"
        raise MappingError(f"the feature maps of {graph.name!r} do not fit the activation memory (buffers.input = "
                           f"{target.buffers.input.kib} KiB) {SMALLEST_BANDS}: {why}; give the target "
                           f"buffers.input of at least {-(-(planes + copies) // 1024)} KiB")
    least = (planes, copies)
    slack = capacity - sum(least)
    shares = [least[1] + max(slack, 0) * peaks[1] // max(sum(peaks), 1)]
    if peaks[1]:
        shares += [least[1] + max(slack, 0) * k // 4 for k in (0, 2, 4, 1, 3)]
    if split is not None:  # the top's own share
        shares = [split.copies * split.copy_depth * target.array.rows]
    failure = None
    for copies in shares:
        try:
            return _fit(graph, layers, target, copies, double, split, chained, whole_channels)
        except NoRuns:
            raise
        except MappingError as error:
            failure = failure or error
    raise failure


def _fit(graph, layers: list[LayerMap], target: Target, copies: int, double: bool,
         split: MemorySplit | None = None, chained: bool = False,
         whole_channels: bool = False) -> tuple[list[LayerMap], Memory]:
    """Plans for ever smaller budgets until the placement fits, `copies` bytes for the depthwise window memory (and
    each plane its share of `split`)."""
    R, capacity = target.array.rows, target.buffers.input.bytes
    limits = (capacity - copies, copies) if split is None else (sum(split.planes) * R, copies)
    budget = limits
    for attempt in range(MAX_PLANS):
        try:
            rows = band_rows(graph, layers, target, budget, double, chained, whole_channels)
        except MappingError:
            if attempt == 0:
                raise
            break  # smaller bands do not fit either: report the placement
        memory = place_maps(graph, rows, R, split.planes if split else None)
        used = (sum(memory.held_depth) * R, memory.dw_copies * memory.dw_depth * R)
        if split is None and sum(used) <= capacity:
            return rows, memory
        if split is not None:
            if split.fits(memory.plane_depth, memory.dw_copies, memory.dw_depth):
                return rows, memory
            # the fuller plane decides: as if both were as full, against both planes' share
            over = max(d / p for d, p in zip(memory.plane_depth, split.planes))
            used = (max(int(over * limits[0]), used[0]), split.copies * memory.dw_depth * R)
        budget = tuple(int(b * min(limit / u, 0.95)) if u > limit else b for b, u, limit in zip(budget, used, limits))
    raise MappingError(f"the feature maps of {graph.name!r} do not fit the activation memory (buffers.input = "
                       f"{target.buffers.input.kib} KiB): placed in its two planes and depthwise window memory they "
                       f"need {sum(used):,} bytes, and smaller bands do not fit; give the target a larger "
                       f"buffers.input")


def _minus(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    return a[0] - b[0], a[1] - b[1]


def band_rows(graph, layers: list[LayerMap], target: Target, capacity: tuple[int, int],
              double: bool, chained: bool = False, whole_channels: bool = False) -> list[LayerMap]:
    """The program's rows with every row that reads or writes an external map split into bands and its
    copies (`dma` rows whose moves `finish_moves` completes once the maps are placed), for `capacity`
    bytes of live maps and buffers in the planes and in the depthwise window memory. `double`: the bands'
    buffers are double-buffered (_pipelined)."""
    planner = _Planner(graph, layers, target, capacity, double, whole_channels)
    planner.plan()
    runs = planner.runs() if chained else {}
    if chained and not runs:
        raise NoRuns("no rows run band by band together")  # the program without runs is planned on its own
    in_run = {i for members, _ in runs.values() for i in members}
    rows: list[LayerMap] = []
    for i, layer in enumerate(layers):
        used = BufferUse("activation", sum(planner.resident(i)), target.buffers.input.bytes)
        live = tuple(t for t in planner.alive(i) if t not in planner.external)
        if i in runs:
            rows += _run_rows(graph, planner, *runs[i], target)
            continue
        if i in in_run:
            continue
        if i not in planner.shapes:
            rows.append(replace(layer, buffers=(used, *layer.buffers[1:]), live=live))
            continue
        g, (height, per_band, double) = row_geometry(graph, layer), planner.shapes[i]
        channels, lanes = map_shape(layer.output_shape)[0], planner.lanes
        blocks = channel_blocks(graph, layer, lanes)
        slices = [None] if per_band == blocks else \
            [(c0, min(channels, c0 + per_band * lanes)) for c0 in range(0, channels, per_band * lanes)]
        bands = [(cs, ys) for cs in slices for ys in g.bands(height)]
        steps = []
        for j, (cs, (y0, y1)) in enumerate(bands):
            a, b, pad_top, computed = g.band(y0, y1)
            band = Band(j, len(bands), (0, 1) if g.reduces else (y0, y1), (a, b), pad_top, computed, cs)
            steps.append(_band(graph, planner, layer, g, band, used, live, target))
        rows += _pipelined(steps) if double else [row for step in steps for row in step]
    return rows


def _run_rows(graph, planner: _Planner, members: tuple[int, ...], height: int, target: Target) -> list[LayerMap]:
    """The rows of a run (_Planner.runs), band by band: the first row's loads, each row's band (the next
    row reads its output band from the buffer it writes), the last row's stores. A row computes again the
    halo rows the band before computed too; its MACs count the rows it computes first (the model's MACs)."""
    bands = planner.run_bands(members, height)
    rows = [(planner.layers[i], row_geometry(graph, planner.layers[i]),
             BufferUse("activation", sum(planner.resident(i)), target.buffers.input.bytes),
             tuple(t for t in planner.alive(i) if t not in planner.external)) for i in members]
    head_on_chip = planner.operands[members[0]][0][0] not in planner.external
    steps = []
    for k, spans in enumerate(bands):
        step, fed = [], None
        for m, ((layer, g, used, live), (y0, y1, a, b)) in enumerate(zip(rows, spans)):
            _, _, pad_top, computed = g.band(y0, y1)
            if m == 0 and head_on_chip:  # the head reads its input whole: its band's window starts a rows down
                a, b, pad_top = 0, map_shape(layer.input_shape)[1], pad_top - a
            band = Band(k, len(bands), (y0, y1), (a, b), pad_top, computed)
            made = _band(graph, planner, layer, g, band, used, live, target, fed=fed, keep=m < len(members) - 1)
            compute = next(r for r in made if r.unit != DMA)
            first = max(y0, bands[k - 1][m][1] if k else 0)  # the rows before it the band before computed
            useful = layer.macs * y1 // g.height_out - layer.macs * first // g.height_out
            step += [replace(compute, macs=useful) if r is compute else r for r in made]
            fed = compute.output
        steps.append(step)
    return _pipelined(steps) if planner.double and len(steps) > 1 else [row for step in steps for row in step]


def _pipelined(steps: list[list[LayerMap]]) -> list[LayerMap]:
    """A layer's bands (each its loads, its compute row, its stores) in the order that double-buffers them:
    the loads of band k + 1 before the compute of band k, the stores of band k - 1 after it. Program order
    stays a correct sequential order (the C++ runs it so); the placement sees band k's and band k + 1's
    buffers live at once and gives them different addresses, so the copies can overlap the compute."""
    loads = [[r for r in step if r.kind == "load"] for step in steps]
    stores = [[r for r in step if r.kind == "store"] for step in steps]
    computes = [[r for r in step if r.unit != DMA] for step in steps]
    rows = list(loads[0])
    for k, compute in enumerate(computes):
        rows += loads[k + 1] if k + 1 < len(steps) else []
        rows += compute
        rows += stores[k - 1] if k else []
    return rows + stores[-1]


def _band(graph, planner: _Planner, layer: LayerMap, g: RowGeometry, band: Band, used: BufferUse,
          live: tuple[str, ...], target: Target, fed: str | None = None, keep: bool = False) -> list[LayerMap]:
    """A band's rows: its loads, its compute row, its stores. In a run (_run_rows), `fed` is the buffer the
    row before wrote (the row's one input), and `keep` leaves its output band in a buffer the next row reads."""
    name = f"{layer.name}#{band.index}" if band.count > 1 else layer.name
    loads, inputs, shapes = [], [], []
    for k, (t, shape) in enumerate(zip(layer.inputs, layer.input_shapes or (layer.input_shape,))):
        stored = planner.root[t]
        if fed is not None:
            inputs.append(fed)
            shapes.append(_slice(tuple(shape), band.in_rows, None))
            continue
        if stored not in planner.external:
            inputs.append(t)
            shapes.append(tuple(shape))
            continue
        buffer = f"{name}.in{k}"
        rows = band.in_rows if g.splits else (0, map_shape(graph.shape(stored))[1])
        loads.append(_dma("load", stored, buffer, rows, band.channels, graph, used, live))
        inputs.append(buffer)
        shapes.append(_slice(tuple(shape), rows if g.splits else None, band.channels))
    output, stores = layer.output, []
    if keep:
        output = f"{name}.out"
    elif layer.output not in planner.external:
        band = replace(band, written_row=band.out_rows[0])
    else:
        output = f"{name}.out"
        rows = band.out_rows if g.splits else (0, map_shape(graph.shape(layer.output))[1])
        stores.append(_dma("store", layer.output, output, rows, band.channels, graph, used, live))
    out_shape = _slice(tuple(layer.output_shape), band.out_rows if g.splits and not g.reduces else None, band.channels)
    buffers = (used, *layer.buffers[1:])
    compute = replace(layer, name=name, inputs=tuple(inputs), output=output, input_shapes=tuple(shapes),
                      input_shape=shapes[0], output_shape=out_shape, band=band, buffers=buffers,
                      live=(*live, *(r.output for r in loads), *([output] if stores or keep else [])))
    if g.splits or band.channels:
        compute = _resized(graph, compute, layer, band, target)
    return [*loads, compute, *stores]


def _slice(shape: tuple[int, ...], rows: tuple[int, int] | None, channels: tuple[int, int] | None) -> tuple[int, ...]:
    """A tensor shape [N, C, H, ...] restricted to rows [a, b) and channels [c0, c1) (None: all)."""
    shape = list(shape)
    if rows is not None:
        shape[2] = rows[1] - rows[0]
    if channels is not None:
        shape[1] = channels[1] - channels[0]
    return tuple(shape)


def _resized(graph, band_row: LayerMap, layer: LayerMap, band: Band, target: Target) -> LayerMap:
    """The band's tiles, MACs and cycles: the layer's, over the band's rows and channels."""
    node = graph.nodes[layer.nodes[0]]
    computed = map_shape(graph.shape(node.outputs[0]))[1]  # rows the whole layer computes (before a pool)
    channels = map_shape(layer.output_shape)[0]
    share = band.channels[1] - band.channels[0] if band.channels else channels
    if layer.unit == ARRAY:  # depthwise: a channel per column
        work = layer.tiles.work
        pixels = work.pixels // computed * band.rows_computed
        tiles = search_tiles(replace(work, pixels=pixels, out_channels=work.out_channels * share // channels), target)
        acc = BufferUse("accumulator", tiles.spatial_tile * target.array.cols * ACC_BYTES,
                        target.buffers.accumulator.bytes)
        buffers = tuple(acc if b.name == "accumulator" else b for b in band_row.buffers)
        return replace(band_row, tiles=tiles, cycles=tiles.cycles(target.array.rows, target.array.cols),
                       macs=layer.macs // work.pixels * pixels * share // channels, buffers=buffers)
    t = layer.tiles
    if layer.kind == "global_pool":  # its band's input rows (every band adds to the same output pixels)
        rows = band.in_rows[1] - band.in_rows[0]
        tiles = replace(t, positions=t.positions // map_shape(layer.input_shape)[1] * rows, channels=share,
                        passes=-(-share // t.lanes))
        return replace(band_row, tiles=tiles, cycles=cyc.vector_cycles(tiles.passes, tiles.positions))
    if layer.kind == "copy":  # a Concat's pass per input, a Pad's over its output: over the band's rows
        rows = band.out_rows[1] - band.out_rows[0]
        ins = [map_shape(s) for s in (band_row.input_shapes if node.op == "Concat" else (band_row.output_shape,))]
        count = math.prod(band_row.output_shape)
        return replace(band_row, tiles=replace(t, channels=count, positions=-(-count // t.lanes)),
                       cycles=sum(cyc.vector_cycles(-(-c // t.lanes), rows * w) for c, _, w in ins))
    per_row = t.positions // (map_shape(layer.output_shape)[1] if layer.kind == "pool" else computed)
    rows = band.out_rows[1] - band.out_rows[0] if layer.kind == "pool" else band.rows_computed
    tiles = replace(t, positions=per_row * rows, channels=share, passes=-(-share // t.lanes))
    if layer.kind == "pool":
        a = node.attrs if node.op == "MaxPool" else node.attrs.pool
        cycles = cyc.window_pool_cycles(tiles.passes, tiles.positions, math.prod(a.kernel_shape))
    else:
        cycles = cyc.vector_cycles(tiles.passes, tiles.positions)
    return replace(band_row, tiles=tiles, cycles=cycles)


def _dma(direction: str, tensor: str, buffer: str, rows: tuple[int, int], channels: tuple[int, int] | None, graph,
         used: BufferUse, live: tuple[str, ...]) -> LayerMap:
    """A copy row; its words, addresses and cycles wait for the placement (finish_moves)."""
    full = tuple(graph.shape(tensor))
    shape = _slice(full, rows if len(full) == 4 else None, channels)
    bits = getattr(graph.quant.get(tensor), "bits", 8)
    move = Move(direction, tensor, buffer, rows, 0, 0, 0, 0, 0, channels)
    src, dst = (tensor, buffer) if direction == "load" else (buffer, tensor)
    return LayerMap(f"{direction}:{buffer}", direction.capitalize(), DMA, direction, (src,), dst, shape, shape, 0, 0,
                    None, (used,), live=live, bits=(bits, bits, 0), input_shapes=(shape,), move=move)


def finish_moves(rows: list[LayerMap], memory: Memory, target: Target) -> list[LayerMap]:
    """Every dma row's words and addresses (from the placement) and its cycles."""
    port, R = target.external_memory, target.array.rows
    done = []
    for row in rows:
        if row.move is None:
            done.append(row)
            continue
        m, fmap, buffer = row.move, memory.placement(row.move.tensor), memory.placement(row.move.buffer)
        first = (m.channels[0] >> fmap.lg) * fmap.pixels if m.channels else 0  # a slice starts on a block
        move = replace(m, segments=buffer.words // buffer.pixels, segment_words=buffer.pixels,
                       dram_word=fmap.dram_base + first + m.rows[0] * fmap.width, dram_stride=fmap.pixels,
                       buffer_stride=buffer.pixels)
        nbytes = move.words * R
        cycles = cyc.dma_cycles(port.transfer_cycles(nbytes), port.read_latency)
        done.append(replace(row, move=move, cycles=cycles,
                            transfers=(Transfer("feature_maps", "read" if m.direction == "load" else "write", nbytes),)))
    return done
