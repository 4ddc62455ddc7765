"""One overlay, many models: build folders made with `--program external` for one target hold byte-identical
Verilog, so one Verilator build of the overlay's top runs them all in one simulation (docs/rtl.md, "The program
in external memory"). `run_models` checks the Verilog is the same, builds once, and runs the cocotb test below:
a host (cocotbext-axi's AxiLiteMaster) loads model after model into the same design (PROGRAM_BASE and
WEIGHTS_BASE at that model's images in one AXI RAM, CONTROL.load, irq) and runs its images (START, the input on
s_axis or written into the feature-map RAM, irq), taking every output from m_axis; bit-exact against the
integer reference. Cycles are counted from the write of CONTROL.load or .start to irq. Both memories send R
beats at the target's sustained bytes per cycle (random pauses besides with `backpressure`), but answer a
request after the AXI RAM's own 2 cycles, not the target's read_latency (the stream testbench, `hlsgen sim`,
delays every request by the rest): these cycles are the design's with a fast memory, not the model's.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..build_folder import load_build
from ..errors import MismatchError, ToolError
from ..hw.program_io import read_program
from .cocotb_model import dram_pauses
from .control import DONE, LOAD, OFFSET, START
from .fmap_dma import image_bytes, input_words
from .program import compile_program
from .runner import Design, build, run
from .sim import build_target

JOB_VAR = "HLSGEN_OVERLAY_JOB"
PAGE = 0x1000
PERIOD_NS = 10


@dataclass(frozen=True)
class ModelRun:
    folder: Path
    program_bytes: int
    weight_bytes: int
    load_cycles: int
    cycles: tuple[int, ...]  # per image: START written to irq
    model_cycles: int  # the performance model's, per inference
    compared: int  # output integers
    mismatches: int


def run_models(folders: list[Path], work: Path, images: int = 1,
               backpressure: bool = False) -> tuple[float, list[ModelRun]]:
    """Run `images` stored test vectors of every build folder on one Verilator build; (build seconds, runs)."""
    work = Path(work)
    sources = [sorted((Path(f) / "rtl").glob("*.v")) for f in folders]
    for other, folder in zip(sources[1:], folders[1:]):
        if [p.name for p in other] != [p.name for p in sources[0]] or any(
                a.read_bytes() != b.read_bytes() for a, b in zip(sources[0], other)):
            raise MismatchError(f"{folder}: its Verilog differs from {folders[0]}'s (built for another target, or "
                                "without --program external?)")
    top = next(p.stem for p in sources[0] if p.stem.startswith("overlay_") and not p.stem.endswith("_tb"))
    jobs, expected = [], []
    for folder in folders:
        job, want = _job(Path(folder), images)
        jobs.append(job)
        expected.append(want)
    (work / "job.json").parent.mkdir(parents=True, exist_ok=True)
    memory = build_target(Path(folders[0])).external_memory
    (work / "job.json").write_text(json.dumps({"models": jobs, "backpressure": backpressure,
                                               "rate": memory.bytes_per_cycle}))
    design = Design(top, [p for p in sources[0] if not p.stem.endswith("_tb")], work / "build", {})
    try:
        seconds = build(design, log_file=work / "build.log")
        tests, failed = run(design, "hlsgen.rtl.overlay_sim", work, {JOB_VAR: str((work / "job.json").resolve())},
                            log_file=work / "run.log")
    except (SystemExit, RuntimeError) as exc:
        raise ToolError(f"the Verilator build or simulation failed ({exc}); see {work}/build.log, run.log") from None
    if tests == 0 or failed:
        raise MismatchError(f"the overlay simulation did not finish (see {work}/run.log)")
    results = json.loads((work / "results.json").read_text())
    runs = []
    for folder, job, want, got in zip(folders, jobs, expected, results):
        flat = [v for image in got["outputs"] for v in image]
        runs.append(ModelRun(Path(folder), Path(job["program"]).stat().st_size, Path(job["weights"]).stat().st_size,
                             got["load_cycles"], tuple(got["cycles"]), job["model_cycles"], len(want),
                             sum(a != b for a, b in zip(flat, want)) + abs(len(flat) - len(want))))
    return seconds, runs


def _job(folder: Path, images: int) -> tuple[dict, list[int]]:
    quantized = load_build(folder)
    graph, target = quantized.graph, build_target(folder)
    mapping = read_program(folder, graph, target)
    program = compile_program(mapping, graph)
    if program.overlay is None:
        raise MismatchError(f"{folder} was not built with --program external")
    int_inputs = {k: v[:images] for k, v in np.load(folder / "verify" / "int_inputs.npz").items()}
    bits = target.widths.operand_bits
    x = np.asarray(int_inputs[graph.inputs[0]], np.int64)
    reference = quantized.run_int(int_inputs)  # the outputs one after another per image, as the stream sends them
    out = (np.concatenate([np.asarray(reference[t], np.int64).reshape(len(x), -1) for t in graph.outputs], axis=1)
           & ((1 << bits) - 1)).reshape(-1)
    job = {"program": str(folder / "rtl" / "program.bin"), "weights": str(folder / "rtl" / "weights.bin"),
           "images": len(x), "out_per_image": int(out.size) // len(x), "model_cycles": mapping.cycles,
           "fmap_bytes": image_bytes(program), "in_dram": program.input_in_dram}
    if program.input_in_dram:
        offset, words = input_words(program, x)
        job |= {"in_offset": offset, "in_words": words.hex()}
    else:
        job["stream"] = (x.reshape(len(x), -1) & ((1 << bits) - 1)).tolist()
    return job, out.tolist()


# ---- inside the simulator ----------------------------------------------------------------------------

def _test():
    import cocotb
    from cocotb.clock import Clock
    from cocotb.triggers import ClockCycles, RisingEdge

    @cocotb.test()
    async def models_one_after_another(dut):
        from cocotbext.axi import (AxiBus, AxiLiteBus, AxiLiteMaster, AxiRam, AxiRamRead, AxiReadBus,
                                   AxiStreamBus, AxiStreamSink, AxiStreamSource)

        job = json.loads(Path(os.environ[JOB_VAR]).read_text())
        models = job["models"]
        cocotb.start_soon(Clock(dut.clk, PERIOD_NS, unit="ns").start())
        cycle = [0]

        async def count():
            while True:
                await RisingEdge(dut.clk)
                cycle[0] += 1

        cocotb.start_soon(count())
        # every model's program and weights in one memory, each image on a page of its own
        at, placed = PAGE, []
        for m in models:
            program, weights = Path(m["program"]).read_bytes(), Path(m["weights"]).read_bytes()
            placed.append((at, at + -(-len(program) // PAGE) * PAGE, program, weights))
            at = placed[-1][1] + -(-len(weights) // PAGE) * PAGE
        ram = AxiRamRead(AxiReadBus.from_prefix(dut, "m_axi"), dut.clk, size=at)
        for p_at, w_at, program, weights in placed:
            ram.write(p_at, program)
            ram.write(w_at, weights)
        beat = len(dut.m_axi_rdata) // 8
        fmap = AxiRam(AxiBus.from_prefix(dut, "m_axi_fmap"), dut.clk,
                      size=max(PAGE, -(-max(m["fmap_bytes"] for m in models) // PAGE) * PAGE))
        ram.r_channel.set_pause_generator(dram_pauses(beat, job["rate"], job["backpressure"], seed=1))
        fmap.read_if.r_channel.set_pause_generator(dram_pauses(beat, job["rate"], job["backpressure"], seed=2))
        fmap.write_if.w_channel.set_pause_generator(dram_pauses(beat, job["rate"], job["backpressure"], seed=3))
        source = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.clk, dut.rst)
        sink = AxiStreamSink(AxiStreamBus.from_prefix(dut, "m_axis"), dut.clk, dut.rst)
        axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axi_ctrl"), dut.clk)
        dut.rst.value = 1
        await ClockCycles(dut.clk, 4)
        dut.rst.value = 0
        await axil.write(OFFSET["IRQ_ENABLE"], b"\x01")

        async def command(bit: int) -> int:
            begin = cycle[0]
            await axil.write(OFFSET["CONTROL"], bit.to_bytes(4, "little"))
            if not int(dut.irq.value):
                await RisingEdge(dut.irq)
            status = int.from_bytes((await axil.read(OFFSET["CONTROL"], 4)).data, "little")
            assert status & DONE, f"irq without DONE (CONTROL {status:#x})"
            return cycle[0] - begin

        results = []
        for m, (p_at, w_at, _, _) in zip(models, placed):
            for name, base in (("PROGRAM_BASE", p_at), ("WEIGHTS_BASE", w_at), ("FMAP_BASE", 0)):
                await axil.write(OFFSET[f"{name}_LO"], base.to_bytes(4, "little"))
                await axil.write(OFFSET[f"{name}_HI"], bytes(4))
            got = {"load_cycles": await command(LOAD), "cycles": [], "outputs": []}
            for k in range(m["images"]):
                if m["in_dram"]:
                    words = bytes.fromhex(m["in_words"])
                    per = len(words) // m["images"]
                    fmap.write(m["in_offset"], words[k * per:(k + 1) * per])
                else:
                    await source.send(bytes(m["stream"][k]))
                got["cycles"].append(await command(START))
                frame = await sink.recv()
                assert len(frame.tdata) == m["out_per_image"], f"{len(frame.tdata)} outputs"
                got["outputs"].append(list(frame.tdata))
            results.append(got)
        Path(os.environ[JOB_VAR]).with_name("results.json").write_text(json.dumps(results))

    return models_one_after_another


if os.environ.get(JOB_VAR):  # imported by cocotb inside the simulator
    models_one_after_another = _test()
