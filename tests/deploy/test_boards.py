"""The boards table against the shipped targets, and the top's interfaces as the block design reads them."""
from __future__ import annotations

from pathlib import Path

import pytest

from hlsgen.deploy.boards import BOARDS, board, same_device
from hlsgen.deploy.ports import Port, interfaces
from hlsgen.errors import PathError, TargetError
from hlsgen.hw import load_target


@pytest.mark.parametrize("b", BOARDS, ids=lambda b: b.name)
def test_each_board_names_a_shipped_target_for_its_part(b):
    target = load_target(b.target)
    assert same_device(target.device.part, b.part)
    assert b.pl_clock_mhz == target.clock_mhz
    assert b.board_part.split(":")[2] == "part0"
    assert board(b.name) is b


def test_parts_compare_up_to_the_temperature_grade():
    assert same_device("xczu3eg-sbva484-1-e", "xczu3eg-sbva484-1-i")
    assert not same_device("xczu3eg-sbva484-1-e", "xczu3eg-sbva484-2-e")
    assert not same_device("xc7z020clg400-1", "xc7z020clg400-2")
    assert same_device("XC7Z020CLG400-1", "xc7z020clg400-1")


def test_an_unknown_board_names_the_supported_ones():
    with pytest.raises(TargetError, match="did you mean 'zcu102'.*pynq-z2, ultra96-v2, zcu102"):
        board("zcu-102")


def _axi(prefix: str, signals: str, direction: str = "output") -> list[Port]:
    return [Port(f"{prefix}_{s}", direction, 32 if s.endswith(("data", "addr")) else 1) for s in signals.split()]


def test_interfaces_order_the_masters_and_tie_the_streams():
    ports = [Port("clk", "input", 1), Port("rst", "input", 1), Port("irq", "output", 1),
             *_axi("s_axi_ctrl", "awaddr awvalid wdata rdata", "input"), *_axi("m_axi_io", "araddr arlen rdata"),
             *_axi("m_axi", "araddr arlen rdata"), *_axi("m_axi_fmap", "awaddr wdata araddr rdata"),
             Port("s_axis_tdata", "input", 8), Port("s_axis_tvalid", "input", 1), Port("m_axis_tready", "input", 1),
             Port("m_axis_tdata", "output", 8), Port("phase", "output", 2)]
    found = interfaces(tuple(ports), "top", Path("top.v"))
    assert found.masters == ("m_axi", "m_axi_fmap", "m_axi_io") and found.has_io_master
    assert found.streams == ("m_axis", "s_axis")
    assert set(found.ties) == {("s_axis_tdata", 8, 0), ("s_axis_tvalid", 1, 0), ("m_axis_tready", 1, 1)}


def test_a_top_without_the_control_port_is_refused():
    ports = (Port("clk", "input", 1), Port("rst", "input", 1), *_axi("m_axi", "araddr rdata"))
    with pytest.raises(PathError, match="irq, s_axi_ctrl_"):
        interfaces(ports, "top", Path("top.v"))
