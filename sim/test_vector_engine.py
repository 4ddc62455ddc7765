"""hg_vector_engine, the pooling and element-wise unit: random maps in a model of the banked activation
memory (one cycle of read latency), every result lane exact against the integer reference:
QAdd (int_ops.qadd), QRequant (qrequant; also reading an upsampled map, as Resize does: resize_nearest),
global average pool (qaverage_pool) and global max pool."""
import numpy as np
import pytest
from cocotb.triggers import RisingEdge, Timer

import cocotb
from bench import config, pack, rng, run_bench, start, unpack
from hlsgen.quant.int_ops import QAddAttrs, QAveragePoolAttrs, QRequantAttrs, qadd, qaverage_pool, qrequant
from hlsgen.ops.resize import ResizeAttrs, resize_nearest
from hlsgen.quant.arith import quantize_multiplier

D_W, ADDR_W = 8, 10
OP_ADD, OP_REQ, OP_GAVG, OP_GMAX = 0, 1, 3, 4


def store(x: np.ndarray, base: int, lanes: int) -> dict:
    """Channel m of x (C, H, W) in bank m mod lanes, at base + (m // lanes) * H * W + pixel."""
    memory = {}
    hw = x.shape[1] * x.shape[2]
    for m in range(x.shape[0]):
        for pix, v in enumerate(x[m].ravel()):
            memory[m % lanes, base + (m // lanes) * hw + pix] = int(v) & 0xFF
    return memory


async def run_op(dut, gen, lanes: int) -> None:
    np_rng = np.random.default_rng(gen.randrange(1 << 30))
    op = gen.choice([OP_ADD, OP_REQ, OP_GAVG, OP_GMAX])
    channels, h, w = gen.randint(1, 2 * lanes + 1), gen.randint(1, 5), gen.randint(1, 5)
    a_signed, b_signed, y_signed = gen.random() < 0.5, gen.random() < 0.5, gen.random() < 0.5
    qlo, qhi = (-128, 127) if y_signed else (0, 255)
    rand = lambda s: np_rng.integers(-128, 128, (1, channels, h, w)) if s else np_rng.integers(0, 256, (1, channels, h, w))  # noqa: E731
    a, b = rand(a_signed), rand(b_signed)
    up_y, up_x = (gen.randint(1, 3), gen.randint(1, 3)) if op == OP_REQ else (1, 1)
    cfg = dict(cfg_op=op, cfg_a_base=gen.randint(0, 40), cfg_b_base=gen.randint(0, 40), cfg_a_lg=lanes.bit_length() - 1,
               cfg_b_lg=lanes.bit_length() - 1, cfg_stride=h * w, cfg_w=w * up_x, cfg_pixels=h * up_y * w * up_x,
               cfg_up_x=up_x - 1, cfg_up_y=up_y - 1, cfg_src_w=w,
               cfg_passes=-(-channels // lanes), cfg_a_zp=0, cfg_b_zp=0, cfg_a_signed=int(a_signed),
               cfg_b_signed=int(b_signed), cfg_ma=1, cfg_mb=0, cfg_shift=0, cfg_zp=0, cfg_lo=qlo, cfg_hi=qhi,
               cfg_lut_base=0, cfg_pool_kh=1, cfg_pool_kw=1)
    if op == OP_ADD:
        attrs = QAddAttrs(gen.randint(-5, 5), gen.randint(-5, 5), gen.randint(1 << 14, (1 << 16) - 1),
                          gen.randint(1 << 13, 1 << 16), gen.randint(14, 17), gen.randint(-3, 3), qlo, qhi)
        want = qadd(attrs, a, b)[0]
        cfg.update(cfg_a_zp=attrs.a_zero_point, cfg_b_zp=attrs.b_zero_point, cfg_ma=attrs.a_multiplier,
                   cfg_mb=attrs.b_multiplier, cfg_shift=attrs.shift, cfg_zp=attrs.zero_point)
    elif op == OP_REQ:
        m, s = quantize_multiplier(gen.uniform(0.05, 2.0))
        attrs = QRequantAttrs(gen.randint(-5, 5), m, s, gen.randint(-3, 3), qlo, qhi)
        want = qrequant(attrs, resize_nearest(ResizeAttrs((up_y, up_x)), a))[0]
        cfg.update(cfg_a_zp=attrs.input_zero_point, cfg_ma=m, cfg_shift=s, cfg_zp=attrs.zero_point)
    elif op == OP_GAVG:
        m, s = quantize_multiplier(gen.uniform(0.5, 1.5) / (h * w))
        attrs = QAveragePoolAttrs(None, gen.randint(-5, 5), ((h * w, m, s),), gen.randint(-3, 3), qlo, qhi)
        want = qaverage_pool(attrs, a)[0]
        cfg.update(cfg_a_zp=attrs.input_zero_point, cfg_ma=m, cfg_shift=s, cfg_zp=attrs.zero_point)
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
    for _ in range(cfg["cfg_passes"] * cfg["cfg_pixels"] + 20):
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


@cocotb.test()
async def results_are_exact(dut):
    lanes = config()["parameters"]["C"]
    gen = rng()
    dut.start.value = 0
    await start(dut)
    for _ in range(40):
        await run_op(dut, gen, lanes)


@pytest.mark.rtl
def test_vector_engine():
    run_bench(__file__, "hg_vector_engine", {"C": 4, "ADDR_W": ADDR_W, "CNT_W": 6, "PIX_W": 8}, {"seed": 13})
