"""Print a Program as Verilog: the generated top (`templates/rtl/top.v.j2`: the layer table and the
instances of the hand-written modules), its stream testbench (`tb.v.j2`), and the ROM images as
$readmemh files. Python decides every value; the templates only print.
"""
from __future__ import annotations

import functools
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import jinja2

from ..hw.tiling import accumulator_depth
from ..templating import make_environment, render_with
from . import rtl_sources
from .program import Program
from .fmap_dma import B_LATENCY
from .overlay import AXI_ADDR_BITS, MAX_INPUTS, MAX_OUTPUTS
from .program_image import HEADER_WORDS, PLACE_LG, PLACE_PLANE, header_beats, program_image, slot_bytes, tables
from .weight_dma import (RAM_LATENCY, tile_words, tiles_ahead, weight_depth, weight_image,
                         word_beats)
from .words import POOL_W, SHIFT_W, UP_W, VEC_MULT_W, Z_W

MEMORIES = ("weights", "taps", "params", "lut", "divisors")


@dataclass(frozen=True)
class RtlFiles:
    folder: Path
    top: str  # module name of the generated top
    tb: str  # module name of its testbench
    sources: tuple[Path, ...]  # every Verilog file, hand-written modules first
    memories: tuple[Path, ...]
    weight_image: Path | None = None  # the weights the testbench loads into external memory (hg_weight_dma)
    program_image: Path | None = None  # --program external: the program the top loads (hg_program_loader)

    @property
    def design_sources(self) -> tuple[Path, ...]:
        """Without the testbench (what synthesis reads)."""
        return tuple(s for s in self.sources if s.stem != self.tb)


def module_name(model: str) -> str:
    """A Verilog identifier from a model name."""
    name = re.sub(r"\W", "_", model).strip("_") or "model"
    return f"{'m_' if name[0].isdigit() else ''}{name}_top"


def move_fields(program: Program) -> list[tuple[str, int]]:
    """(name, width) of every column of the move table (hg_fmap_dma's rows), in the order the template prints
    them; `wait` counts rows of the layer table."""
    w, aw = program.widths, program.widths["ADDR_W"]
    return [("wait", _count_bits(layer_count(program))), ("dma_store", 1), ("dma_segments", w["SEG_W"]),
            ("dma_words", w["WORD_W"]), ("dma_dram_word", w["WORD_W"]), ("dma_dram_stride", w["WORD_W"]),
            ("dma_buf_base", aw), ("dma_buf_stride", aw), ("dma_dw", 1), ("dma_dw_base", aw),
            ("dma_dw_width", w["DIM_W"]), ("dma_dw_pitch", w["DIM_W"]), ("dma_dw_stride", aw), ("dma_plane", 1)]


def config_fields(program: Program) -> list[tuple[str, int]]:
    """(name, width) of every column of the layer table, in the order the template prints them; `wait`
    counts rows of the move table."""
    w = program.widths
    aw, dim, off, cnt, pix = w["ADDR_W"], w["DIM_W"], w["OFF_W"], w["CNT_W"], w["PIX_W"]
    rom = {m: _aw(depth) for m, depth in memory_depths(program).items()}
    rom["weights"] += (program.weight_word_slices - 1).bit_length()  # a slice address
    return [("wait", _count_bits(move_count(program))),
        ("kind", 1),
        ("in_base", aw), ("in_h", dim), ("in_w", dim), ("out_w", dim), ("sx", w["ST_W"]), ("sy", w["ST_W"]),
        ("x0", dim + 1), ("y0", dim + 1), ("pix0", off), ("row_step", off), ("in_zp", Z_W), ("in_signed", 1),
        ("in_plane", 1), ("tr", cnt), ("tc", cnt), ("ts", cnt), ("pt", pix), ("pt_last", pix),
        ("w_base", rom["weights"]), ("w_bits", w["WB_W"]), ("tap_base", rom["taps"]), ("par_base", rom["params"]),
        ("neg", 1), ("dw", 1), ("dw_base", aw), ("in_slot", aw),
        ("op", 4), ("a_base", aw), ("b_base", aw), ("a_lg", 3), ("b_lg", 3), ("b_one", 1), ("stride", aw), ("vw", dim),
        ("pixels", w["VPIX_W"]), ("up_x", UP_W), ("up_y", UP_W), ("src_w", dim), ("src_h", dim),
        ("jx0", UP_W + 1), ("jy0", UP_W + 1), ("edge", 1), ("passes", cnt), ("acc", 1), ("a_zp", Z_W),
        ("b_zp", Z_W), ("a_signed", 1), ("b_signed", 1), ("ma", VEC_MULT_W), ("mb", VEC_MULT_W),
        ("shift", SHIFT_W), ("lut_base", rom["lut"]), ("a_plane", 1), ("b_plane", 1),
        ("zp", Z_W), ("lo", Z_W), ("hi", Z_W), ("win_kh", dim), ("win_kw", dim), ("dil_x", dim), ("dil_y", dim),
        ("dil_row", off), ("cnt_y0", dim + 1), ("cnt_y1", dim + 1), ("cnt_x0", dim + 1), ("cnt_x1", dim + 1),
        ("div_base", rom["divisors"]),
        ("out_base", aw), ("out_chan_stride", aw), ("out_width", dim), ("out_sx", w["ST_W"]), ("out_lg", 3), ("out_channels", cnt),
        ("out_signed", 1), ("out_plane", 1), ("pool", 1), ("pool_kh", POOL_W), ("pool_kw", POOL_W), ("pool_h", dim),
        ("pool_w", dim), ("out_dw", 1), ("out_dw_base", aw), ("out_dw_stride", aw), ("out_dw_pitch", dim),
    ]


def memory_depths(program: Program) -> dict[str, int]:
    """Entries of the top's memories: the model's ROMs, or the overlay's tables (and a weight image as large
    as the AXI4 master addresses)."""
    if program.overlay is None:
        return {m: max(len(getattr(program, m)), 1) for m in MEMORIES} | {"weights": weight_depth(program)}
    capacity = vars(program.overlay.capacity)
    slices = (program.weight_word_slices - 1).bit_length()
    return {m: capacity[m] for m in MEMORIES if m != "weights"} | {
        "weights": 1 << (program.overlay.width["WSA_W"] - slices)}


def _count_bits(rows: int) -> int:
    """Bits of a table's cursor, which counts to its rows (hg_sequencer's L_W, M_W)."""
    return max(rows.bit_length(), 1)


def layer_count(program: Program) -> int:
    """Rows the layer table holds: the model's, or the overlay's capacity."""
    return program.overlay.capacity.layers if program.overlay else len(program.compute)


def move_count(program: Program) -> int:
    """Rows the move table holds: the model's, or the overlay's capacity."""
    return program.overlay.capacity.moves if program.overlay else len(program.moves)


def _aw(depth: int) -> int:
    return max(max(depth, 1) - 1, 1).bit_length()


def _literal(value: int, width: int) -> str:
    if not -(1 << width) < value < (1 << width):
        raise ValueError(f"{value} does not fit {width} bits")
    return f"{width}'d{value & ((1 << width) - 1)}"


def _hex_lines(words: list[int], bits: int) -> str:
    digits = max(1, -(-bits // 4))
    return "".join(f"{w:0{digits}x}\n" for w in (words or [0]))


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    return make_environment("rtl", filters={"literal": _literal})


def render(template: str, **context) -> str:
    """Render `templates/rtl/<template>` with `context`; every failure names the template."""
    return render_with(environment(), "rtl", template, **context)


def write_rtl(program: Program, folder: Path) -> RtlFiles:
    """The generated top, its testbench, the ROM images and a copy of every hand-written module."""
    folder.mkdir(parents=True, exist_ok=True)
    t = program.target
    ov = program.overlay
    top = module_name(f"overlay_{t.name}" if ov else program.name)
    fields = config_fields(program)
    inps, outs = program.inputs, program.outputs
    shared = program.word_parameters
    word_bits = {"weights": program.cols * program.weight_word_slices, "taps": program.rows * shared["TAP_W"],
                 "params": program.cols * shared["PAR_W"], "lut": t.widths.operand_bits,
                 "divisors": shared["DIV_W"]}
    memories = []
    image = folder / "weights.bin" if program.weights_external else None
    if image is not None:
        image.write_bytes(weight_image(program))
    loaded = folder / "program.bin" if ov else None
    if loaded is not None:  # no ROM: the tables are loaded
        loaded.write_bytes(program_image(program, fields, move_fields(program)))
    for name in MEMORIES:
        if (name == "weights" and image is not None) or loaded is not None:  # no ROM
            continue
        path = folder / f"{name}.mem"
        path.write_text(_hex_lines(getattr(program, name), word_bits[name]))
        memories.append(path)
    context = dict(
        top=top, model=program.name, target=t, program=program, fields=fields, layers=program.compute,
        move_fields=move_fields(program), moves=program.moves,
        w=program.widths, z_w=Z_W, shared=shared, inp=inps[0], inps=inps, out=outs[0], outs=outs,
        in_map_w=max((len(inps) - 1).bit_length(), 1),
        in_elems=sum(i.channels * i.image_height * i.width for i in inps),
        out_map_w=max((len(outs) - 1).bit_length(), 1), acc_depth=accumulator_depth(t),
        depths=memory_depths(program),
        tile_words=tile_words(program), tiles_ahead=tiles_ahead(program), axi_aw=AXI_ADDR_BITS,
        word_beats=word_beats(program) if program.weights_external else 1,
        wsa_w=dict(fields)["w_base"], lut_used=bool(program.lut) or ov is not None,
        ar_delay=max(t.external_memory.read_latency - RAM_LATENCY, 0) if t.external_memory else 0,
        b_delay=max(t.external_memory.read_latency - B_LATENCY, 0) if t.external_memory else 0,
        divisors_used=bool(program.divisors) or ov is not None,
        pool_depth=ov.pool_depth if ov else _pool_depth(program), layer_count=layer_count(program),
        move_count=move_count(program),
        ld=_load_buses(program, fields), batched=program.images > 1, img_w=max((program.images - 1).bit_length(), 1),
        max_inputs=MAX_INPUTS, max_outputs=MAX_OUTPUTS, place_lg=PLACE_LG, place_plane=PLACE_PLANE,
    )
    (folder / f"{top}.v").write_text(render("top.v.j2", **context))
    (folder / f"{top}_tb.v").write_text(render("tb.v.j2", **context))
    copied = []
    for src in rtl_sources():
        dst = folder / src.name
        shutil.copyfile(src, dst)
        copied.append(dst)
    return RtlFiles(folder, top, f"{top}_tb", tuple(copied + [folder / f"{top}.v", folder / f"{top}_tb.v"]),
                    tuple(memories), image, loaded)


@dataclass(frozen=True)
class LoadBuses:
    """The widths of the engines' table-load ports (zero in a top with ROMs) and, in the overlay, the loader's
    parameters and where the top finds each field of a layer-table row and each word of the header."""

    array: tuple[int, int]  # (address bits, data bits): hg_array_engine's LD_AW, LD_W
    vector: tuple[int, int]
    loader: dict | None = None
    row: tuple[tuple[str, int, int], ...] = ()  # (field, width, lowest bit) of a layer-table row
    move: tuple[tuple[str, int, int], ...] = ()  # (field, width, lowest bit) of a move-table row
    header: dict | None = None  # header word -> index (32-bit words)


def _load_buses(program: Program, fields: list[tuple[str, int]]) -> LoadBuses:
    shared, depths = program.word_parameters, memory_depths(program)
    array = (max(_aw(depths["taps"]), _aw(depths["params"])),
             max(program.rows * shared["TAP_W"], program.cols * shared["PAR_W"]))
    lut_aw = _aw(depths["lut"])  # the vector engine's LUT_DEPTH / DIV_DEPTH: 1 when unused
    vector = (max(lut_aw if program.lut or program.overlay else 1, _aw(depths["divisors"]) if program.divisors
                  or program.overlay else 1), max(shared["DIV_W"], program.target.widths.operand_bits))
    if program.overlay is None:
        return LoadBuses(array, vector)
    data_bits = program.target.external_memory.data_bits
    moves = move_fields(program)
    tables_ = tables(program, fields, moves)
    loader = {"TABLES": len(tables_), "HDR_BEATS": header_beats(data_bits),
              "BEATS_LG": sum(t.beats_lg(data_bits) << (4 * i) for i, t in enumerate(tables_)),
              "ENTRY_W": max(t.width for t in tables_), "SLOT_BEATS": slot_bytes(tables_, data_bits) * 8 // data_bits,
              "ENTRY_AW": max(_aw(program.overlay.capacity.layers), _aw(program.overlay.capacity.moves),
                              _aw(program.overlay.weight_words),
                              *(_aw(depths[m]) for m in MEMORIES if m != "weights"))}
    names = [t.name for t in tables_]
    header = {"layers": 1, "moves": 1 + names.index("moves"), "weights": 1 + names.index("weights")} | {
        name: 1 + len(tables_) + i for i, name in enumerate(HEADER_WORDS)}
    return LoadBuses(array, vector, loader, _lsbs(fields), _lsbs(moves), header)


def _lsbs(fields: list[tuple[str, int]]) -> tuple[tuple[str, int, int], ...]:
    """(field, width, lowest bit) of a table row whose fields are packed first lowest."""
    offsets, row = 0, []
    for name, width in fields:
        row.append((name, width, offsets))
        offsets += width
    return tuple(row)


def _pool_depth(program: Program) -> int:
    """Entries of the writer's pooling row buffer: a power of two above the widest pooled row."""
    widest = max([layer.fields["pool_w"] for layer in program.compute if layer.fields.get("pool")], default=1)
    return 1 << max(widest - 1, 1).bit_length()
