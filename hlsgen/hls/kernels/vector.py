"""Vector-unit layers around their loop IR nests: windowed pools (pool.j2), global pools
(global_pool.j2), elementwise QAdd / QMul / QRequant / QLut (eltwise.j2) and nearest upsampling (resize.j2)."""
from __future__ import annotations

import numpy as np

from ...errors import UnsupportedModelError
from ...hw.rows import LayerMap
from ...ir import Node
from ...loopir import LoopNest
from ...loopir.words import at, do, let, loop, put, var, when
from ..nest import lower
from ...quant.arith import signed_bits_for
from ..cnames import ap_type, literal, tensor_type
from .array import geometry
from .common import CArray, Context, Kernel, centred_bits, centred_type, nest_kernel, requant_width, unsigned_bits


def build(node: Node, layer: LayerMap, nest: LoopNest, ctx: Context) -> Kernel:
    families = {"pool": _pool, "global_pool": _global_pool, "elementwise": _elementwise, "resize": _resize}
    return families[layer.kind](node, layer, nest, ctx)


def _start(node: Node, ctx: Context) -> tuple[str, str]:
    prefix = ctx.names.take(node.name)
    return prefix, ctx.names.take(f"k_{prefix}")


def _pool(node: Node, layer: LayerMap, nest: LoopNest, ctx: Context) -> Kernel:
    graph = ctx.graph
    x, y = layer.inputs[0], layer.output
    qx, average = ctx.quant(x), node.op == "QAveragePool"
    window = node.attrs.pool if average else node.attrs
    g = geometry(window, graph.shape(x), graph.shape(y), node.name)
    prefix, fn = _start(node, ctx)
    h = dict(g, window_fn=ctx.helper(fn, "window"), x_t=ctx.types[x], y_t=ctx.types[y], average=average,
             x_dims=list(nest.buffer("x").shape), zx=qx.zero_point, lowest=literal(qx.qmin))
    arrays = []
    if average:
        a = node.attrs
        pads = window.pads if len(window.kernel_shape) == 2 else (0, window.pads[0], 0, window.pads[1])
        include = window.count_include_pad
        rows = _counted(g["oh"], g["sh"], g["kh"], g["dh"], g["pt"], g["h"], pads[2], include)
        cols = _counted(g["ow"], g["sw"], g["kw"], g["dw"], g["pl"], g["w"], pads[3], include)
        mul, shift = np.zeros(g["kh"] * g["kw"] + 1, np.int64), np.zeros(g["kh"] * g["kw"] + 1, np.int64)
        for count, m, s in a.divisors:
            mul[count], shift[count] = m, s
        sum_bits = signed_bits_for(g["kh"] * g["kw"] * (1 << (centred_bits(qx) - 1)))
        t = {key: ctx.names.take(f"{prefix}_{key}") for key in ("row_count", "col_count", "div_mul", "div_shift")}
        arrays = [CArray(t["row_count"], ap_type(unsigned_bits(rows), False), rows,
                         "window elements an average counts per output row, vertically"),
                  CArray(t["col_count"], ap_type(unsigned_bits(cols), False), cols,
                         "window elements an average counts per output column, horizontally"),
                  CArray(t["div_mul"], ap_type(unsigned_bits(mul), False), mul, "divisor multipliers by element count"),
                  CArray(t["div_shift"], ap_type(unsigned_bits(shift), False), shift, "divisor shifts by element count")]
        h.update(t, xc_t=centred_type(qx), sum_t=ap_type(sum_bits, True), zy=a.zero_point, lo=a.lo, hi=a.hi,
                 rw=requant_width(node.name, sum_bits + unsigned_bits(mul) + 1, shift))

    def window_call(stmt, call, c) -> str:  # max_window(line_buffer(x, channel, position))
        source = call.args[0]
        return f"{h['window_fn']}({', '.join(c.arg(a) for a in source.args)})"

    window = _pool_window(h, nest)
    h["window_body"] = "\n".join(lower(window))
    calls = {"max_window": window_call, "average_window": window_call}
    return nest_kernel(ctx, node, layer, nest, fn, "pool", h, calls, {}, {}, arrays, None,
                       {"max_window": window, "average_window": window})


def _pool_window(h: dict, nest: LoopNest) -> LoopNest:
    """The maximum (padding never wins) or the average (sum of x - zx, by the divisor of its element count)
    over the window of output position q of channel c."""
    if h["average"]:
        start = var(h["sum_t"], "sum", "0")
        take = (var(h["xc_t"], "v", at("x", "c", f"ih * {h['w']} + iw")),
                *((put("v", str(h["zx"]), "-="),) if h["zx"] else ()), put("sum", "v", "+="))
        end = (let("int", "count", f"{h['row_count']}[oh] * {h['col_count']}[ow]"),
               let(f"ap_int<{h['rw']}>", "scaled", f"sum * {h['div_mul']}[count]"),
               do(f"return hlsgen_requant<{h['rw']}, {h['y_t']}>(scaled, {h['div_shift']}[count], {h['zy']}, {h['lo']}, "
                  f"{h['hi']})"))
    else:
        start = var(h["x_t"], "best", h["lowest"])
        take = (let(h["x_t"], "v", at("x", "c", f"ih * {h['w']} + iw")), when("v > best", put("best", "v")))
        end = (do("return best"),)
    taps = loop("taps_h", "kh", h["kh"], loop(
        "taps_w", "kw", h["kw"], let("int", "ih", f"oh * {h['sh']} - {h['pt']} + kh * {h['dh']}"),
        let("int", "iw", f"ow * {h['sw']} - {h['pl']} + kw * {h['dw']}"),
        when(f"ih >= 0 && ih < {h['h']} && iw >= 0 && iw < {h['w']}", *take)))
    body = (let("int", "oh", f"q / {h['ow']}"), let("int", "ow", f"q % {h['ow']}"), start, taps, *end)
    return LoopNest(h["window_fn"], buffers=(nest.buffer("x"),), body=body,
                    placed=tuple((b, d) for b, d in nest.placed if b == "x"))


def _counted(n_out: int, stride: int, k: int, dilation: int, pad_begin: int, size: int, pad_end: int,
             include_pad: bool) -> np.ndarray:
    """Per output position along one axis: the window taps an average counts (the input, plus the explicit
    padding when count_include_pad; never the ceil_mode overhang). Counts multiply across the axes."""
    lo, hi = (0, pad_begin + size + pad_end) if include_pad else (pad_begin, pad_begin + size)
    taps = np.arange(n_out)[:, None] * stride + np.arange(k)[None, :] * dilation
    return ((taps >= lo) & (taps < hi)).sum(axis=1).astype(np.int64)


def _global_pool(node: Node, layer: LayerMap, nest: LoopNest, ctx: Context) -> Kernel:
    graph = ctx.graph
    x, y = layer.inputs[0], layer.output
    qx, average = ctx.quant(x), node.op == "QAveragePool"
    pixels = int(np.prod(graph.shape(x)[2:]))
    prefix, fn = _start(node, ctx)
    h = {"x_t": ctx.types[x], "y_t": ctx.types[y], "average": average, "pixels": pixels, "zx": qx.zero_point}
    if average:
        a = node.attrs
        ((count, mul, shift),) = a.divisors
        if count != pixels:
            raise UnsupportedModelError(f"{node.name}: a global average of {pixels} values with a divisor for {count}")
        sum_bits = signed_bits_for(pixels * (1 << (centred_bits(qx) - 1)))
        h.update(step_fn=ctx.helper(fn, "step"), average_fn=ctx.helper(fn, "average"), xc_t=centred_type(qx),
                 total_t=ap_type(sum_bits, True), div_mul=literal(mul), div_shift=shift, zy=a.zero_point, lo=a.lo,
                 hi=a.hi, rw=requant_width(node.name, sum_bits + max(mul.bit_length(), 1) + 1, [shift]))
    arg = lambda call, c: c.access(call.args[0])  # noqa: E731
    calls = {"max_step": lambda s, call, c: arg(call, c), "max": lambda s, call, c: arg(call, c),
             "average_step": lambda s, call, c: f"{h['step_fn']}({arg(call, c)})",
             "average": lambda s, call, c: f"{h['average_fn']}({arg(call, c)})"}
    total_t = h["total_t"] if average else ctx.types[x]
    return nest_kernel(ctx, node, layer, nest, fn, "global_pool", h, calls, {"total": total_t}, {}, [])


def _resize(node: Node, layer: LayerMap, nest: LoopNest, ctx: Context) -> Kernel:
    """A pure data move: the nest copies every pixel to its s_h x s_w places, no helper function."""
    _, fn = _start(node, ctx)
    return nest_kernel(ctx, node, layer, nest, fn, "resize", {"scales": list(node.attrs.scales)}, {}, {}, {}, [])


def _elementwise(node: Node, layer: LayerMap, nest: LoopNest, ctx: Context) -> Kernel:
    graph, a = ctx.graph, node.attrs
    x, y = layer.inputs[0], layer.output
    qx = ctx.quant(x)
    prefix, fn = _start(node, ctx)
    h = {"op": node.op, "op_fn": ctx.helper(fn, "op"), "a_t": ctx.types[x], "y_t": ctx.types[y]}
    arrays = []
    if node.op == "QAdd":
        x2 = layer.inputs[1]
        if graph.shape(x2) != graph.shape(x) or graph.shape(y) != graph.shape(x):
            raise UnsupportedModelError(f"{node.name}: QAdd of shapes {graph.shape(x)} and {graph.shape(x2)}; the "
                                        "HLS kernel adds tensors of one shape only (no broadcasting)")
        qx2 = ctx.quant(x2)
        bits = max(centred_bits(qx) + max(a.a_multiplier.bit_length(), 1),
                   centred_bits(qx2) + max(a.b_multiplier.bit_length(), 1)) + 2
        h.update(b_t=ctx.types[x2], ac_t=centred_type(qx), bc_t=centred_type(qx2), za=a.a_zero_point,
                 zb=a.b_zero_point, ma=literal(a.a_multiplier), mb=literal(a.b_multiplier), shift=a.shift,
                 zy=a.zero_point, lo=a.lo, hi=a.hi, rw=requant_width(node.name, bits, [a.shift]))
    elif node.op == "QMul":
        qx2 = ctx.quant(layer.inputs[1])
        product_bits = centred_bits(qx) + centred_bits(qx2)
        h.update(b_t=ctx.types[layer.inputs[1]], ac_t=centred_type(qx), bc_t=centred_type(qx2),
                 pc_t=ap_type(product_bits, True), za=a.a_zero_point, zb=a.b_zero_point, m=literal(a.multiplier),
                 shift=a.shift, zy=a.zero_point, lo=a.lo, hi=a.hi,
                 rw=requant_width(node.name, product_bits + max(a.multiplier.bit_length(), 1) + 1, [a.shift]))
    elif node.op == "QRequant":
        h.update(ac_t=centred_type(qx), za=a.input_zero_point, ma=literal(a.multiplier), shift=a.shift,
                 zy=a.zero_point, lo=a.lo, hi=a.hi,
                 rw=requant_width(node.name, centred_bits(qx) + max(a.multiplier.bit_length(), 1) + 1, [a.shift]))
    else:  # QLut
        table = np.asarray(a.table, np.int64)
        if a.input_min != qx.qmin or len(table) != qx.qmax - qx.qmin + 1:
            raise UnsupportedModelError(f"{node.name}: its table does not cover every level of its input")
        h.update(table=ctx.names.take(f"{prefix}_table"), input_min=a.input_min)
        arrays.append(CArray(h["table"], tensor_type(ctx.quant(y)), table,
                             f"output for every input level from {a.input_min}"))
    op = lambda s, call, c: f"{h['op_fn']}({', '.join(c.access(v) for v in call.args)})"  # noqa: E731
    calls = {"qadd": op, "qmul": op, "requant": op, "lut": op}
    return nest_kernel(ctx, node, layer, nest, fn, "eltwise", h, calls, {}, {}, arrays)
