"""The Verilator harness (hlsgen.runtime.harness) on the target's top of systolic8x8, built from the example with
--program external: ID and SHAPE read back through its AXI4-Lite master; program.bin and weights.bin copied into
its memory load through its AXI4 read slave (CONTROL.load, irq, DONE, CYCLES); two images run through memory
(IO: the input read from INPUT_BASE and the outputs written to OUTPUT_BASE over m_axi_io), bit-exact against the
integer reference with nothing left on m_axis, then one with its outputs on m_axis (which the harness keeps); and
the harness's errors (an access outside its memory, a register that does not exist) arrive as one HarnessError
naming the port or register, not as a hang."""
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from hlsgen.build_folder import load_build
from hlsgen.cli import main
from hlsgen.rtl.control import DONE, IO_INPUT, IO_OUTPUT, LOAD, OFFSET, START, ident, shape
from hlsgen.rtl.sim import build_target
from hlsgen.runtime.harness import HarnessDevice, HarnessError, build_harness

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "digits" / "digits.onnx"
CALIB = ROOT / "examples" / "digits" / "calib.npz"
PAGE = 0x1000
MIB = 1 << 20
# Where the images go in the harness's memory: pages apart, and far apart enough for any model of this test.
PROGRAM_AT, WEIGHTS_AT, FMAP_AT, INPUT_AT, OUTPUT_AT = PAGE, 1 * MIB, 4 * MIB, 12 * MIB, 13 * MIB


@pytest.fixture(scope="module")
def digits(tmp_path_factory):
    """The example's build folder (--program external), its harness cached with the other Verilator builds
    (sim_build/harness, unless HLSGEN_CACHE says otherwise)."""
    out = tmp_path_factory.mktemp("harness") / "build"
    assert main(["build", str(EXAMPLE), "--calib", str(CALIB), "--target", "systolic8x8", "--program", "external",
                 "-o", str(out), "-q"]) == 0
    with pytest.MonkeyPatch.context() as patch:
        if not os.environ.get("HLSGEN_CACHE"):
            patch.setenv("HLSGEN_CACHE", os.environ.get("HLSGEN_SIM_BUILD", str(ROOT / "sim_build")))
        top = json.loads((out / "report.json").read_text())["designs"]["rtl"]["top"]
        build_harness(out / "rtl", top)
        yield out


def device(out: Path, **options) -> HarnessDevice:
    """The build's harness with its target's read latency and clock (HarnessDevice.for_build: a cache hit)."""
    return HarnessDevice.for_build(out, mem_bytes=16 * MIB, **options)


def set_base(dev: HarnessDevice, name: str, addr: int) -> None:
    dev.write(OFFSET[f"{name}_LO"], addr & 0xFFFFFFFF)
    dev.write(OFFSET[f"{name}_HI"], addr >> 32)


def command(dev: HarnessDevice, bit: int, us: int = 10_000) -> int:
    """Write CONTROL `bit`, wait for irq (at most `us` simulated microseconds), check DONE: CYCLES."""
    dev.write(OFFSET["CONTROL"], bit)
    for _ in range(us // 100):
        if dev.wait(100):
            break
    else:
        pytest.fail(f"no irq within {us} us after CONTROL {bit:#x}")
    assert dev.read(OFFSET["CONTROL"]) & DONE
    return dev.read(OFFSET["CYCLES"])


def expected_outputs(out: Path, images: int) -> tuple[np.ndarray, np.ndarray]:
    """The stored test vectors' first `images` inputs and the integer reference's outputs, one byte per element
    (graph-output, then [channel][row][col] order, per image)."""
    quantized = load_build(out)
    graph = quantized.graph
    feeds = {k: v[:images] for k, v in np.load(out / "verify" / "int_inputs.npz").items()}
    x = np.asarray(feeds[graph.inputs[0]], np.int64).reshape(images, -1)
    reference = quantized.run_int(feeds)
    y = np.concatenate([np.asarray(reference[t], np.int64).reshape(images, -1) for t in graph.outputs], axis=1)
    return (x & 0xFF).astype(np.uint8), (y & 0xFF).astype(np.uint8)


@pytest.mark.rtl
def test_the_harness_loads_the_program_and_runs_images_through_memory(digits):
    out = digits
    program, weights = (out / "rtl" / "program.bin").read_bytes(), (out / "rtl" / "weights.bin").read_bytes()
    assert PROGRAM_AT + len(program) <= WEIGHTS_AT and WEIGHTS_AT + len(weights) <= FMAP_AT
    target = build_target(out)
    with device(out) as dev:
        assert dev.read(OFFSET["ID"]) == ident()
        assert dev.read(OFFSET["SHAPE"]) == shape(target.array.rows, target.array.cols)
        dev.copy_to(PROGRAM_AT, program)
        dev.copy_to(WEIGHTS_AT, weights)
        assert dev.copy_from(PROGRAM_AT, len(program)) == program
        for name, at in (("PROGRAM_BASE", PROGRAM_AT), ("WEIGHTS_BASE", WEIGHTS_AT), ("FMAP_BASE", FMAP_AT),
                         ("INPUT_BASE", INPUT_AT), ("OUTPUT_BASE", OUTPUT_AT)):
            set_base(dev, name, at)
        dev.write(OFFSET["IRQ_ENABLE"], 1)
        before = dev.cycles()
        load_cycles = command(dev, LOAD)
        # every entry is a burst behind the read latency: the load reads the whole image through the AXI4 slave
        assert load_cycles > len(program) // 8 + target.external_memory.read_latency
        assert dev.cycles() - before >= load_cycles

        dev.write(OFFSET["IO"], IO_INPUT | IO_OUTPUT)
        assert dev.read(OFFSET["IO"]) == IO_INPUT | IO_OUTPUT
        inputs, outputs = expected_outputs(out, images=2)
        for x, y in zip(inputs, outputs):
            dev.copy_to(OUTPUT_AT, bytes(len(y)))
            dev.copy_to(INPUT_AT, x.tobytes())
            cycles = command(dev, START)
            assert cycles > 1000
            assert dev.copy_from(OUTPUT_AT, len(y)) == y.tobytes()
        assert dev.stream() == b"", "outputs written to memory also left on m_axis"
        dev.write(OFFSET["IO"], IO_INPUT)  # the outputs on m_axis instead: the harness keeps them
        command(dev, START)
        assert dev.stream() == outputs[-1].tobytes()


@pytest.mark.rtl
def test_the_harness_names_a_bad_access_and_stops(digits):
    out = digits
    with device(out) as dev:  # the program image past the end of the memory
        set_base(dev, "PROGRAM_BASE", 32 * MIB)
        dev.write(OFFSET["CONTROL"], LOAD)
        with pytest.raises(HarnessError, match=r"m_axi: read burst at 0x2000000 .* outside the memory"):
            dev.wait(1000)
        with pytest.raises(HarnessError, match="exited"):  # and stays stopped
            dev.cycles()
    with device(out) as dev:
        with pytest.raises(HarnessError, match="register offset 0x40"):
            dev.read(0x40)
    with device(out) as dev:
        with pytest.raises(ValueError, match="outside the harness's memory"):  # checked before it is sent
            dev.copy_from(16 * MIB - 4, 8)
        assert dev.cycles() == 0
        exe = dev.executable
    for request in (b"D2C 1048572 8\n", b"C2D 1048572 8\n01234567"):  # the harness checks it too
        done = subprocess.run([str(exe), "--mem-bytes", "1M", "serve"], input=request, capture_output=True,
                              timeout=60)
        assert done.returncode == 1 and done.stdout.startswith(b"error: ") and b"outside the memory" in done.stdout
