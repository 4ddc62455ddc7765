"""hg_vector_engine, the pooling and element-wise unit: random maps in a model of the banked activation
memory (one cycle of read latency), every result lane exact against the integer reference:
QAdd (int_ops.qadd), QMul (qmul; b a map of a's shape or one pixel per channel, cfg_b_one), QRequant
(qrequant; also reading an upsampled map that repeats its edge pixels, as Resize does: resize),
global average pool (qaverage_pool) and global max pool, and windowed pools of random geometry (kernel,
stride, padding, dilation, ceil mode, count_include_pad) against qaverage_pool and max_pool, the average's
(multiplier, shift) from a divisor table of random words per window count; and global pools over a map
given in two runs of rows (`cfg_acc` on the second: the totals carry on), exact against the whole map's; and
interpolations (OP_LERP: a linear Resize of any coordinate transformation by integer or fractional factors
1-3 per axis, 2-D or 1-D) and picks (OP_PICK: a nearest Resize by such factors, every nearest_mode) against
qresample."""
import random
from fractions import Fraction

import numpy as np
import pytest
from cocotb.triggers import RisingEdge, Timer

import cocotb
from bench import build_root, config, pack, rng, run_bench, start, unpack
from hlsgen.quant.int_ops import (QAddAttrs, QAveragePoolAttrs, QMulAttrs, QRequantAttrs, QResampleAttrs, qadd,
                                  qaverage_pool, qmul, qrequant, qresample)
from hlsgen.ops.pool import PoolAttrs, max_pool, output_size, pool_windows
from hlsgen.ops.resize import LINEAR_TRANSFORMS, ResizeAttrs, linear_steps, nearest_steps, resize
from hlsgen.rtl.words import divisor_word
from hlsgen.quant.arith import quantize_multiplier

D_W, ADDR_W = 8, 10
OP_ADD, OP_REQ, OP_GAVG, OP_GMAX, OP_WAVG, OP_WMAX, OP_MUL, OP_LERP, OP_PICK = 0, 1, 3, 4, 5, 6, 7, 8, 9
MAX_WINDOW = 4  # kernels up to 4x4: the divisor table has a word per count 0..16
DIV_DEPTH = MAX_WINDOW * MAX_WINDOW + 1


def divisor_table(seed: int) -> list[tuple[int, int]]:
    """(multiplier, shift) per window count: about 1 / count, randomly off."""
    gen = random.Random(seed)
    return [quantize_multiplier(gen.uniform(0.5, 1.5) / max(c, 1)) for c in range(DIV_DEPTH)]


def window_attrs(gen, h: int, w: int) -> PoolAttrs:
    """A random 2-D pooling geometry with at least one window on an h x w map (pads below the window)."""
    while True:
        k = (gen.randint(1, MAX_WINDOW), gen.randint(1, MAX_WINDOW))
        d = (gen.randint(1, 2), gen.randint(1, 2))
        pads = tuple(gen.randint(0, k[i % 2] - 1) for i in range(4))
        a = PoolAttrs(k, (gen.randint(1, 3), gen.randint(1, 3)), pads, d, gen.random() < 0.5, gen.random() < 0.5)
        sizes = [output_size(n, k[i], a.strides[i], d[i], pads[i], pads[2 + i], a.ceil_mode) for i, n in
                 enumerate((h, w))]
        # every window reaches into the map (a window of padding only has no maximum)
        if min(sizes) >= 1 and pool_windows(a, np.ones((1, 1, h, w)), 0, 0).sum(axis=(-2, -1)).min() > 0:
            return a


def window_fields(a: PoolAttrs, h: int, w: int) -> dict:
    """The engine's window fields, as the program compiler sets them (hlsgen/rtl/program.py)."""
    oh, ow = (output_size(n, a.kernel_shape[i], a.strides[i], a.dilations[i], a.pads[i], a.pads[2 + i],
                          a.ceil_mode) for i, n in enumerate((h, w)))
    lo, hi = ((-a.pads[0], -a.pads[1]), (h + a.pads[2], w + a.pads[3])) if a.count_include_pad else ((0, 0), (h, w))
    return dict(cfg_w=ow, cfg_pixels=oh * ow, cfg_in_h=h, cfg_in_w=w, cfg_sx=a.strides[1], cfg_sy=a.strides[0],
                cfg_x0=-a.pads[1], cfg_y0=-a.pads[0], cfg_pix0=-a.pads[0] * w - a.pads[1],
                cfg_row_step=a.strides[0] * w, cfg_kh=a.kernel_shape[0], cfg_kw=a.kernel_shape[1],
                cfg_dil_x=a.dilations[1], cfg_dil_y=a.dilations[0], cfg_dil_row=a.dilations[0] * w,
                cfg_cnt_y0=lo[0], cfg_cnt_x0=lo[1], cfg_cnt_y1=hi[0], cfg_cnt_x1=hi[1], cfg_div_base=0)


def store(x: np.ndarray, base: int, lanes: int) -> dict:
    """Channel m of x (C, H, W) in bank m mod lanes, at base + (m // lanes) * H * W + pixel."""
    memory = {}
    hw = x.shape[1] * x.shape[2]
    for m in range(x.shape[0]):
        for pix, v in enumerate(x[m].ravel()):
            memory[m % lanes, base + (m // lanes) * hw + pix] = int(v) & 0xFF
    return memory


async def run_op(dut, gen, lanes: int, divisors: list[tuple[int, int]]) -> None:
    np_rng = np.random.default_rng(gen.randrange(1 << 30))
    op = gen.choice([OP_ADD, OP_REQ, OP_GAVG, OP_GMAX, OP_WAVG, OP_WMAX, OP_MUL, OP_LERP, OP_PICK])
    channels, h, w = gen.randint(1, 2 * lanes + 1), gen.randint(1, 5), gen.randint(1, 5)
    one_row = op in (OP_LERP, OP_PICK) and gen.random() < 0.25  # a 1-D map: one row, resampled along it only
    h = 1 if one_row else h
    a_signed, b_signed, y_signed = gen.random() < 0.5, gen.random() < 0.5, gen.random() < 0.5
    qlo, qhi = (-128, 127) if y_signed else (0, 255)
    rand = lambda s: np_rng.integers(-128, 128, (1, channels, h, w)) if s else np_rng.integers(0, 256, (1, channels, h, w))  # noqa: E731
    a, b = rand(a_signed), rand(b_signed)
    b_one = op == OP_MUL and gen.random() < 0.5  # a per-channel gate: one pixel per channel
    if b_one:
        b = b[:, :, :1, :1]
    up_y, up_x = (gen.randint(1, 3), gen.randint(1, 3)) if op == OP_REQ else (1, 1)
    pads = tuple(gen.randint(0, 2) for _ in range(4)) if op == OP_REQ and gen.random() < 0.5 else (0,) * 4
    out_h, out_w = h * up_y + pads[0] + pads[2], w * up_x + pads[1] + pads[3]
    # window fields of a 1x1 window (unused but by the windowed pools, which set their own)
    cfg = window_fields(PoolAttrs((1, 1), (1, 1), (0,) * 4, (1, 1)), h, w) | dict(cfg_op=op, cfg_a_base=gen.randint(0, 40), cfg_b_base=gen.randint(0, 40), cfg_a_lg=lanes.bit_length() - 1,
               cfg_b_lg=lanes.bit_length() - 1, cfg_stride=h * w, cfg_w=out_w, cfg_pixels=out_h * out_w,
               cfg_up_x=up_x - 1, cfg_up_y=up_y - 1, cfg_src_w=w, cfg_src_h=h, cfg_jy0=-pads[0],
               cfg_jx0=-pads[1], cfg_edge=int(any(pads)),
               cfg_passes=-(-channels // lanes), cfg_acc=0, cfg_a_zp=0, cfg_b_zp=0, cfg_a_signed=int(a_signed),
               cfg_b_signed=int(b_signed), cfg_ma=1, cfg_mb=0, cfg_shift=0, cfg_zp=0, cfg_lo=qlo, cfg_hi=qhi,
               cfg_lut_base=0, cfg_pool_kh=1, cfg_pool_kw=1, cfg_b_one=int(b_one))
    taps = 1
    if op == OP_ADD:
        attrs = QAddAttrs(gen.randint(-5, 5), gen.randint(-5, 5), gen.randint(1 << 14, (1 << 16) - 1),
                          gen.randint(1 << 13, 1 << 16), gen.randint(14, 17), gen.randint(-3, 3), qlo, qhi)
        want = qadd(attrs, a, b)[0]
        cfg.update(cfg_a_zp=attrs.a_zero_point, cfg_b_zp=attrs.b_zero_point, cfg_ma=attrs.a_multiplier,
                   cfg_mb=attrs.b_multiplier, cfg_shift=attrs.shift, cfg_zp=attrs.zero_point)
    elif op == OP_MUL:
        m, s = quantize_multiplier(gen.uniform(0.5, 2.0) / 256)
        attrs = QMulAttrs(gen.randint(-300, 300), gen.randint(-300, 300), m, s, gen.randint(-3, 3), qlo, qhi)
        want = qmul(attrs, a, b)[0]
        cfg.update(cfg_a_zp=attrs.a_zero_point, cfg_b_zp=attrs.b_zero_point, cfg_ma=m, cfg_shift=s,
                   cfg_zp=attrs.zero_point)
    elif op == OP_REQ:
        m, s = quantize_multiplier(gen.uniform(0.05, 2.0))
        attrs = QRequantAttrs(gen.randint(-5, 5), m, s, gen.randint(-3, 3), qlo, qhi)
        want = qrequant(attrs, resize(ResizeAttrs((up_y, up_x), pads=pads if any(pads) else ()), a))[0]
        cfg.update(cfg_a_zp=attrs.input_zero_point, cfg_ma=m, cfg_shift=s, cfg_zp=attrs.zero_point)
    elif op in (OP_LERP, OP_PICK):
        transform = gen.choice(LINEAR_TRANSFORMS)
        sizes = (w,) if one_row else (h, w)
        scales = tuple(Fraction(n + gen.randint(0, 2 * n), n) for n in sizes)  # integer factors or fractions
        if op == OP_PICK:
            nearest = gen.choice(["floor", "ceil", "round_prefer_floor", "round_prefer_ceil"])
            steps = tuple(nearest_steps(transform, nearest, n, f) for n, f in zip(sizes, scales))
        else:
            steps = tuple(linear_steps(transform, n, f) for n, f in zip(sizes, scales))
        (num_y, off_y, den_y), (num_x, off_x, den_x) = ((0, 0, 1), *steps) if one_row else steps
        m, s = quantize_multiplier(gen.uniform(0.5, 1.5) / (den_y * den_x))
        attrs = QResampleAttrs(scales, transform, steps,
                               QRequantAttrs(gen.randint(-5, 5), m, s, gen.randint(-3, 3), qlo, qhi), op == OP_PICK)
        x = a[:, :, 0] if one_row else a
        want = qresample(attrs, x)[0].reshape(channels, h if one_row else int(h * scales[0]), -1)
        out_w = want.shape[2]
        cfg.update(window_fields(PoolAttrs((1, 1), (1, 1), (0,) * 4, (1, 1)), h, w), cfg_op=op, cfg_w=out_w,
                   cfg_pixels=want.shape[1] * out_w, cfg_kh=1 if one_row or op == OP_PICK else 2,
                   cfg_kw=1 if op == OP_PICK else 2, cfg_cnt_y0=num_y,
                   cfg_cnt_y1=den_y, cfg_cnt_x0=num_x, cfg_cnt_x1=den_x, cfg_y0=off_y, cfg_x0=off_x,
                   cfg_a_zp=attrs.requant.input_zero_point, cfg_ma=m, cfg_shift=s,
                   cfg_zp=attrs.requant.zero_point)
        taps = cfg["cfg_kh"] * cfg["cfg_kw"]
    elif op == OP_GAVG:
        m, s = quantize_multiplier(gen.uniform(0.5, 1.5) / (h * w))
        attrs = QAveragePoolAttrs(None, gen.randint(-5, 5), ((h * w, m, s),), gen.randint(-3, 3), qlo, qhi)
        want = qaverage_pool(attrs, a)[0]
        cfg.update(cfg_a_zp=attrs.input_zero_point, cfg_ma=m, cfg_shift=s, cfg_zp=attrs.zero_point)
    elif op == OP_WAVG:
        pool = window_attrs(gen, h, w)
        attrs = QAveragePoolAttrs(pool, gen.randint(-5, 5), tuple((c, m, s) for c, (m, s) in enumerate(divisors)),
                                  gen.randint(-3, 3), qlo, qhi)
        want = qaverage_pool(attrs, a)[0]
        cfg.update(window_fields(pool, h, w), cfg_op=op, cfg_a_zp=attrs.input_zero_point, cfg_zp=attrs.zero_point)
        taps = pool.kernel_shape[0] * pool.kernel_shape[1]
    elif op == OP_WMAX:
        pool = window_attrs(gen, h, w)
        want = max_pool(pool, a)[0]
        cfg.update(window_fields(pool, h, w), cfg_op=op, cfg_lo=-128 if a_signed else 0,
                   cfg_hi=127 if a_signed else 255)
        taps = pool.kernel_shape[0] * pool.kernel_shape[1]
        y_signed = a_signed
    else:
        want = a.max(axis=(2, 3), keepdims=True)[0]
        cfg.update(cfg_lo=-128 if a_signed else 0, cfg_hi=127 if a_signed else 255)
        y_signed = a_signed
    for name, value in cfg.items():
        handle = getattr(dut, name)
        handle.value = value & ((1 << len(handle)) - 1)
    memory_a, memory_b = store(a[0], cfg["cfg_a_base"], lanes), store(b[0], cfg["cfg_b_base"], lanes)
    global_pool = op in (OP_GAVG, OP_GMAX)
    got = {}
    dut.start.value = 1
    a_addr = b_addr = [0] * lanes
    for _ in range(cfg["cfg_passes"] * cfg["cfg_pixels"] * taps + 20):
        await RisingEdge(dut.clk)
        dut.start.value = 0
        dut.a_data.value = pack([memory_a.get((c, a_addr[c]), 0) for c in range(lanes)], D_W)
        dut.b_data.value = pack([memory_b.get((c, b_addr[c]), 0) for c in range(lanes)], D_W)
        await Timer(1, unit="ns")
        a_addr = unpack(dut.a_addr.value, lanes, ADDR_W, signed=False)
        b_addr = unpack(dut.b_addr.value, lanes, ADDR_W, signed=False)
        if int(dut.o_valid.value):
            block = int(dut.o_cblk.value)
            pixel = (0, 0) if global_pool else (int(dut.o_oy.value), int(dut.o_ox.value))
            for c, v in enumerate(unpack(dut.o_data.value, lanes, D_W, signed=y_signed)):
                got[block * lanes + c, *pixel] = v
    for m in range(channels):
        for y in range(want.shape[1]):
            for x in range(want.shape[2]):
                assert got.get((m, y, x)) == int(want[m, y, x]), f"op {op} channel {m} ({y}, {x})"


async def global_pool_run(dut, cfg: dict, memory: dict, lanes: int, signed: bool) -> list[int]:
    """One run of a global pool (one pass) over `memory`; its lanes' results."""
    for name, value in cfg.items():
        handle = getattr(dut, name)
        handle.value = value & ((1 << len(handle)) - 1)
    dut.start.value = 1
    a_addr, got = [0] * lanes, None
    for _ in range(cfg["cfg_pixels"] + 20):
        await RisingEdge(dut.clk)
        dut.start.value = 0
        dut.a_data.value = pack([memory.get((c, a_addr[c]), 0) for c in range(lanes)], D_W)
        await Timer(1, unit="ns")
        a_addr = unpack(dut.a_addr.value, lanes, ADDR_W, signed=False)
        if int(dut.o_valid.value):
            got = unpack(dut.o_data.value, lanes, D_W, signed=signed)
    return got


@cocotb.test()
async def global_pools_carry_their_totals_across_rows(dut):
    lanes = config()["parameters"]["C"]
    gen, np_rng = random.Random(5), np.random.default_rng(5)
    dut.start.value = 0
    await start(dut)
    for _ in range(20):
        op, signed = gen.choice([OP_GAVG, OP_GMAX]), gen.random() < 0.5
        channels, h, w = gen.randint(1, lanes), gen.randint(2, 6), gen.randint(1, 5)
        a = np_rng.integers(-128, 128, (1, channels, h, w)) if signed else np_rng.integers(0, 256, (1, channels, h, w))
        split = gen.randint(1, h - 1)
        cfg = window_fields(PoolAttrs((1, 1), (1, 1), (0,) * 4, (1, 1)), h, w) | dict(
            cfg_op=op, cfg_b_base=0, cfg_a_lg=lanes.bit_length() - 1, cfg_b_lg=lanes.bit_length() - 1, cfg_w=w,
            cfg_up_x=0, cfg_up_y=0, cfg_src_w=w, cfg_src_h=h, cfg_jx0=0, cfg_jy0=0, cfg_edge=0, cfg_passes=1, cfg_a_zp=0, cfg_b_zp=0, cfg_a_signed=int(signed),
            cfg_b_signed=0, cfg_ma=1, cfg_mb=0, cfg_shift=0, cfg_zp=0, cfg_lo=-128 if signed else 0,
            cfg_hi=127 if signed else 255, cfg_lut_base=0, cfg_pool_kh=1, cfg_pool_kw=1)
        if op == OP_GAVG:
            m, s = quantize_multiplier(gen.uniform(0.5, 1.5) / (h * w))
            attrs = QAveragePoolAttrs(None, gen.randint(-5, 5), ((h * w, m, s),), gen.randint(-3, 3), -128, 127)
            want = qaverage_pool(attrs, a)[0, :, 0, 0]
            cfg.update(cfg_a_zp=attrs.input_zero_point, cfg_ma=m, cfg_shift=s, cfg_zp=attrs.zero_point, cfg_lo=-128,
                       cfg_hi=127)
        else:
            want = a.max(axis=(2, 3))[0]
        out_signed = signed or op == OP_GAVG
        for rows, base, acc in (((0, split), 3, 0), ((split, h), 40, 1)):  # two band buffers
            part = a[0, :, rows[0]:rows[1]]
            pixels = part.shape[1] * w
            got = await global_pool_run(dut, cfg | dict(cfg_a_base=base, cfg_stride=pixels, cfg_pixels=pixels,
                                                        cfg_in_h=part.shape[1], cfg_acc=acc),
                                        store(part, base, lanes), lanes, out_signed)
        assert got[:channels] == [int(v) for v in want], f"op {op}: rows 0..{split} then {split}..{h}"


@cocotb.test()
async def results_are_exact(dut):
    lanes = config()["parameters"]["C"]
    gen = rng()
    divisors = divisor_table(config()["div_seed"])
    dut.start.value = 0
    await start(dut)
    for _ in range(60):
        await run_op(dut, gen, lanes, divisors)


@pytest.mark.rtl
def test_vector_engine():
    table = build_root() / "vector_engine_divisors.mem"
    table.parent.mkdir(parents=True, exist_ok=True)
    word = divisor_word()
    table.write_text("".join(f"{word.pack(mult=m, shift=s):06x}\n" for m, s in divisor_table(7)))
    run_bench(__file__, "hg_vector_engine", {"C": 4, "ADDR_W": ADDR_W, "CNT_W": 6, "PIX_W": 8, "DIV_DEPTH": DIV_DEPTH,
                                             "DIV_INIT": f'"{table}"'}, {"seed": 13, "div_seed": 7})
