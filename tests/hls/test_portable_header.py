"""hlsgen's portable ap_int header against the real Xilinx ap_types headers (hls4ml's wheel) and the
integer model: one C++ program, compiled against each, must print the same integers as numpy."""
from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from hlsgen import __version__
from hlsgen.hls.csim import VENDOR_WARNING_SWITCHES, WARNINGS, vendor_headers
from hlsgen.hls.emit import INCLUDE_DIR
from hlsgen.hls.render import render
from hlsgen.quant.arith import requantize

pytestmark = pytest.mark.csim
RNG = np.random.default_rng(11)
REQUANT_WIDTHS = (18, 24, 40, 62)
CASES = 150
WRAPS = [(2, 3), (3, -5), (8, 300), (8, -129), (9, 511), (17, -70000), (33, 1 << 40), (63, -(1 << 62))]


def requant_cases(width: int):
    """Values that fit `width` bits, shifts whose 2^(s-1) fits too, zero points and clamps."""
    shift = RNG.integers(0, width, CASES)
    value = RNG.integers(-(1 << (width - 2)), 1 << (width - 2), CASES, dtype=np.int64)
    zp = RNG.integers(-128, 128, CASES)
    lo = RNG.integers(-300, 0, CASES)
    hi = RNG.integers(0, 300, CASES)
    return value, shift, zp, lo, hi


def program() -> tuple[str, list[int]]:
    """A C++ program printing one integer per line, and the integers numpy's model expects for its
    requantizer cases (the other lines: ap_int construction, arithmetic and shifts)."""
    body, expected = [], []
    for width in REQUANT_WIDTHS:
        v, s, zp, lo, hi = requant_cases(width)
        for row in zip(v, s, zp, lo, hi):
            body.append("    std::printf(\"%lld\\n\", hlsgen_requant<{w}, ap_int<16> >(ap_int<{w}>({}LL), {}, {}, {}, {}).to_int64());"
                        .format(*map(int, row), w=width))
        expected += requantize(v, 1, s, zp, lo, hi).tolist()
    for w, value in WRAPS:
        body.append(f"    std::printf(\"%lld\\n\", ap_int<{w}>({value}LL).to_int64());")
        body.append(f"    std::printf(\"%lld\\n\", ap_uint<{w}>({value}LL).to_int64());")
    body += [
        "    ap_uint<8> a = 200; ap_int<9> b = -255; ap_int<17> p = a * b; std::printf(\"%lld\\n\", p.to_int64());",
        "    ap_int<20> acc = 1000; acc += b * ap_int<8>(-128); std::printf(\"%lld\\n\", acc.to_int64());",
        "    ap_int<12> c = a; c -= 7; std::printf(\"%lld\\n\", c.to_int64());",
        "    std::printf(\"%d %d %d\\n\", a > b, b < -254, ap_uint<4>(15) == ap_int<5>(15));",
        "    ap_int<40> s = ap_int<40>(1) << 37; std::printf(\"%lld\\n\", s.to_int64());",
        "    ap_int<40> r = ap_int<40>(-1000001) >> 3; std::printf(\"%lld\\n\", r.to_int64());",
        "    int8_t table[4] = {-3, 5, 7, 9}; ap_uint<2> i = 6; std::printf(\"%d\\n\", table[i.to_int()]);",
    ]
    source = "#include <cstdio>\n#include \"hlsgen_ops.h\"\n\nint main() {\n" + "\n".join(body) + "\n    return 0;\n}\n"
    return source, expected


def wrap(value: int, width: int, signed: bool) -> int:
    """The low `width` bits of `value`, read as two's complement (signed) or unsigned."""
    bits = value % (1 << width)
    return bits - (1 << width) if signed and bits >> (width - 1) else bits


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("portable")
    (folder / "hlsgen_ops.h").write_text(render("hlsgen_ops.h.j2", version=__version__))
    source, expected = program()
    (folder / "check.cpp").write_text(source)

    def run(flags: list[str]) -> list[str]:
        binary = folder / f"check{len(flags)}"
        subprocess.run(["g++", "-std=c++14", "-O2", *WARNINGS, *flags, "-I", str(folder), str(folder / "check.cpp"),
                        "-o", str(binary)], check=True, capture_output=True, text=True)
        return subprocess.run([str(binary)], check=True, capture_output=True, text=True).stdout.splitlines()

    portable = run(["-DHLSGEN_PORTABLE", "-I", str(INCLUDE_DIR)])
    vendor = None
    if vendor_headers() is not None:
        vendor = run(["-isystem", str(vendor_headers()), *VENDOR_WARNING_SWITCHES])
    return portable, vendor, expected


def test_portable_requantizer_equals_the_integer_model(outputs):
    portable, _, expected = outputs
    assert [int(v) for v in portable[: len(expected)]] == expected


def test_portable_header_equals_the_vendor_headers(outputs):
    portable, vendor, _ = outputs
    if vendor is None:
        pytest.fail("hls4ml (a dependency carrying the vendor ap_types headers) is not installed: pip install .")
    assert portable == vendor


def test_portable_types_wrap_like_two_complement(outputs):
    portable, _, expected = outputs
    wraps = [int(v) for v in portable[len(expected): len(expected) + 2 * len(WRAPS)]]
    assert wraps == [wrap(v, w, signed) for w, v in WRAPS for signed in (True, False)]
    assert portable[len(expected) + 2 * len(WRAPS):] == ["-51000", "33640", "193", "1 1 1", str(1 << 37), str(-1000001 >> 3), "7"]


def test_vendor_headers_come_from_the_installed_wheel_not_this_repository():
    repo = INCLUDE_DIR.parents[2]
    tracked = subprocess.run(["git", "ls-files"], cwd=repo, capture_output=True, text=True).stdout.split()
    vendor_names = ("ap_int.h", "ap_int_base.h", "ap_private.h", "hls_stream.h")
    assert not [path for path in tracked if Path(path).name in vendor_names]
    folder = vendor_headers()
    assert folder is not None, "hls4ml (a dependency: it carries the vendor ap_types headers) is not installed"
    assert "site-packages" in folder.parts  # from the installed wheel, wherever the virtual environment lives
    assert "Licensed under the Apache License, Version 2.0" in (folder / "ap_int.h").read_text()
