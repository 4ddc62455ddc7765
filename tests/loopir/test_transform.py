"""Transformations keep the iteration space and place the directives the HLS generator reads."""
import pytest

from hlsgen.loopir import (Access, Call, Dataflow, E, Loop, LoopNest, Partition, Pipeline, Stmt, Stream, Unroll,
                           Buffer, dataflow, localize, partition, pipeline, reorder, split, stream, tile, unroll)
from tests.loopir.helpers import instances


def matmul(P=10, M=6, K=7) -> LoopNest:
    """for p, m, k: acc[p][m] += x[p][k] * w[k][m]"""
    mac = Stmt(Access("acc", (E("p"), E("m"))),
               Call("*", (Access("x", (E("p"), E("k"))), Access("w", (E("k"), E("m"))))), accumulate=True)
    buffers = (Buffer("acc", (P, M), 32, "accumulator", 4), Buffer("x", (P, K), 8, "activation", 4),
               Buffer("w", (K, M), 8, "register"))
    return LoopNest("mm", body=(Loop("p", P, (Loop("m", M, (Loop("k", K, (mac,)),)),)),), buffers=buffers)


def test_expr_arithmetic():
    e = E("a") * 4 + E("b") + 3
    assert str(e) == "4*a + b + 3"
    assert e.substitute("a", E("x") * 2 + 1).evaluate({"x": 2, "b": 1}) == 4 * 5 + 1 + 3
    assert e.keep(("b",)) == E("b")
    assert str(E(0)) == "0" and str(E("a") + (-1)) == "a - 1"


@pytest.mark.parametrize("factor", [1, 2, 3, 5, 10, 16])
def test_split_keeps_the_iteration_space(factor):
    nest = matmul()
    after = split(nest, "p", factor, "po", "pi")
    assert instances(after) == instances(nest)
    outer = after.loop("po")
    assert outer.extent == -(-10 // factor) and outer.body[0].extent == min(factor, 10)
    assert bool(outer.body[0].guards) == (10 % min(factor, 10) != 0)


def test_tile_and_reorder_keep_the_iteration_space():
    nest = matmul()
    tiled = tile(nest, {"p": 4, "m": 4, "k": 3}, {"p": ("pt", "pp"), "m": ("mt", "mm"), "k": ("kt", "kk")})
    assert [l.name for l in tiled.loops()] == ["pt", "mt", "kt", "pp", "mm", "kk"]
    assert instances(tiled) == instances(nest)
    again = reorder(tiled, ["kk", "pp", "mm"])
    assert [l.name for l in again.loops()] == ["pt", "mt", "kt", "kk", "pp", "mm"]
    assert instances(again) == instances(nest)


def test_reorder_needs_a_perfect_chain():
    nest = matmul()
    side = Stmt(Access("acc", (E("p"), E(0))), Access("x", (E("p"), E(0))))
    nest = LoopNest("n", body=(Loop("p", 3, (side, Loop("m", 2, ())),),), buffers=nest.buffers)
    with pytest.raises(ValueError, match="perfectly nested"):
        reorder(nest, ["m", "p"])
    with pytest.raises(ValueError, match="no loop"):
        split(nest, "q", 2)


def test_unroll_complete_and_partial():
    nest = unroll(matmul(), "k")
    assert nest.directives_on("k") == [Unroll()]
    partial = unroll(matmul(), "m", 4)
    assert [l.name for l in partial.loops()] == ["p", "m_o", "m_u", "k"]
    assert partial.directives_on("m_u") == [Unroll()]
    assert instances(partial) == instances(matmul())


def test_directives_name_what_they_apply_to():
    nest = matmul()
    nest = pipeline(unroll(nest, "k"), "m", 2)
    nest = partition(nest, "x", 2, "cyclic", 4)
    nest = dataflow(stream(nest, "w", 3))
    assert nest.directives() == [("k", Unroll()), ("m", Pipeline(2)), ("x", Partition("x", 2, "cyclic", 4)),
                                 ("w", Stream(3)), ("mm", Dataflow())]
    with pytest.raises(ValueError):
        partition(nest, "x", 3, "cyclic", 2)
    with pytest.raises(ValueError):
        Partition("x", 1, "diagonal", 2)
    with pytest.raises(ValueError):
        Partition("x", 1, "cyclic", 0)
    with pytest.raises(KeyError):
        pipeline(nest, "nope")


def test_localize_shrinks_a_buffer_to_its_tile():
    nest = tile(matmul(), {"p": 5, "m": 3}, {"p": ("pt", "pp"), "m": ("mt", "mm")})
    nest = localize(nest, "acc", ("pp", "mm"))
    assert nest.buffer("acc").shape == (5, 3)
    stmt = nest.loop("k").body[0]
    assert str(stmt) == "acc[pp][mm] += x[5*pt + pp][k] * w[k][3*mt + mm]"
