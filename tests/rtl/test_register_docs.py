"""The register map is described once (hlsgen/rtl/control.py): docs/rtl.md's table and the C driver's generated
header say the same offsets and names, and the Verilog's ID is control.py's."""
import re
from pathlib import Path

from hlsgen.rtl import control
from hlsgen.runtime.c_driver import registers_header

ROOT = Path(__file__).resolve().parents[2]


def test_the_docs_table_is_the_map():
    text = (ROOT / "docs" / "rtl.md").read_text()
    table = text[text.index("## AXI4-Lite control"):text.index("## The program in external memory")]
    documented = {}
    for offsets, names in re.findall(r"^\| (0x[0-9A-F]{2}(?:, 0x[0-9A-F]{2})?) \| ([A-Z_, ]+?) \|", table, re.M):
        first, *rest = [n.strip() for n in names.split(",")]  # "WEIGHTS_BASE_LO, _HI": the second word's suffix
        full = [first] + [first.rsplit("_", 1)[0] + suffix for suffix in rest]
        documented |= {name: int(offset, 16) for offset, name in zip(offsets.split(", "), full)}
    assert documented == control.OFFSET


def test_the_c_header_is_the_map():
    header = registers_header()
    defined = {name: int(offset, 16) for name, offset in re.findall(r"#define HG_REG_(\w+)\s+0x([0-9A-F]+)u", header)}
    assert defined == control.OFFSET
    assert f"#define HG_VERSION {control.VERSION}u" in header


def test_the_verilog_id_is_the_map():
    text = (ROOT / "rtl" / "hg_axil_ctrl.v").read_text()
    assert f"MAGIC = 16'h{control.MAGIC:04x}, VERSION = 16'h{control.VERSION:04x}" in text
