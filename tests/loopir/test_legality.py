"""The legality check: worst-case accesses per bank per pipelined iteration, proven over all offsets."""
import pytest

from hlsgen.loopir import (Access, Buffer, Call, E, Loop, LoopNest, Stmt, Unroll, check, partition, pipeline,
                           port_uses, split, unroll)
from hlsgen.loopir.legality import partitions, worst_bank_words


def lanes(index, shape=(64,), banks=16, word=1, ii=1, lanes=16, kind="cyclic", factor=16, extent=8, writes=False):
    """for t (pipelined): for u (unrolled, `lanes`): y[...] = x[index(t, u)]"""
    x = Buffer("x", shape, 8, "activation", banks, 2, word)
    y = Buffer("y", (lanes,), 8, "register")
    stmt = Stmt(Access("y", (E("u"),)), Access("x", index))
    if writes:
        stmt = Stmt(Access("x", index), Access("y", (E("u"),)))
    nest = LoopNest("n", buffers=(x, y), body=(Loop("t", extent, (Loop("u", lanes, (stmt,)),)),))
    nest = pipeline(unroll(nest, "u"), "t", ii)
    if kind:
        nest = partition(nest, "x", 1, kind, factor)
    return nest


def test_one_bank_per_lane_is_legal():
    nest = lanes((E("t") * 16 + E("u"),), shape=(128,))
    assert check(nest) == []
    (use,) = port_uses(nest)[0]
    assert (use.accesses, use.capacity) == (1, 2)


def test_unpartitioned_lanes_conflict():
    nest = lanes((E("t") * 16 + E("u"),), shape=(128,), kind=None)
    (problem,) = check(nest)
    assert "needs 16 accesses per bank" in problem and "activation memory (x)" in problem


def test_too_few_banks_need_a_longer_ii():
    assert check(lanes((E("t") * 16 + E("u"),), shape=(128,), factor=4))  # 4 per bank > 2 ports
    assert check(lanes((E("t") * 16 + E("u"),), shape=(128,), factor=4, ii=2)) == []


def test_words_pack_neighbours():
    # 16 neighbours in one bank, 4 per word: 4 words > 2 ports; aligned at 4*t they are exactly 4 words
    assert "needs 4 accesses" in check(lanes((E("t") * 16 + E("u"),), shape=(128,), kind=None, word=4))[0]
    nest = lanes((E("t") * 4 + E("u"),), shape=(64,), kind=None, word=4, lanes=4)
    assert port_uses(nest)[0][0].accesses == 1
    # unaligned (t + u): 4 neighbours can straddle two words, the check finds the worst offset
    nest = lanes((E("t") + E("u"),), shape=(64,), kind=None, word=4, lanes=4)
    assert port_uses(nest)[0][0].accesses == 2


def test_block_partition():
    # block of 8 elements per bank: 16 consecutive elements span 2 or 3 banks -> up to 8 per bank
    nest = lanes((E("t") + E("u"),), shape=(64,), kind="block", factor=8)
    assert port_uses(nest)[0][0].accesses == 8
    # strided by the block size: one per bank
    nest = lanes((E("t") + E("u") * 8,), shape=(128,), kind="block", factor=16, lanes=8)
    assert port_uses(nest)[0][0].accesses == 1


def test_more_banks_than_the_memory_has():
    nest = lanes((E("u"),), shape=(64,), banks=8, factor=16)
    assert any("partitioned into 16 banks, its activation memory has 8" in p for p in check(nest))


def test_a_loop_under_a_pipeline_is_unrolled_by_it_but_not_partially():
    x = Buffer("x", (64,), 8, "activation", 16)
    stmt = Stmt(Access("x", (E("u"),)), Call("f", ()))
    nest = LoopNest("n", buffers=(x,), body=(Loop("t", 4, (Loop("u", 16, (stmt,)),)),))
    nest = partition(pipeline(nest, "t"), "x", 1, "cyclic", 16)
    assert check(nest) == []  # Vitis unrolls every loop under a PIPELINE
    assert any("'u' inside pipelined loop 't' is not unrolled" in p for p in check(nest.place("u", Unroll(4))))


def test_reads_and_writes_of_one_memory_add_up():
    x = Buffer("x", (16, 64), 8, "activation", 16, 2, 4)
    z = Buffer("z", (16, 64), 8, "activation", 16, 2, 4)
    stmt = Stmt(Access("z", (E("u"), E("t"))), Call("f", (Access("x", (E("u"), E("t"))),)), accumulate=True)
    nest = LoopNest("n", buffers=(x, z), body=(Loop("t", 64, (Loop("u", 16, (stmt,)),)),))
    nest = partition(partition(pipeline(unroll(nest, "u"), "t"), "x", 1, "cyclic", 16), "z", 1, "cyclic", 16)
    (problem,) = check(nest)  # x read + z read + z write = 3 > 2 ports
    assert "needs 3 accesses per bank" in problem and "(x, z)" in problem
    wide = pipeline(unroll(split(LoopNest("n", buffers=nest.buffers, body=nest.body), "t", 4, "tw", "ti"), "u"), "tw", 4)
    wide = unroll(wide, "ti")
    wide = partition(partition(wide, "x", 1, "cyclic", 16), "z", 1, "cyclic", 16)
    assert check(wide) == []


@pytest.mark.parametrize("coefs, kind, factor, word", [
    ((1, 1), "cyclic", 4, 1), ((3, 2), "cyclic", 4, 2), ((4, 1), None, 0, 4), ((1, 5), "block", 4, 1),
    ((2, 3), "cyclic", 8, 4), ((6, 1), "block", 3, 2), ((5, 7), "complete", 0, 1),
])
def test_the_residue_argument_matches_brute_force(coefs, kind, factor, word):
    """worst_bank_words over offset residues equals the worst case over every outer iteration."""
    a, b = coefs
    shape = (a * 40 + b * 6 + 1,)
    buffer = Buffer("x", shape, 8, "activation", 64, 2, word)
    nest = LoopNest("n", buffers=(buffer,))
    if kind:
        nest = partition(nest, "x", 1, kind, factor or 1)
    parts = partitions(nest, buffer)
    access = Access("x", (E("t") * a + E("u") * b,))
    claimed = worst_bank_words(access, buffer, parts, {"u": 6})
    from hlsgen.loopir.legality import _locate
    worst = 0
    for t in range(40):
        per_bank = {}
        for u in range(6):
            bank, w = _locate([a * t + b * u], buffer, parts)
            per_bank.setdefault(bank, set()).add(w)
        worst = max(worst, max(len(v) for v in per_bank.values()))
    assert claimed == worst
