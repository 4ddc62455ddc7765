"""The PYNQ driver `hlsgen deploy` writes (DEPLOY/pynq/hlsgen_pynq.py, on hlsgen.runtime's `pynq` backend), run
unmodified against the Verilated RTL: a stand-in for pynq's `Overlay`, `MMIO` and `allocate` binds their calls to
the harness of DEPLOY's own Verilog (MMIO reads and writes to its AXI4-Lite master, a buffer's flush and
invalidate to copies into and out of its memory, 1 us of simulated time per register read, as the CPU's poll
loop takes). The outputs equal the integer reference's, and the register writes follow the driver's sequence."""
import importlib.util
import sys
import types

import numpy as np
import pytest

from hlsgen.cli import main
from hlsgen.rtl.control import LOAD, OFFSET, START
from hlsgen.runtime.harness import HarnessDevice, build_harness
from tests.runtime.test_harness import CALIB, EXAMPLE

pytestmark = pytest.mark.rtl
TEST = EXAMPLE.parent / "test.npz"
CONTROL_AT = 0x43C00000  # where the pynq-z2 block design maps the registers
BUFFER_AT = 0x00100000  # the stand-in's contiguous buffer, in the harness's memory


def standin_pynq(harness: HarnessDevice, top: str, writes: list) -> types.ModuleType:
    """pynq's three classes, bound to `harness`."""
    pynq = types.ModuleType("pynq")

    class Overlay:
        def __init__(self, bitfile):
            self.bitfile = bitfile
            self.ip_dict = {f"{top}_0": {"phys_addr": CONTROL_AT, "addr_range": 0x10000,
                                         "type": f"hlsgen:hlsgen:{top}:1.0"}}

    class MMIO:
        def __init__(self, base, length):
            assert base == CONTROL_AT and length >= 0x40

        def read(self, offset):
            harness.wait(1)
            return harness.read(offset)

        def write(self, offset, value):
            writes.append((offset, value))
            harness.write(offset, value)

    class Buffer(np.ndarray):
        physical_address = BUFFER_AT

        def flush(self):
            harness.copy_to(BUFFER_AT, self.tobytes())

        def invalidate(self):
            self[:] = np.frombuffer(harness.copy_from(BUFFER_AT, self.nbytes), self.dtype)

        def freebuffer(self):
            pass

    def allocate(shape, dtype):
        return np.zeros(shape, dtype).view(Buffer)

    pynq.Overlay, pynq.MMIO, pynq.allocate = Overlay, MMIO, allocate
    return pynq


def test_the_pynq_driver_runs_bit_exact_against_the_rtl(tmp_path, monkeypatch):
    build, deploy = tmp_path / "build", tmp_path / "deploy"
    assert main(["build", str(EXAMPLE), "--calib", str(CALIB), "--target", "systolic8x8", "--program", "external",
                 "-o", str(build), "-q"]) == 0
    assert main(["deploy", str(build), "--board", "pynq-z2", "-o", str(deploy)]) == 0
    (deploy / "hlsgen_systolic8x8.bit").write_bytes(b"")  # what vivado/build.tcl would leave there
    top = "overlay_systolic8x8_top"
    writes = []
    with HarnessDevice(build_harness(deploy / "rtl", top), read_latency=60, mhz=150) as harness:
        monkeypatch.setitem(sys.modules, "pynq", standin_pynq(harness, top, writes))
        spec = importlib.util.spec_from_file_location("hlsgen_pynq", deploy / "pynq" / "hlsgen_pynq.py")
        driver = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(driver)
        x = tmp_path / "x.npz"
        np.savez(x, image=np.load(TEST)["image"][:4])
        assert driver.main(["--inputs", str(x), "-o", str(tmp_path / "board.npz")]) == 0
    assert main(["run", str(build), "--inputs", str(x), "-o", str(tmp_path / "ref.npz")]) == 0
    assert np.array_equal(np.load(tmp_path / "board.npz")["logits"], np.load(tmp_path / "ref.npz")["logits"])
    controls = [value for offset, value in writes if offset == OFFSET["CONTROL"]]
    assert controls == [LOAD] + [START] * 4, "one load, then a start per image"
    assert writes.index((OFFSET["IO"], 3)) < writes.index((OFFSET["CONTROL"], LOAD))
