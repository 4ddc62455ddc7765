"""hg_line_buffer (and hg_pixel_walk): random convolution geometries (kernel, stride, padding, dilation)
and random lane taps; every window vector the lanes read, through a memory model of the banked
activation memory, equals the window numpy cuts from the zero-padded input (hlsgen.ops.pool.pool_windows),
including tiles replayed with save/restore, and the fused-pool counters follow the pixel."""
import numpy as np
import pytest
from cocotb.triggers import RisingEdge, Timer

import cocotb
from bench import config, pack, rng, run_bench, start, unpack
from hlsgen.ops.pool import PoolAttrs, pool_windows
from hlsgen.rtl.words import MIN_DIM_W as DIM_W, tap_word, verilog_parameters

ADDR_W, OFF_W = 12, 16
TAP = tap_word(ADDR_W)


async def settle():
    await Timer(1, unit="ns")


async def check_geometry(dut, gen, lanes: int) -> None:
    np_rng = np.random.default_rng(gen.randrange(1 << 30))
    c_in, h, w = gen.randint(1, 3), gen.randint(2, 9), gen.randint(2, 9)
    kh, kw = gen.randint(1, min(4, h)), gen.randint(1, min(4, w))
    sy, sx, dil = gen.randint(1, 3), gen.randint(1, 3), gen.randint(1, 2)
    pt, pl = gen.randint(0, kh - 1), gen.randint(0, kw - 1)
    if (kh - 1) * dil + 1 > h + 2 * pt or (kw - 1) * dil + 1 > w + 2 * pl:
        dil = 1
    attrs = PoolAttrs((kh, kw), (sy, sx), (pt, pl, pt, pl), (dil, dil))
    x = np_rng.integers(1, 256, (1, c_in, h, w))
    windows = pool_windows(attrs, x, 0, 0)[0]  # C, OH, OW, KH, KW
    out_h, out_w = windows.shape[1:3]
    if out_h < 1 or out_w < 1:
        return
    base = gen.randint(0, 100)
    memory = {base + i: int(v) for i, v in enumerate(x.ravel())}
    taps = []
    for _ in range(lanes):
        ci, ky, kx = gen.randrange(c_in), gen.randrange(kh), gen.randrange(kw)
        valid = gen.random() < 0.85
        taps.append((valid, ci, ky, kx))
    words = [TAP.pack(valid=v, dy=ky * dil, dx=kx * dil, off=ci * h * w + ky * dil * w + kx * dil)
             for v, ci, ky, kx in taps]
    pkh, pkw = gen.randint(1, 3), gen.randint(1, 3)
    cfg = dict(base=base, in_h=h, in_w=w, out_w=out_w, sx=sx, sy=sy, x0_first=-pl, y0_first=-pt,
               pix_first=-pt * w - pl, row_step=sy * w, pool_kh=pkh, pool_kw=pkw,
               taps=pack(words, TAP.width))
    for name, value in cfg.items():
        handle = getattr(dut, name)
        handle.value = value & ((1 << len(handle)) - 1)
    dut.init.value, dut.step.value, dut.save.value, dut.restore.value = 1, 0, 0, 0
    await RisingEdge(dut.clk)
    dut.init.value = 0

    async def expect(p: int) -> None:
        await settle()
        oy, ox = divmod(p, out_w)
        assert (int(dut.oy.value), int(dut.ox.value)) == (oy, ox)
        assert (int(dut.py.value), int(dut.pi.value)) == divmod(oy, pkh)
        assert (int(dut.px.value), int(dut.pj.value)) == divmod(ox, pkw)
        addresses = unpack(dut.addr.value, lanes, ADDR_W, signed=False)
        inside = int(dut.in_bounds.value)
        for r, (valid, ci, ky, kx) in enumerate(taps):
            got = memory[addresses[r]] if inside >> r & 1 else 0
            want = int(windows[ci, oy, ox, ky, kx]) if valid else 0
            assert got == want, f"pixel {p} lane {r}: {got} != {want}"

    pixels, p = out_h * out_w, 0
    while p < pixels:  # tiles of random length, each replayed once before moving on
        tile = min(gen.randint(1, 7), pixels - p)
        for replay in range(2):
            for i in range(tile):
                await expect(p + i)
                last = i == tile - 1
                dut.step.value = 1
                dut.restore.value = int(last and replay == 0)
                dut.save.value = int(last and replay == 1)
                await RisingEdge(dut.clk)
                dut.step.value = dut.restore.value = dut.save.value = 0
        p += tile


@cocotb.test()
async def windows_are_exact(dut):
    lanes = config()["parameters"]["R"]
    gen = rng()
    await start(dut, reset=None)
    for _ in range(40):
        await check_geometry(dut, gen, lanes)


@pytest.mark.rtl
def test_line_buffer():
    layout = {name: value for name, value in verilog_parameters(32, ADDR_W).items() if name.startswith("TAP_")}
    run_bench(__file__, "hg_line_buffer", {"R": 5, "DIM_W": DIM_W, "ADDR_W": ADDR_W, "OFF_W": OFF_W, **layout},
              {"seed": 7})
