"""hg_writer: a layer's results stream in, C channels of one pixel per cycle, channel block after channel
block; the banks it writes, read back through the layout (channel m in every bank m mod G), hold the
map itself, or its max-pooled map when a MaxPool is fused (equal to hlsgen.ops.pool.max_pool), or one
phase of an Interleave (every s_y-th row and s_x-th column of a larger map, from row dy and column dx),
signed and unsigned, with replicated layouts for maps of few channels."""
import numpy as np
import pytest
from cocotb.triggers import RisingEdge, Timer

import cocotb
from bench import config, pack, rng, run_bench, start, unpack
from hlsgen.ops.pool import PoolAttrs, max_pool

D_W, ADDR_W = 8, 10
LATENCY = 4  # input registers, window columns and products, window rows and address, bank data


async def write_map(dut, gen, lanes: int, banks: int) -> None:
    np_rng = np.random.default_rng(gen.randrange(1 << 30))
    pool = gen.random() < 0.6
    signed = gen.random() < 0.5
    channels = gen.choice([1, 2, lanes // 2 or 1, lanes, 2 * lanes, 2 * lanes + 1])
    h, w = gen.randint(1, 7), gen.randint(1, 7)
    kh, kw = (gen.randint(1, min(3, h)), gen.randint(1, min(3, w))) if pool else (1, 1)
    lo, hi = (-128, 127) if signed else (0, 255)
    y = np_rng.integers(lo, hi + 1, (1, channels, h, w))
    want = max_pool(PoolAttrs((kh, kw), (kh, kw), (0, 0, 0, 0), (1, 1)), y)[0] if pool else y[0]
    out_h, out_w = want.shape[1:]
    # an Interleave's phase (dy, dx) of steps (sy, sx): pixel (py, px) at (py * sy + dy, px * sx + dx)
    sy, sx = (1, 1) if pool else (gen.randint(1, 3), gen.randint(1, 3))
    dy, dx = gen.randrange(sy), gen.randrange(sx)
    full_w = out_w * sx
    # the layout: G = channels when they divide the banks (replicated), else G = banks
    groups = channels if banks % channels == 0 and channels < banks else banks
    lg = groups.bit_length() - 1
    stride = out_h * sy * full_w
    base = gen.randint(0, 50)
    cfg = dict(cfg_base=base + dy * full_w + dx, cfg_chan_stride=stride, cfg_width=full_w * sy, cfg_col_step=sx,
               cfg_lg=lg, cfg_channels=channels,
               cfg_signed=int(signed), cfg_pool=int(pool), cfg_pool_kh=kh, cfg_pool_kw=kw, cfg_pool_h=out_h,
               cfg_pool_w=out_w, cfg_dw=0, cfg_dw_base=0, cfg_dw_stride=0, cfg_dw_pitch=0)
    for name, value in cfg.items():
        getattr(dut, name).value = value
    memory = {}
    blocks = -(-channels // lanes)
    for block in range(blocks):
        for oy in range(h):
            for ox in range(w):
                lane_values = [int(y[0, block * lanes + c, oy, ox]) if block * lanes + c < channels else 0
                               for c in range(lanes)]
                dut.i_valid.value = 1
                dut.i_last.value = int(block == blocks - 1 and oy == h - 1 and ox == w - 1)
                dut.i_cblk.value = block
                dut.i_oy.value, dut.i_ox.value = oy, ox
                dut.i_py.value, dut.i_pi.value = divmod(oy, kh)
                dut.i_px.value, dut.i_pj.value = divmod(ox, kw)
                dut.i_data.value = pack(lane_values, D_W)
                await RisingEdge(dut.clk)
                await Timer(1, unit="ns")
                collect(dut, memory, banks)
    dut.i_valid.value = 0
    for _ in range(LATENCY - 1):
        assert int(dut.done.value) == 0
        await RisingEdge(dut.clk)
        await Timer(1, unit="ns")
        collect(dut, memory, banks)
    assert int(dut.done.value) == 1
    for m in range(channels):
        for bank in [j for j in range(banks) if j % groups == m % groups]:
            for py in range(out_h):
                for px in range(out_w):
                    raw = memory.get((bank, base + (m >> lg) * stride + (py * sy + dy) * full_w + px * sx + dx))
                    got = None if raw is None else (raw - 256 if signed and raw > 127 else raw)
                    assert got == int(want[m, py, px]), f"channel {m} bank {bank} ({py}, {px}): {got} != {want[m, py, px]}"


def collect(dut, memory: dict, banks: int) -> None:
    enables = int(dut.wr_en.value)
    if enables:
        data = unpack(dut.wr_data.value, banks, D_W, signed=False)
        for j in range(banks):
            if enables >> j & 1:
                memory[j, int(dut.wr_addr.value)] = data[j]


@cocotb.test()
async def written_maps_are_exact(dut):
    p = config()["parameters"]
    gen = rng()
    dut.i_valid.value = 0
    await start(dut)
    for _ in range(30):
        await write_map(dut, gen, p["C"], p["R"])


@pytest.mark.rtl
def test_writer():
    run_bench(__file__, "hg_writer", {"R": 4, "C": 4, "D_W": D_W, "ADDR_W": ADDR_W, "POOL_DEPTH": 8}, {"seed": 3})
