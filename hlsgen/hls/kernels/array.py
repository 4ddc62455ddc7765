"""QConv and QDense on the systolic array (templates/hls/array.j2): the weights ROM in the loop IR's
[group][reduction][out channel] layout, the window generator (`line_buffer` / `input_vector`) and the
per-channel requantizer (`requant`), around the layer's nest."""
from __future__ import annotations

import numpy as np

from ...errors import UnsupportedModelError
from ...hw.rows import LayerMap
from ...ir import Node
from ...loopir import LoopNest
from ...loopir.words import at, do, let, loop, put, var, when
from ..nest import lower
from ..cnames import ap_type, signed_type_for, storage_type
from .common import (CArray, Context, Kernel, Offchip, centred_type, nest_kernel, requant_width,
                     unsigned_bits)


def geometry(attrs, in_shape, out_shape, layer: str) -> dict:
    """Window geometry normalized to 2-D (a 1-D window is one row high)."""
    n = len(attrs.kernel_shape)
    if n not in (1, 2):
        raise UnsupportedModelError(f"{layer}: {n}-D windows are not supported by the HLS kernels (1-D, 2-D)")
    if n == 1:
        ks, st, dl, pads = (1, *attrs.kernel_shape), (1, *attrs.strides), (1, *attrs.dilations), (0, attrs.pads[0])
        (w,), h, (ow,) = in_shape[2:], 1, out_shape[2:]
        oh = 1
    else:
        ks, st, dl, pads = attrs.kernel_shape, attrs.strides, attrs.dilations, attrs.pads[:2]
        (h, w), (oh, ow) = in_shape[2:], out_shape[2:]
    return {"h": h, "w": w, "oh": oh, "ow": ow, "kh": ks[0], "kw": ks[1], "sh": st[0], "sw": st[1],
            "dh": dl[0], "dw": dl[1], "pt": pads[0], "pl": pads[1]}


def rom_layout(node: Node, w: np.ndarray, depthwise: bool) -> np.ndarray:
    """Weights as [group][reduction][out channel], reduction k = (input channel * kh + row) * kw + col."""
    if node.op == "QDense":
        return w[None]
    m = w.shape[0]
    if depthwise:
        return w.reshape(m, -1).T[None]
    groups = node.attrs.conv.group
    return w.reshape(groups, m // groups, -1).transpose(0, 2, 1)


def build(node: Node, layer: LayerMap, nest: LoopNest, ctx: Context) -> Kernel:
    graph, names = ctx.graph, ctx.names
    x, y = layer.inputs[0], layer.output
    qx, rq, tiles = ctx.quant(x), node.attrs.requant, layer.tiles
    work = tiles.work.unpadded()  # the nest's: this design's windows come from its own line buffers
    m = graph.shape(y)[1]
    rom = rom_layout(node, ctx.constant(node, 1), work.depthwise)
    if rom.shape != nest.buffer("weights").shape:
        raise UnsupportedModelError(f"{node.name}: weights {rom.shape} do not match the loop IR's weights buffer "
                                    f"{nest.buffer('weights').shape}")
    prefix = names.take(node.name)
    fn = names.take(f"k_{prefix}")
    bias = ctx.constant(node, 2)
    bias = np.zeros(m, np.int64) if bias is None else bias
    mul = np.broadcast_to(np.asarray(rq.multiplier, np.int64), (m,))
    shift = np.broadcast_to(np.asarray(rq.shift, np.int64), (m,))
    mneg = None if rq.neg_multiplier is None else np.broadcast_to(np.asarray(rq.neg_multiplier, np.int64), (m,))
    mul_bits = unsigned_bits(mul if mneg is None else np.concatenate([mul, mneg]))
    c_names = {key: names.take(f"{prefix}_{key}") for key in ("weights", "bias", "mul", "shift")}
    w_t = ap_type(node.attrs.weight_bits, True)  # the width quantization chose
    arrays = [CArray(c_names["bias"], signed_type_for(bias), bias, "bias at the accumulator's scale, per channel"),
              CArray(c_names["mul"], ap_type(mul_bits, False), mul, "requantization multipliers, per channel"),
              CArray(c_names["shift"], ap_type(unsigned_bits(shift), False), shift, "requantization shifts, per channel")]
    if mneg is not None:
        c_names["mneg"] = names.take(f"{prefix}_mneg")
        arrays.append(CArray(c_names["mneg"], ap_type(mul_bits, False), mneg,
                             "multipliers where the accumulator is negative (LeakyRelu), per output channel"))
    comment = "weights [group][reduction][out channel], reduction = " + (
        "the input flattened row-major" if node.op == "QDense" else "(input channel * kh + row) * kw + col")
    offchip, rom_names = None, {}
    if node.name in ctx.offchip_layers:
        data = CArray(names.take(f"{prefix}_wmem_data"), w_t, rom.reshape(-1), f"{comment}, flattened")
        offchip = Offchip(names.take(f"{prefix}_wmem"), storage_type(rom), int(rom.size), node.name, data)
    else:
        arrays.insert(0, CArray(c_names["weights"], w_t, rom, comment))
        rom_names = {"weights": c_names["weights"]}
    acc_t = ap_type(node.attrs.acc_bits, True)
    h = {"window_fn": ctx.helper(fn, "window"), "requant_fn": ctx.helper(fn, "requant"),
         "x_t": ctx.types[x], "y_t": ctx.types[y], "xc_t": centred_type(qx), "acc_t": acc_t,
         "zx": qx.zero_point, "zy": rq.zero_point, "lo": rq.lo, "hi": rq.hi,
         "rw": requant_width(node.name, node.attrs.acc_bits + mul_bits + 1, shift),
         "bias": c_names["bias"], "mul": c_names["mul"], "shift": c_names["shift"], "mneg": c_names.get("mneg", ""),
         "output_stationary": tiles.dataflow == "output_stationary", "depthwise": work.depthwise,
         "dense": node.op == "QDense", "x_dims": list(nest.buffer("x").shape),
         "window_dims": "".join(f"[{n}]" for n in nest.buffer("window").shape),
         "lanes": nest.buffer("window").shape[0], "reduction": work.reduction, "pixels": work.pixels,
         "columns": nest.buffer("window").shape[-1], "channels": m}
    if node.op == "QDense":
        x_rows, x_pixels = nest.buffer("x").shape
        h.update(dense_row="k" if x_rows == work.reduction else f"k / {x_pixels}",
                 dense_col="p" if x_rows == work.reduction else f"k % {x_pixels}")
    else:
        g = geometry(node.attrs.conv, graph.shape(x), graph.shape(y), node.name)
        h.update(g, taps=g["kh"] * g["kw"], cg=graph.shape(x)[1] // node.attrs.conv.group)
    window = window_nest(h, nest)
    h["window_body"] = "\n".join(lower(window))
    calls = {"line_buffer": lambda s, call, c: _window_call(h, s, call, c, tiles.col_tile),
             "input_vector": lambda s, call, c: _window_call(h, s, call, c, tiles.col_tile),
             "requant": lambda s, call, c: f"{h['requant_fn']}({c.arg(call.args[0])}, {c.expr(s.target.index[0])})"}
    types = {"window": h["xc_t"], "acc": acc_t, "pe_w": w_t, "weights": w_t}
    return nest_kernel(ctx, node, layer, nest, fn, "array", h, calls, types, rom_names, arrays, offchip,
                       {"line_buffer": window, "input_vector": window})


def window_nest(h: dict, nest: LoopNest) -> LoopNest:
    """The window generator (`line_buffer` / `input_vector` of the layer's nest) as it reads x: one lane per
    reduction index (weight-stationary) or pixel (output-stationary), x - zx, 0 in the padding and past the
    end; depthwise, one column per channel."""
    centre = (put("v", str(h["zx"]), "-="),) if h["zx"] else ()
    if h["output_stationary"]:
        head = (let("int", "k", "tap"), let("int", "p", "first + r"), let("bool", "valid", f"p < {h['pixels']}"))
    else:
        head = (let("int", "k", "first + r"), let("int", "p", "pixel"), let("bool", "valid", f"k < {h['reduction']}"))
    if h["dense"]:
        body = (do("(void)group"), do("(void)p"), var(h["xc_t"], "v", "0"),
                when("valid", put("v", at("x", h["dense_row"], h["dense_col"])), *centre), put(at("window", "r"), "v"))
    else:
        tap = "k" if h["depthwise"] else f"(k % {h['taps']})"
        at_ = (let("int", "ih", f"(p / {h['ow']}) * {h['sh']} - {h['pt']} + ({tap} / {h['kw']}) * {h['dh']}"),
               let("int", "iw", f"(p % {h['ow']}) * {h['sw']} - {h['pl']} + (k % {h['kw']}) * {h['dw']}"))
        inside = f"valid && ih >= 0 && ih < {h['h']} && iw >= 0 && iw < {h['w']}"
        pixel = f"ih * {h['w']} + iw"
        if h["depthwise"]:
            body = (do("(void)group"), *at_, let("bool", "inside", inside), loop(
                "columns", "col", h["columns"], let("int", "channel", "first_channel + col"), var(h["xc_t"], "v", "0"),
                when(f"inside && channel < {h['channels']}", put("v", at("x", "first_channel + col", pixel)), *centre),
                put(at("window", "r", "col"), "v")))
        else:
            body = (*at_, var(h["xc_t"], "v", "0"),
                    when(inside, put("v", at("x", f"group * {h['cg']} + k / {h['taps']}", pixel)), *centre),
                    put(at("window", "r"), "v"))
    buffers = (nest.buffer("x"), nest.buffer("window"))
    return LoopNest(h["window_fn"], buffers=buffers, body=(loop("lanes", "r", h["lanes"], *head, *body),),
                    placed=tuple((b, d) for b, d in nest.placed if b == "x"))


def _window_call(h: dict, stmt, call, c, col_tile: int) -> str:
    args = [c.name(stmt.target.buffer), *(c.arg(a) for a in call.args)]
    if h["depthwise"]:  # the columns are channels: the window depends on the column tile too
        args.append(f"col_tile * {col_tile}")
    return f"{h['window_fn']}({', '.join(args)})"
