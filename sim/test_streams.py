"""hg_stream_in and hg_stream_out, the AXI-Stream ports: random TVALID and TREADY gaps; every element of
the map lands in (or leaves from) its banks in [channel][row][col] order, with TLAST on the last one,
`done` once, and no beat taken past the end of the map."""
import pytest
from cocotb.triggers import RisingEdge, Timer

import cocotb
from bench import config, rng, run_bench, start, unpack

R, D_W, ADDR_W = 4, 8, 10
# STRIDE: words between channel blocks (a batch's map stacks N images' HW words in each block)
MAPS = {"in": dict(BASE=5, LG=1, HW=6, STRIDE=6, CHANNELS=3), "out": dict(BASE=9, LG=2, HW=4, STRIDE=12, CHANNELS=7)}


def place(c: int, pixel: int, p: dict) -> tuple[list[int], int]:
    """(banks holding channel c, its address) in the layout of docs/hardware.md."""
    groups = 1 << p["LG"]
    return [j for j in range(R) if j % groups == c % groups], p["BASE"] + (c >> p["LG"]) * p["STRIDE"] + pixel


def drive_map(dut, p: dict) -> None:
    """The map's geometry on the module's ports (a generated top's constants, or a loaded program's header)."""
    dut.base.value, dut.lg.value, dut.hw.value, dut.channels.value = p["BASE"], p["LG"], p["HW"], p["CHANNELS"]
    dut.stride.value = p["STRIDE"]


@cocotb.test()
async def output_stream(dut):
    p, gen = config()["map"], rng()
    drive_map(dut, p)
    total = p["HW"] * p["CHANNELS"]
    memory = {}
    for i in range(total):
        banks, address = place(i // p["HW"], i % p["HW"], p)
        memory[address] = gen.randrange(256)
    dut.active.value, dut.m_tready.value = 0, 0
    await start(dut)
    for _ in range(2):
        received, last, done = [], [], 0
        dut.active.value = 1
        await Timer(1, unit="ns")
        address = previous = int(dut.rd_addr.value)
        for _ in range(300):
            dut.m_tready.value = int(gen.random() < 0.6)
            await RisingEdge(dut.clk)
            beat = int(dut.m_tvalid.value) and int(dut.m_tready.value)
            if beat:
                received.append(int(dut.m_tdata.value))
                last.append(int(dut.m_tlast.value))
            dut.rd_data.value = memory.get(previous, 0)  # the memory answers the address of two cycles ago
            previous = address
            await Timer(1, unit="ns")
            address = int(dut.rd_addr.value)
            done += int(dut.done.value)
        want = [memory[place(i // p["HW"], i % p["HW"], p)[1]] for i in range(total)]
        assert received == want and last == [0] * (total - 1) + [1] and done == 1
        dut.active.value = 0
        await RisingEdge(dut.clk)


# several output maps (a model's outputs), sent one after another: other banks, strides and planes' addresses
OUTPUTS = [MAPS["out"], dict(BASE=100, LG=0, HW=5, STRIDE=5, CHANNELS=2), dict(BASE=200, LG=1, HW=3, STRIDE=3,
                                                                                CHANNELS=5)]


@cocotb.test()
async def output_maps(dut):
    """The maps in turn, their geometry driven from the module's `map` (as the generated top's `case`), under
    random TREADY gaps: every element in order, TLAST only on the last map's last, `done` once."""
    gen, maps = rng(), config()["maps"]
    dut.last_map.value = len(maps) - 1
    memory, want = {}, []
    for m, p in enumerate(maps):
        for i in range(p["HW"] * p["CHANNELS"]):
            c, address = i // p["HW"], place(i // p["HW"], i % p["HW"], p)[1]
            memory[m, c % (1 << p["LG"]), address] = value = gen.randrange(256)  # each bank its own value
            want.append(value)
    drive_map(dut, maps[0])
    dut.active.value, dut.m_tready.value = 0, 0
    await start(dut)
    for _ in range(2):
        received, last, done = [], [], 0
        dut.active.value = 1
        await Timer(1, unit="ns")
        drive_map(dut, maps[int(dut.map.value)])
        await Timer(1, unit="ns")
        address = previous = (int(dut.map.value), int(dut.rd_bank.value), int(dut.rd_addr.value))
        for _ in range(400):
            dut.m_tready.value = int(gen.random() < 0.6)
            await RisingEdge(dut.clk)
            beat = int(dut.m_tvalid.value) and int(dut.m_tready.value)
            if beat:
                received.append(int(dut.m_tdata.value))
                last.append(int(dut.m_tlast.value))
            dut.rd_data.value = memory.get(previous, 0)  # the memory answers the address of two cycles ago
            previous = address
            await Timer(1, unit="ns")
            drive_map(dut, maps[int(dut.map.value)])  # the top's geometry follows `map` combinationally
            await Timer(1, unit="ns")
            address = (int(dut.map.value), int(dut.rd_bank.value), int(dut.rd_addr.value))
            done += int(dut.done.value)
        assert received == want and last == [0] * (len(want) - 1) + [1] and done == 1
        dut.active.value = 0
        await RisingEdge(dut.clk)


# several input maps (a model's inputs), taken one after another, each with its plane
INPUTS = [MAPS["in"] | dict(PLANE=1), dict(BASE=40, LG=0, HW=5, STRIDE=5, CHANNELS=2, PLANE=0),
          dict(BASE=60, LG=2, HW=3, STRIDE=3, CHANNELS=6, PLANE=1)]


@cocotb.test()
async def input_maps(dut):
    """The maps in turn, their geometry and plane driven from the module's `map` (as the generated top's
    `case`), under random TVALID gaps and beats offered past the end: every element in its map's banks and
    plane, `done` once, no beat taken past the last map's last element."""
    gen, maps = rng(), config()["maps"]
    dut.last_map.value = len(maps) - 1
    elements = [(m, i, gen.randrange(256)) for m, p in enumerate(maps) for i in range(p["HW"] * p["CHANNELS"])]

    def drive(m: int) -> None:
        drive_map(dut, maps[m])
        dut.plane.value = maps[m]["PLANE"]

    drive(0)
    dut.active.value, dut.s_tvalid.value = 0, 0
    await start(dut)
    for _ in range(2):
        memory, sent, done = {}, 0, 0
        dut.active.value = 1
        await Timer(1, unit="ns")
        drive(int(dut.map.value))
        for _ in range(600):
            dut.s_tvalid.value = int(sent < len(elements) + 3 and gen.random() < 0.7)
            dut.s_tdata.value = elements[sent % len(elements)][2]
            await RisingEdge(dut.clk)
            taken = int(dut.s_tvalid.value) and int(dut.s_tready.value)
            await Timer(1, unit="ns")
            drive(int(dut.map.value))  # the top's geometry follows `map` combinationally
            sent += taken
            done += int(dut.done.value)
            if int(dut.wr_en.value):
                data = unpack(dut.wr_data.value, R, D_W, signed=False)
                for j in range(R):
                    if int(dut.wr_en.value) >> j & 1:
                        memory[int(dut.wr_plane.value), j, int(dut.wr_addr.value)] = data[j]
        assert sent == len(elements) and done == 1
        for m, i, v in elements:
            p = maps[m]
            banks, address = place(i // p["HW"], i % p["HW"], p)
            assert all(memory[p["PLANE"], j, address] == v for j in banks), f"map {m} element {i}"
        dut.active.value = 0
        await RisingEdge(dut.clk)


@pytest.mark.rtl
@pytest.mark.parametrize("maps", [INPUTS[:1], INPUTS], ids=["one_map", "three_maps"])
def test_input_maps(maps):
    run_bench(__file__, "hg_stream_in", {"R": R, "D_W": D_W, "ADDR_W": ADDR_W, "MAP_W": 2},
              {"seed": 27, "maps": maps}, testcase="input_maps")


@pytest.mark.rtl
def test_output_maps():
    run_bench(__file__, "hg_stream_out", {"R": R, "D_W": D_W, "ADDR_W": ADDR_W, "MAP_W": 2},
              {"seed": 25, "maps": OUTPUTS}, testcase="output_maps")


@pytest.mark.rtl
def test_output_stream():
    run_bench(__file__, "hg_stream_out", {"R": R, "D_W": D_W, "ADDR_W": ADDR_W}, {"seed": 19, "map": MAPS["out"]},
              testcase="output_stream")
