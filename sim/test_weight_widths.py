"""Per-layer weight widths reach the RTL: the example built with conv1's weights at 8 bits and every other
layer's at 4 (a config's `layers:`) stores each layer at its width in a smaller weight ROM than the 8-bit
build's, and stays bit-exact, in exactly the 8-bit build's cycles (the ROM still delivers a row per cycle)."""
import numpy as np
import pytest

from bench import build_root
from hlsgen.cli import main
from hlsgen.rtl.sim import simulate
from models import model_files

IMAGES = 3
CONFIG = """target: systolic16x16
layers:
  Conv: {weight_bits: 4}
  Dense: {weight_bits: 4}
  conv1: {weight_bits: 8}
"""


def rom_bits(out) -> int:
    lines = (out / "rtl" / "weights.mem").read_text().split()
    return len(lines) * len(lines[0]) * 4


@pytest.mark.rtl
def test_narrower_layers_take_a_smaller_rom_and_stay_bit_exact(build_folder, tmp_path):
    wide, test = build_folder("digits", "systolic16x16")
    model, calib, _ = model_files("digits", tmp_path)
    (tmp_path / "bits.yaml").write_text(CONFIG)
    out = tmp_path / "build"
    assert main(["build", str(model), "--config", str(tmp_path / "bits.yaml"), "--calib", str(calib), "-o", str(out),
                 "-q"]) == 0
    top = next((out / "rtl").glob("*_top.v")).read_text()
    assert ".W_W(8)" in top and "cfg_w_bits <= 4'd4;" in top and "cfg_w_bits <= 4'd8;" in top
    # 16-bit slices: conv1's 16 rows at 8 bits, the 2,400 rows of conv2, fc1 and fc2 at 8 or 4
    assert rom_bits(wide) == (16 + 2400) * 8 * 16 and rom_bits(out) == (16 * 8 + 2400 * 4) * 16
    narrow, full = (simulate(folder, test, IMAGES, build_root()) for folder in (out, wide))
    assert not narrow.mismatches and narrow.compared == IMAGES * 10 and not full.mismatches
    assert narrow.cycles == full.cycles and np.all(np.array(narrow.cycles) == narrow.cycles[0])
