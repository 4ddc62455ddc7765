"""The overlay's units as loop IR nests: the weight fetch, the stream ports, the DMA unit, the writer, the
systolic array and the vector unit, each the body of one function of overlay_units.h.

Their loop bounds come from the program row (`bound`, C text; `extent` the largest value, which the HLS
tool is told), their unrolled extents and partitions from the target; their PIPELINE, UNROLL,
ARRAY_PARTITION, DEPENDENCE and INLINE are directives placed by `hlsgen.loopir.transform`, and
`prove` checks the banking of every pipelined loop on these nests. Scalar work (a row field, a helper's
result, a counter) is opaque C; every access to an array is an `Access`. The shared memories (activation
memory, window memory, ROMs, staging buffers) and their partitions are `memories`: the top function
declares and partitions them, the units only read and write them.
"""
from __future__ import annotations

from ...loopir import Buffer, LoopNest, check, nest_text, partition, pipeline, unroll
from ...loopir.directives import Dependence, Inline
from ...loopir.ir import Invoke
from ...loopir.words import at, do, let, loop, put, register, step, var, when
from ..nest import declarations, lower


def unit(name: str, body, *buffers: Buffer, mems: LoopNest, pipelined=(), unrolled=(), registers=(),
         inline: bool = False) -> LoopNest:
    """A unit's nest: its own buffers and the shared memories, its directives placed by the transformations
    (`pipelined` loops at II = 1, `unrolled` loops completely, `registers` partitioned completely)."""
    nest = LoopNest(name, "", "overlay", buffers + mems.buffers, tuple(body), mems.placed)
    for label in pipelined:
        nest = pipeline(nest, label, 1)
    for label in unrolled:
        nest = unroll(nest, label)
    for b in registers:
        nest = partition(nest, b, 0, "complete")
    return nest.place(name, Inline()) if inline else nest


# ---- the memories every unit shares -----------------------------------------------------------------
def memories(c: dict) -> LoopNest:
    R, C_, W = c["rows"], c["cols"], c["row_words"]
    buffers = [Buffer("amem", (2, R, c["act_depth"]), c["act_bits"], "amem", 2 * R),
               Buffer("dwmem", (c["dw_copies"], C_, c["dw_depth"]), c["act_bits"], "dwmem", c["dw_copies"] * C_),
               Buffer("tap_rom", (1, R), 128, "tap_rom", R), Buffer("par_rom", (1, C_), 128, "par_rom", C_),
               Buffer("lut_rom", (C_, 1), c["act_bits"], "lut_rom", C_)]
    buffers.append(Buffer("wbuf", (2, c["tile_words"]), 64, "wbuf", 2 * W) if c["external"]
                   else Buffer("wrom", (W,), 64, "wrom", W))
    buffers += [Buffer(n, (1,), 64, "external") for n in ("wmem", "fmem")]
    nest = LoopNest("memories", buffers=tuple(buffers))
    for name, dims in (("amem", (1, 2)), ("dwmem", (1, 2)), ("tap_rom", (2,)), ("par_rom", (2,)), ("lut_rom", (1,))):
        for dim in dims:
            nest = partition(nest, name, dim, "complete")
    if c["external"]:
        return partition(partition(nest, "wbuf", 1, "complete"), "wbuf", 2, "cyclic", W)
    return partition(nest, "wrom", 1, "cyclic", W)


# ---- the writer -------------------------------------------------------------------------------------
def put_unit(c: dict, mems: LoopNest) -> LoopNest:
    R, C_ = c["rows"], c["cols"]
    body = (loop("banks", "j", R, when("(j & ((1 << at.lg) - 1)) == (c & ((1 << at.lg) - 1))", put(
                at("amem", "at.plane", "j", "at.base + (c >> at.lg) * at.blk + y * at.width + x"), "v"))),
            when("at.dw", let("int", "a", f"at.dw_base + (c / {C_}) * at.dw_stride + y * at.dw_pitch + x"),
                 loop("window_lanes", "l", C_, when(f"l == c % {C_}", put(at("dwmem", "dw_bank(a)", "l", "dw_slot(a)"),
                                                                          "v")))))
    return unit("put", body, mems=mems, unrolled=("banks", "window_lanes"), inline=True)


def store_unit(c: dict, mems: LoopNest) -> LoopNest:
    R, C_ = c["rows"], c["cols"]
    pool = (let("int", "py", "oy / row.pool_kh"), let("int", "px", "ox / row.pool_kw"),
            let("int", "i", "oy - py * row.pool_kh"), let("int", "j", "ox - px * row.pool_kw"),
            let("bool", "inside", "py < row.o_h && px < row.o_w"), let("int", "slot", "blk * row.o_w + px"),
            loop("pool_lanes", "c", C_, var("act_t", "pooled", at("vals", "c")), when(
                "inside", let("act_t", "left", at("hmax", "blk", "c")), when("j > 0 && left > pooled", put("pooled", "left")),
                put(at("hmax", "blk", "c"), "pooled"),
                when("j == row.pool_kw - 1", let("act_t", "above", at("pool_row", "slot", "c")),
                     when("i > 0 && above > pooled", put("pooled", "above")), put(at("pool_row", "slot", "c"), "pooled"))),
                put(at("out", "c"), "pooled")),
            put("emit", "inside && i == row.pool_kh - 1 && j == row.pool_kw - 1"), put("y", "py"), put("x", "px"))
    write = (let("int", "pixel", "y * row.o_w + x"),
             loop("banks", "j", R, let("int", "col", "j & ((1 << row.o_lg) - 1)"), let("int", "m", f"blk * {C_} + col"),
                  when("m < row.o_channels", put(at("amem", "row.o_plane", "j",
                                                    "row.o_base + (m >> row.o_lg) * row.o_blk + pixel"), at("out", "col")))),
             when("row.o_dw", let("int", "a", "row.o_dw_base + blk * row.o_dw_stride + y * row.o_dw_pitch + x"),
                  loop("window_lanes", "c", C_, when(f"blk * {C_} + c < row.o_channels", put(
                      at("dwmem", "dw_bank(a)", "c", "dw_slot(a)"), at("out", "c"))))))
    body = (var("bool", "emit", "true"), var("int", "y", "oy"), var("int", "x", "ox"),
            when("row.pool", *pool, orelse=loop("lanes", "c", C_, put(at("out", "c"), at("vals", "c")))),
            when("emit", *write))
    pool_row = Buffer("pool_row", (c["pool_depth"], C_), c["act_bits"], "pool_row", C_, decl="static act_t")
    nest = unit("store", body, register("hmax", "static act_t", c["pool_tiles"], C_), pool_row,
                register("out", "act_t", C_), register("vals", "", C_), mems=mems, inline=True,
                unrolled=("pool_lanes", "lanes", "banks", "window_lanes"))
    nest = partition(partition(nest, "hmax", 0, "complete"), "pool_row", 2, "complete")
    return partition(nest, "out", 0, "complete").place("pool_row", Dependence("inter"))


# ---- the weight fetch and the systolic array ---------------------------------------------------------
def fetch_unit(c: dict, mems: LoopNest) -> LoopNest:
    body = (let("long long", "w0", "tile_bit(row, k) >> 6"), let("int", "words", "tile_words(row, k)"),
            loop("fetch", "j", c["tile_words"], put(at("wbuf", "slot", "j"), at("wmem", "w0 + j")), bound="words"))
    return unit("fetch_tile", body, mems=mems, pipelined=("fetch",))


def weight_row_unit(c: dict, mems: LoopNest) -> LoopNest:
    C_, W = c["cols"], c["row_words"]
    if c["external"]:
        bit = "(tile_bit(row, ct * row.tr + t) & 63) + static_cast<long long>(r * C) * row.wbits"
    else:
        bit = "row.w_bit + (static_cast<long long>((ct * row.tr + t) * R + r) * C) * row.wbits"
    body = (let("long long", "bit", bit), let("int", "w0", "static_cast<int>(bit >> 6)"),
            let("int", "b0", "static_cast<int>(bit & 63)"),
            loop("words", "j", W, put(at("words", "j"), at(*(("wbuf", "slot") if c["external"] else ("wrom",)), "w0 + j"))),
            loop("unpack", "c", C_, put(at("line", "c"), "weight_at(words, b0 + c * row.wbits, row.wbits)")))
    return unit("weight_row", body, register("words", "uint64_t", W), register("line", "", C_), mems=mems,
                unrolled=("words", "unpack"), registers=("words",), inline=True)


def array_unit(c: dict, mems: LoopNest, store: LoopNest, weight_row: LoopNest, fetch: LoopNest | None) -> LoopNest:
    R, C_, DWC, ext = c["rows"], c["cols"], c["dw_copies"], c["external"]
    taps = (let("Tap", "tap", at("tap_rom", "row.tap_base + t", "r")), let("int", "y", "iy + tap.dy"),
            let("int", "x", "ix + tap.dx"),
            put(at("inside", "r"), "tap.valid && y >= 0 && y < row.in_h && x >= 0 && x < row.in_w"),
            put(at("dw_at", "r"), "row.dw_base + ct * row.dw_stride + y * row.dw_pitch + x"), var("cen_t", "v", "0"),
            when("inside[r] && !row.dw", put("v", at("amem", "row.in_plane", "r",
                                                    "row.in_base + tap.offset + iy * row.in_w + ix")),
                 put("v", "row.in_zp", "-=")),
            loop("plane_lanes", "c", C_, put(at("xs", "r", "c"), "v")))
    window = (loop("window_banks", "b", DWC, put(at("bank_slot", "b"), "0"),
                   loop("bank_taps", "q", R, let("int", "r", f"{R - 1} - q"), when(
                       "inside[r] && dw_bank(dw_at[r]) == b", put(at("bank_slot", "b"), "dw_slot(dw_at[r])"))),
                   loop("bank_words", "c", C_, put(at("word", "b", "c"), at("dwmem", "b", "c", "bank_slot[b]")))),
              when("row.dw", loop("window_lanes", "r", R, loop("window", "c", C_, var("cen_t", "d", "0"), when(
                  "inside[r]", put("d", at("word", "dw_bank(dw_at[r])", "c")), put("d", "row.in_zp", "-=")),
                  put(at("xs", "r", "c"), "d")))))
    columns = loop("columns", "c", C_, var("acc_t", "sum", "0"), when("t > 0", put("sum", at("acc", "c", "p"))),
                   loop("macs", "r", R, put("sum", "xs[r][c] * pe[r][c]", "+=")),
                   when("last", let("Param", "q", at("par_rom", "row.par_base + ct", "c")), var("req_t", "total", "sum"),
                        put("total", "q.bias", "+="),
                        let("req_t", "scaled", "total * ((row.neg && total < 0) ? q.neg_mult : q.mult)"),
                        put(at("vals", "c"), "requant(scaled, q.shift, row.zp, row.lo, row.hi)"),
                        orelse=put(at("acc", "c", "p"), "sum")))
    pixel = when("p < np", let("int", "iy", "oy * row.sy - row.pad_t"), let("int", "ix", "ox * row.sx - row.pad_l"),
                 loop("lanes", "r", R, *taps), *window, columns,
                 when("last", Invoke(store, ("row", "ct", "oy", "ox", "vals", "amem", "dwmem"))),
                 step("ox", "row.out_w", put("oy", "1", "+=")))
    shadow = when("next && p < R", Invoke(weight_row, ("row", "next_ct", "next_t", "p", "line")
                                         + (("ntiles > 1 ? slot ^ 1 : 0",) if ext else ())),
                  loop("shadow_columns", "c", C_, put(at("shadow", "p", "c"), at("line", "c"))))
    stream = (when("p < fwords", put(at("wbuf", "slot", "p"), at("wmem", "f0 + p"))),) if ext else ()
    if ext:
        steps = (let("int", "i", "(s * row.tc + ct) * row.tr + t"),
                 let("int", "k2", "ct * row.tr + t + 2 < ntiles ? ct * row.tr + t + 2 : ct * row.tr + t + 2 - ntiles"),
                 let("long long", "f0", "tile_bit(row, k2) >> 6"),
                 let("int", "fwords", "ntiles > 2 && i + 2 < row.ts * ntiles ? tile_words(row, k2) : 0"),
                 let("int", "loads", "next && np < R ? R : np"), let("int", "steps", "loads < fwords ? fwords : loads"))
    else:
        steps = (let("int", "steps", "next && np < R ? R : np"),)
    tile = loop("row_tiles", "t", c["max_row_tiles"],
                let("bool", "next", "s < row.ts - 1 || ct < row.tc - 1 || t < row.tr - 1"),
                let("int", "next_t", "t + 1 < row.tr ? t + 1 : 0"),
                let("int", "next_ct", "t + 1 < row.tr ? ct : (ct + 1 < row.tc ? ct + 1 : 0)"),
                let("bool", "last", "t == row.tr - 1"), *steps,
                var("int", "oy", "p0 / row.out_w"), var("int", "ox", "p0 - oy * row.out_w"),
                loop("stream", "p", max(c["acc_depth"], c["tile_words"]) if ext else c["acc_depth"],
                     *stream, shadow, pixel, bound="steps"),
                loop("swap", "r", R, loop("swap_columns", "c", C_, put(at("pe", "r", "c"), at("shadow", "r", "c")))),
                *((put("slot", "1", "^="),) if ext else ()), bound="row.tr")
    tiles = loop("spatial_tiles", "s", c["max_spatial_tiles"], let("int", "p0", "s * row.pt"),
                 let("int", "np", "row.pixels - p0 < row.pt ? row.pixels - p0 : row.pt"),
                 loop("column_tiles", "ct", c["max_column_tiles"], tile, bound="row.tc"), bound="row.ts")
    first = loop("first_load", "r", R, Invoke(weight_row, ("row", "0", "0", "r", "line") + (("0",) if ext else ())),
                 loop("first_columns", "c", C_, put(at("pe", "r", "c"), at("line", "c"))))
    start = ()
    if ext:
        start = (let("int", "ntiles", "row.tc * row.tr"), Invoke(fetch, ("row", "0", "0", "wmem")),
                 when("ntiles > 1", Invoke(fetch, ("row", "1", "1", "wmem"))), var("int", "slot", "0"))
    acc = Buffer("acc", (C_, c["acc_depth"]), c["acc_bits"], "acc", C_, decl="static acc_t")
    nest = unit("array_unit", (*start, first, tiles),
                register("pe", "static wgt_t", R, C_), register("shadow", "static wgt_t", R, C_), acc,
                register("line", "wgt_t", C_), register("vals", "act_t", C_), register("xs", "cen_t", R, C_),
                register("inside", "bool", R), register("dw_at", "int", R), register("bank_slot", "int", DWC),
                register("word", "act_t", DWC, C_), mems=mems, pipelined=("first_load", "stream"),
                unrolled=("swap", "swap_columns"), registers=("pe", "shadow"))
    nest = partition(nest, "acc", 1, "complete")
    for name in ("line", "vals", "xs", "inside", "dw_at", "bank_slot", "word"):
        nest = partition(nest, name, 0, "complete")
    nest = nest.place("acc", Dependence("inter"))
    if ext:
        nest = nest.place("wbuf", Dependence("inter")).place("wbuf", Dependence("intra"))
    return nest


# ---- the vector unit ---------------------------------------------------------------------------------
def _lanes_value(c: dict, addr: str, cond: str, *then) -> tuple:
    """v = the lane's channel at `addr` when `cond` (else ACT_MIN)."""
    return (let("int", "ch", f"pass * {c['cols']} + l"), var("act_t", "v", "ACT_MIN"),
            when(cond, put("v", at("amem", "row.in_plane", "l", addr)), *then))


def global_pool_unit(c: dict, mems: LoopNest, store: LoopNest) -> LoopNest:
    C_ = c["cols"]
    lanes = loop("lanes", "l", C_, *_lanes_value(c, "row.in_base + (ch >> row.in_lg) * row.pixels + p", "ch < row.in_c"),
                 var("req_t", "centred", "v"), put("centred", "row.in_zp", "-="),
                 let("bool", "first", "p == 0 && !row.acc"),
                 put(at("total", "l"), "first ? centred : req_t(total[l] + centred)"),
                 put(at("best", "l"), "(first || v > best[l]) ? v : best[l]"))
    body = (loop("passes", "pass", c["max_passes"], loop("pixels", "p", c["max_pixels"], lanes, bound="row.pixels"),
                 loop("results", "l", C_, put(at("vals", "l"), "row.op == OP_GAVG ? requant(total[l] * row.ma, "
                                                             "row.shift, row.zp, row.lo, row.hi) : best[l]")),
                 Invoke(store, ("row", "pass", "0", "0", "vals", "amem", "dwmem")), bound="row.passes"),)
    return unit("global_pool", body, register("vals", "act_t", C_), register("total", "static req_t", C_),
                register("best", "static act_t", C_), mems=mems, pipelined=("pixels",), unrolled=("lanes", "results"),
                registers=("vals", "total", "best"))


def window_pool_unit(c: dict, mems: LoopNest, store: LoopNest) -> LoopNest:
    C_ = c["cols"]
    geometry = (let("bool", "lerp", "row.op == OP_LERP || row.op == OP_PICK"),
                let("bool", "y_edge", "iy < 0 || iy >= row.in_h - 1"), let("bool", "x_edge", "ix < 0 || ix >= row.in_w - 1"),
                let("int", "wy", "y_edge ? 0 : ry"), let("int", "wx", "x_edge ? 0 : rx"),
                let("int", "src_y", "iy < 0 ? 0 : (y_edge ? row.in_h - 1 : iy)"),
                let("int", "src_x", "ix < 0 ? 0 : (x_edge ? row.in_w - 1 : ix)"),
                let("int", "y", "lerp ? src_y + ky : oy * row.sy - row.pad_t + ky * row.dil_y"),
                let("int", "x", "lerp ? src_x + kx : ox * row.sx - row.pad_l + kx * row.dil_x"),
                let("int", "weight", "row.op == OP_LERP ? (ky ? wy : row.ly_den - wy) * (kx ? wx : row.lx_den - wx) : 1"),
                let("bool", "inside", "y >= 0 && y < row.in_h && x >= 0 && x < row.in_w"),
                let("bool", "first", "ky == 0 && kx == 0"))
    lanes = loop("lanes", "l", C_, let("int", "ch", f"pass * {C_} + l"), var("act_t", "v", "ACT_MIN"),
                 var("req_t", "centred", "0"),
                 when("inside && ch < row.in_c",
                      put("v", at("amem", "row.in_plane", "l", "row.in_base + (ch >> row.in_lg) * in_words + y * row.in_w + x")),
                      put("centred", "v"), put("centred", "row.in_zp", "-="), put("centred", "weight", "*=")),
                 put(at("best", "l"), "(first || v > best[l]) ? v : best[l]"),
                 put(at("sum", "l"), "first ? centred : req_t(sum[l] + centred)"))
    result = when("ky == row.kh - 1 && kx == row.kw - 1", let(
        "Divisor", "d", "div_rom[row.div_base + (row.op == OP_AVGPOOL ? aux_rom[row.aux_base + oy * row.out_w + ox] : 0)]"),
        loop("results", "l", C_, put(at("vals", "l"), "row.op == OP_AVGPOOL ? requant(sum[l] * d.mult, d.shift, row.zp, "
                                     "row.lo, row.hi) : lerp ? requant(sum[l] * row.ma, row.shift, row.zp, row.lo, row.hi) "
                                     ": best[l]")),
        Invoke(store, ("row", "pass", "oy", "ox", "vals", "amem", "dwmem")))
    counters = step("kx", "row.kw", step("ky", "row.kh", put("rx", "row.lx_num", "+="), when(
        "rx >= row.lx_den", put("rx", "row.lx_den", "-="), put("ix", "1", "+=")), step(
        "ox", "row.out_w", put("oy", "1", "+="), put("ix", "ix0"), put("rx", "rx0"), put("ry", "row.ly_num", "+="),
        when("ry >= row.ly_den", put("ry", "row.ly_den", "-="), put("iy", "1", "+=")))))
    body = (let("int", "in_words", "row.in_h * row.in_w"), loop(
        "passes", "pass", c["max_passes"], *(var("int", n, "0") for n in ("oy", "ox", "ky", "kx")),
        let("int", "iy0", "row.ly_off < 0 ? -1 : 0"), let("int", "ry0", "row.ly_off < 0 ? row.ly_off + row.ly_den : row.ly_off"),
        let("int", "ix0", "row.lx_off < 0 ? -1 : 0"), let("int", "rx0", "row.lx_off < 0 ? row.lx_off + row.lx_den : row.lx_off"),
        var("int", "iy", "iy0"), var("int", "ry", "ry0"), var("int", "ix", "ix0"), var("int", "rx", "rx0"),
        loop("taps", "i", c["max_pixels"], *geometry, lanes, result, counters, bound="row.pixels * row.kh * row.kw"),
        bound="row.passes"))
    return unit("window_pool", body, register("vals", "act_t", C_), register("sum", "req_t", C_),
                register("best", "act_t", C_), mems=mems, pipelined=("taps",), unrolled=("lanes", "results"),
                registers=("vals", "sum", "best"))


def copy_unit(c: dict, mems: LoopNest, put_nest: LoopNest) -> LoopNest:
    fill = when("row.fill", *(var("int", n, "0") for n in ("c", "y", "x")), loop(
        "fill", "i", c["max_copy"], Invoke(put_nest, ("out", "c", "y", "x", "row.zp", "amem", "dwmem")),
        step("x", "row.o_w", step("y", "row.o_h", put("c", "1", "+="))), bound="row.o_channels * out_words"))
    elements = loop("elements", "i", c["max_copy"], let("act_t", "v", at(
        "amem", "seg.plane", "at[0] & ((1 << seg.lg) - 1)", "seg.base + (at[0] >> seg.lg) * words + at[1] * seg.width + at[2]")),
        let("int", "oc", "at[seg.sel_c] + seg.off_c"), let("int", "oy", "at[seg.sel_y] * seg.step_y + seg.off_y"),
        let("int", "ox", "at[seg.sel_x] * seg.step_x + seg.off_x"),
        when("oy >= 0 && oy < row.o_h", Invoke(put_nest, ("out", "oc", "oy", "ox", "v", "amem", "dwmem"))),
        step("at[2]", "seg.width", step("at[1]", "seg.height", put(at("at", 0), "1", "+="))),
        bound="seg.channels * words")
    segments = loop("segments", "s", 0, let("Segment", "seg", "seg_rom[row.seg_base + s]"),
                    let("int", "words", "seg.height * seg.width"), *(put(at("at", k), "0") for k in range(4)),
                    elements, bound="row.seg_count")
    body = (let("int", "out_words", "row.o_h * row.o_w"),
            let("Place", "out", "{row.o_plane, row.o_base, row.o_lg, row.o_channels, row.o_h, row.o_w, row.o_dw, "
                "row.o_dw_base, out_words, 0, row.o_dw_stride, row.o_dw_pitch}"), fill, segments)
    return unit("copy_unit", body, register("at", "int", 4), mems=mems, pipelined=("fill", "elements"),
                registers=("at",))


def elementwise_unit(c: dict, mems: LoopNest, store: LoopNest) -> LoopNest:
    C_ = c["cols"]
    lanes = loop("lanes", "l", C_, let("int", "ch", f"pass * {C_} + l"), let("bool", "valid", "ch < row.in_c"),
                 let("int", "a_addr", "row.in_base + (ch >> row.in_lg) * in_words + source"),
                 let("int", "b_slot", "(ch >> row.b_lg) * (row.b_one ? 1 : in_words)"),
                 let("int", "b_addr", "row.b_base + b_slot + (row.b_one ? 0 : source)"),
                 let("bool", "b_valid", "valid && (row.op == OP_ADD || row.op == OP_MUL)"),
                 var("act_t", "v0", "0"), var("act_t", "v1", "0"),
                 when("row.in_plane == 0 ? valid : b_valid", put("v0", at("amem", 0, "l", "row.in_plane == 0 ? a_addr : b_addr"))),
                 when("row.in_plane == 0 ? b_valid : valid", put("v1", at("amem", 1, "l", "row.in_plane == 0 ? b_addr : a_addr"))),
                 let("act_t", "av", "row.in_plane == 0 ? v0 : v1"), var("cen_t", "a", "av"), put("a", "row.in_zp", "-="),
                 var("cen_t", "b", "row.in_plane == 0 ? v1 : v0"), put("b", "row.b_zp", "-="),
                 var("req_t", "scaled", "req_t(a) * row.ma"),
                 when("row.op == OP_ADD", put("scaled", "req_t(b) * row.mb", "+="),
                      orelse=when("row.op == OP_MUL", put("scaled", "b", "*="))),
                 var("act_t", "y", "av"),
                 when("row.op == OP_LUT", when("valid", put("y", at("lut_rom", "l", "row.lut_base + a.to_int()")),
                                               orelse=put("y", "0")),
                      orelse=when("row.op != OP_RESIZE", put("y", "requant(scaled, row.shift, row.zp, row.lo, row.hi)"))),
                 put(at("vals", "l"), "y"))
    counters = (when("++kx == row.ux", put("kx", "0"), when("sx < row.in_w - 1", put("sx", "1", "+="))),
                step("ox", "row.out_w", put("kx", "row.kx0"), put("sx", "0"), put("oy", "1", "+="),
                     step("ky", "row.uy", when("sy < row.in_h - 1", put("sy", "1", "+=")))))
    body = (let("int", "in_words", "row.in_h * row.in_w"), loop(
        "passes", "pass", c["max_passes"], *(var("int", n, "0") for n in ("oy", "ox", "sy", "sx")),
        var("int", "ky", "row.ky0"), var("int", "kx", "row.kx0"),
        loop("pixels", "i", c["max_pixels"], let("int", "source", "sy * row.in_w + sx"), lanes,
             Invoke(store, ("row", "pass", "oy", "ox", "vals", "amem", "dwmem")), *counters, bound="row.pixels"),
        bound="row.passes"))
    return unit("elementwise", body, register("vals", "act_t", C_), mems=mems, pipelined=("pixels",),
                unrolled=("lanes",), registers=("vals",))


# ---- the stream ports and the DMA unit ---------------------------------------------------------------
def stream_in_unit(c: dict, mems: LoopNest, put_nest: LoopNest) -> LoopNest:
    body = (var("Place", "to", "at"), put("to.base", "image * at.img", "+="),
            *(var("int", n, "0") for n in ("c", "y", "x")),
            loop("values", "i", c["max_port"], Invoke(put_nest, ("to", "c", "y", "x", "port.read().data", "amem", "dwmem")),
                 step("x", "at.width", step("y", "at.height", put("c", "1", "+="))),
                 bound="at.channels * at.height * at.width"))
    return unit("stream_in", body, mems=mems, pipelined=("values",))


def stream_out_unit(c: dict, mems: LoopNest) -> LoopNest:
    body = (let("int", "words", "at.height * at.width"), let("int", "count", "at.channels * words"),
            var("int", "c", "0"), var("int", "pixel", "0"),
            loop("values", "i", c["max_port"], var("hls::axis<T, 0, 0, 0>", "beat"),
                 put("beat.data", at("amem", "at.plane", "c & ((1 << at.lg) - 1)",
                                     "at.base + image * at.img + (c >> at.lg) * at.blk + pixel")),
                 put("beat.last", "i == count - 1"), do("port.write(beat)"),
                 step("pixel", "words", put("c", "1", "+=")), bound="count"))
    return unit("stream_out", body, mems=mems, pipelined=("values",))


def dma_unit(c: dict, mems: LoopNest) -> LoopNest:
    R, C_ = c["rows"], c["cols"]
    load = loop("dma_load", "w", c["max_dma_words"], let("fmap_word_t", "word", at("fmem", "image + w")),
                loop("load_banks", "j", R, put(at("amem", "row.o_plane", "j", "row.o_base + at + w"),
                                               "from_byte(word.byte[j], row.d_signed)")),
                when("row.o_dw", let("int", "a", "dw_row + dw_col"), loop(
                    "load_lanes", "l", C_, when(f"s * {C_} + l < row.o_channels", put(
                        at("dwmem", "dw_bank(a)", "l", "dw_slot(a)"), "from_byte(word.byte[l], row.d_signed)")))),
                step("dw_col", "row.o_w", put("dw_row", "row.o_dw_pitch", "+=")), bound="row.d_words")
    store = loop("dma_store", "w", c["max_dma_words"], var("fmap_word_t", "word"),
                 loop("store_banks", "j", R, let("act_t", "v", at("amem", "row.in_plane", "j", "row.in_base + at + w")),
                      put(at("word.byte", "j"), "static_cast<uint8_t>(v.to_int() & 255)")),
                 put(at("fmem", "image + w"), "word"), bound="row.d_words")
    body = (loop("dma_segments", "s", c["max_dma_segments"], let("int", "image", "row.d_word + s * row.d_stride"),
                 let("int", "at", "s * row.d_bstride"),
                 when("row.op == OP_LOAD", var("int", "dw_row", "row.o_dw_base + s * row.o_dw_stride"),
                      var("int", "dw_col", "0"), load, orelse=store), bound="row.d_segments"),)
    return unit("dma_unit", body, register("word.byte", "", R), mems=mems, pipelined=("dma_load", "dma_store"),
                unrolled=("load_banks", "load_lanes", "store_banks"))


# ---- all of them ---------------------------------------------------------------------------------------
def unit_nests(c: dict, mems: LoopNest | None = None) -> dict[str, LoopNest]:
    """Every unit of this configuration (`hlsgen.hls.overlay.design.overlay_config`), by function name, over
    the shared memories `mems` (default `memories(c)`)."""
    mems = mems or memories(c)
    nests = {"put": put_unit(c, mems), "store": store_unit(c, mems), "weight_row": weight_row_unit(c, mems)}
    if c["external"]:
        nests["fetch_tile"] = fetch_unit(c, mems)
    nests["array_unit"] = array_unit(c, mems, nests["store"], nests["weight_row"], nests.get("fetch_tile"))
    nests["global_pool"] = global_pool_unit(c, mems, nests["store"])
    nests["window_pool"] = window_pool_unit(c, mems, nests["store"])
    nests["copy_unit"] = copy_unit(c, mems, nests["put"])
    nests["elementwise"] = elementwise_unit(c, mems, nests["store"])
    nests["stream_in"] = stream_in_unit(c, mems, nests["put"])
    nests["stream_out"] = stream_out_unit(c, mems)
    if c["fmaps"]:
        nests["dma_unit"] = dma_unit(c, mems)
    return nests


def bodies(nests: dict[str, LoopNest]) -> dict[str, str]:
    """Function name -> its C++ body (declarations, pragmas, loops), as overlay_units.h prints it."""
    return {name: "\n".join(declarations(n) + lower(n)) for name, n in nests.items()}


def dump(nests: dict[str, LoopNest], c: dict, header: str) -> str:
    """The units' nests as text (`hlsgen build --dump-ir`: OUT/loop_ir.txt): the shared memories, then
    every unit with its buffers, loops, directives, port use and legality."""
    mems = memories(c)
    shared = frozenset(b.name for b in mems.buffers)
    head = [f"# hlsgen loop IR: {header}", "", "memories (the top function declares and partitions them):"]
    head += ["  " + line for line in nest_text(mems).splitlines()[1:] if line.lstrip().startswith("buffer")]
    return "\n".join(head) + "\n\n" + "\n\n".join(nest_text(n, "", shared) for n in nests.values()) + "\n"


def prove(nests: dict[str, LoopNest]) -> list[str]:
    """Every bank conflict of every unit's pipelined loops (empty: each reaches II = 1)."""
    return [p for n in nests.values() for p in check(n)]
