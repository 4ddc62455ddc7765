"""Write OUT/hls/ as the overlay: the target's accelerator (one R x C array, one vector unit, the writer,
the activation and weight memories, the DMA unit of feature maps in external memory) as hand-written C++
units, plus this model's layer program and ROMs, plus the top function, the self-checking testbench and its
data, run_hls.tcl, a README and the portable headers. Also what the report needs to say about it (MACs per
cycle, DSP / BRAM estimate, ROM bits, external memory traffic)."""
from __future__ import annotations

import math
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ... import __version__
from ...ir import Graph, InputFold
from ..cnames import Names
from ..nest import CNames, buffer_pragmas
from ..ports import Port, make_port
from ..tbdata import EXPECTED_FILE, INPUT_FILE, write_test_data
from ..render import render
from .cycles import fetched_words, inference_cycles, moved_words, row_cycles
from .units import bodies, dump, memories, prove, unit_nests
from .program import DMA, PLACE_FIELDS, ROW_FIELDS, SEGMENT_FIELDS, OverlayProgram, build_program
from .roms import bram18

INCLUDE_DIR = Path(__file__).resolve().parent.parent / "include"
PORTABLE_HEADERS = ("hlsgen_ap_int.h", "hlsgen_stream.h")
WEIGHT_IMAGE = "weights.bin"  # the weights in external memory, as the host loads them
WORDS_PER_LINE = 4
MAX_BURST = 256  # beats of an AXI4 burst
UNIT = [name for name, _ in ROW_FIELDS].index("unit")
REQUANT_DSP = 2  # a 32 x 17-bit product takes two DSP48 slices
LUTRAM_BITS = 1024  # smaller memories go to LUT RAM, not block RAM


class BankConflictError(Exception):
    """Units whose pipelined loops cannot reach II = 1: a bug in hlsgen, never a user error."""


@dataclass(frozen=True)
class OverlayDesign:
    top: str
    rows: int  # program rows
    macs_per_cycle: int  # R x C, whatever the layer count
    dsp: int  # estimated DSP slices of the C++ design
    bram_18k: int  # estimated 18 Kib block RAMs
    weight_rom_bits: int  # the packed weights (each layer at its own width)
    weight_rom_words: int  # 64-bit words of the ROM, or of weights.bin (with the last word's padding and the spare words)
    cycles: int  # per inference: the pipelined loops' trip counts (cycles.py)
    row_cycles: tuple[int, ...]  # per program row
    weights: str = "rom"  # "rom", or "external": the words are WEIGHT_IMAGE, read through the m_axi port wmem
    dram_bytes: int = 0  # weights read from external memory per inference
    fmap_image_bytes: int = 0  # the feature-map image in external memory (0: every map on chip)
    fmap_bytes: int = 0  # feature-map bytes the dma rows move per inference
    loop_ir: str = ""  # the units' loop nests as text (OUT/loop_ir.txt with --dump-ir)

    def to_json(self) -> dict:
        return {"design": "overlay", "rows": self.rows, "macs_per_cycle": self.macs_per_cycle,
                "dsp": self.dsp, "bram_18k": self.bram_18k, "weight_rom_bits": self.weight_rom_bits,
                "weight_rom_words": self.weight_rom_words, "cycles": self.cycles, "weights": self.weights,
                "weight_bytes": 8 * self.weight_rom_words, "dram_bytes": self.dram_bytes,
                "feature_map_image_bytes": self.fmap_image_bytes, "feature_map_bytes": self.fmap_bytes}


def _packed_input(port, fold: InputFold | None) -> dict:
    """Where the testbench packs an input the program reads from the feature-map image: its words' base, G =
    2^lg, channels, pixels and width, and where they come from in the model's input (`gather`: the host's fold,
    hlsgen.passes.input_fold, or the identity)."""
    _, base, lg, channels, height, width = port.place[:6]
    gather = fold or InputFold.identity(channels, height, width)
    return {"base": base, "lg": lg, "channels": channels, "pixels": height * width, "width": width,
            "gather": gather, "folded": fold is not None}


def write_overlay(out: Path, graph: Graph, mapping, top: str, source: str, int_inputs: dict[str, np.ndarray],
                  int_outputs: dict[str, np.ndarray]) -> OverlayDesign:
    """Render the overlay's sources for integer graph `graph` with its layer program `mapping`
    (hlsgen.hw.map_model) into `out`, with `int_inputs` and the integer reference's `int_outputs` as
    testbench data."""
    target = mapping.target
    program = build_program(graph, mapping)
    external = mapping.weights_external
    names = Names()
    top = names.take(top)
    ports = [make_port(graph, names.take(t), t, names.take(f"{t}_t"), "input") for t in graph.inputs]
    ports += [make_port(graph, names.take(t), t, names.take(f"{t}_t"), "output") for t in graph.outputs]
    config = _config(mapping, program, external)
    nests = unit_nests(config)
    conflicts = prove(nests)  # every pipelined loop's accesses against the partitions, on the loop IR
    if conflicts:
        raise BankConflictError(f"the overlay's units have {len(conflicts)} bank conflict(s) (a bug in hlsgen, "
                                f"please report it): {conflicts[0]}")
    R, C = target.array.rows, target.array.cols
    dram_bytes = 8 * fetched_words(program, R) if external else 0
    out.mkdir(parents=True, exist_ok=True)
    (out / "portable").mkdir(exist_ok=True)
    common = {"version": __version__, "top": top, "source": source, "target": target.name, "external": external}
    image = {"weight_image": WEIGHT_IMAGE, "weight_words": len(program.weight_words),
             "weight_bytes": 8 * len(program.weight_words), "dram_bytes": dram_bytes} if external else {}
    places = {q.tensor: q.place for q in (*program.inputs, *program.outputs)}
    in_dram = {q.tensor: _packed_input(q, mapping.placement(q.tensor).fold) for q in program.dram_inputs}
    port_dicts = [vars(p) | {"place": places.get(p.tensor), "dram": in_dram.get(p.tensor)} for p in ports]
    streamed = [p for p in port_dicts if not p["dram"]]
    fmaps = {"words": mapping.memory.dram_words, "bytes_per_word": R,
             "inputs": [p for p in port_dicts if p["dram"]]} if mapping.memory.dram_words else None
    memories = [m for m in (("const uint64_t* wmem", "dram", external), ("fmap_word_t* fmem", "fmap_image", fmaps))
                if m[2]]  # the top's AXI4 masters: (argument, the testbench's host array)
    signature = ", ".join([f"hls::stream<hls::axis<{p['t']}, 0, 0, 0> >& {p['name']}" for p in streamed]
                          + [arg for arg, _, _ in memories])
    call = ", ".join([p["name"] for p in streamed] + [host for _, host, _ in memories])
    common["fmaps"] = fmaps
    engine_rows = [r for r in program.rows if r.values[UNIT] != DMA]  # the two queues' tables (tokens.py)
    dma_rows = [r for r in program.rows if r.values[UNIT] == DMA]
    files = {
        "hlsgen_ops.h": render("hlsgen_ops.h.j2", **common),
        "overlay_config.h": render("overlay/config.h.j2", **common, c=config, row_fields=ROW_FIELDS,
                                   place_fields=PLACE_FIELDS, segment_fields=SEGMENT_FIELDS),
        "overlay_units.h": render("overlay/units.h.j2", **common, c=config, u=bodies(nests)),
        f"{top}_program.h": render("overlay/program.h.j2", **common, p=program, row_fields=ROW_FIELDS,
                                   place_fields=PLACE_FIELDS, ports=streamed,
                                   weight_lines=[] if external else _hex_lines(program),
                                   cols=target.array.cols, segment_fields=SEGMENT_FIELDS,
                                   engine_rows=engine_rows, dma_rows=dma_rows,
                                   tokens=program.tokens,
                                   names=[_c_string(r.name) for r in engine_rows],
                                   tensors=[_c_string(r.output) for r in engine_rows]),
        f"{top}.h": render("overlay/top.h.j2", **common, guard=f"HLSGEN_{top.upper()}_H", ports=streamed,
                           signature=signature),
        f"{top}.cpp": render("overlay/top.cpp.j2", **common, ports=streamed, signature=signature,
                             tail=program.head < len(engine_rows),
                             top_pragmas=top_pragmas([p for p in ports if p.tensor not in in_dram], program,
                                                     target.external_memory if external else None,
                                                     target.external_memory if fmaps else None, config)),
    }
    for name, text in files.items():
        (out / name).write_text(text)
    samples = write_test_data(out, graph, int_inputs, int_outputs)
    (out / f"{top}_tb.cpp").write_text(render(
        "overlay/testbench.cpp.j2", **common, ports=port_dicts, call=call, images=program.images,
        inputs_per_sample=sum(math.prod(p["dram"]["gather"].image) if p["dram"] else p["count"]
                              for p in port_dicts if p["direction"] == "input"),
        outputs_per_sample=sum(p.count for p in ports if p.direction == "output"),
        input_file=INPUT_FILE, expected_file=EXPECTED_FILE, **image))
    tcl = dict(common, part=target.device.part, clock_mhz=f"{target.clock_mhz:g}",
               period_ns=f"{1000.0 / target.clock_mhz:.3f}", input_file=INPUT_FILE, expected_file=EXPECTED_FILE,
               **image)
    (out / "run_hls.tcl").write_text(render("run_hls.tcl.j2", **tcl))
    (out / "README.md").write_text(render("overlay/README.md.j2", **tcl, ports=port_dicts, samples=samples,
                                          rows=len(program.rows), c=config, images=program.images))
    if external:  # little-endian 64-bit words, as the m_axi port reads them
        (out / WEIGHT_IMAGE).write_bytes(np.array(program.weight_words, dtype="<u8").tobytes())
    shutil.copyfile(INCLUDE_DIR / "hlsgen_axis.h", out / "hlsgen_axis.h")
    if fmaps:  # the two queues' processes (Vitis's own headers under synthesis, threads in C simulation)
        shutil.copyfile(INCLUDE_DIR / "hlsgen_dataflow.h", out / "hlsgen_dataflow.h")
    for name in PORTABLE_HEADERS:
        shutil.copyfile(INCLUDE_DIR / name, out / "portable" / name)
    return OverlayDesign(top, len(program.rows), R * C, R * C + 2 * REQUANT_DSP * C, _bram(config, program),
                         program.weight_bits, len(program.weight_words), inference_cycles(program, R, external),
                         tuple(row_cycles(program, R, external)), "external" if external else "rom", dram_bytes,
                         R * mapping.memory.dram_words, R * moved_words(program),
                         dump(nests, config, f"the overlay's units for {source} on {target.name} ({R} x {C} array, "
                                             f"{C} vector lanes)"))


def overlay_config(graph: Graph, mapping) -> dict:
    """The sizes of the overlay that runs `mapping`'s program (what hlsgen.hls.overlay.units builds from)."""
    return _config(mapping, build_program(graph, mapping), mapping.weights_external)


def top_pragmas(ports: list[Port], program: OverlayProgram, memory=None, fmap_memory=None,
                config: dict | None = None) -> list[str]:
    """The top function's interfaces and the partitioning of the memories it declares or reads (the loop IR's
    `memories`: the activation memory by plane and bank, the depthwise window memory by bank and lane, the
    tap and parameter ROMs by lane, the weight ROM, or the two weight staging buffers, cyclically by the
    words one PE row's load reads at once). With the weights in external memory (`memory`, the target's
    external_memory), an AXI4 master port `wmem` in the ROM's place (its address in the control registers,
    its expected latency the target's). With feature maps in external memory (`fmap_memory`), a second AXI4
    master `fmem` of its own bundle (the feature-map image of config["fmap_words"] words), whose bursts are a
    dma row's channel blocks, and the top becomes the dataflow region of the two queues' processes, the
    memories they share unsynchronized (the tokens order their accesses)."""
    shared = memories(config)
    partitions = [p for b in shared.buffers for p in buffer_pragmas(shared, b.name, CNames())]
    weights = []
    if memory is not None:
        weights = [f"#pragma HLS INTERFACE mode=m_axi port=wmem offset=slave bundle=gmem "
                   f"depth={len(program.weight_words)} latency={memory.read_latency}",
                   "#pragma HLS INTERFACE mode=s_axilite port=wmem bundle=control"]
    if fmap_memory is not None:
        burst = min(MAX_BURST, config["max_dma_words"])
        weights += [f"#pragma HLS INTERFACE mode=m_axi port=fmem offset=slave bundle=fmem depth={config['fmap_words']} "
                    f"latency={fmap_memory.read_latency} max_read_burst_length={burst} "
                    f"max_write_burst_length={burst}",
                    "#pragma HLS INTERFACE mode=s_axilite port=fmem bundle=control",
                    # the two queues' processes share the memories (top.cpp.j2 says why this is legal)
                    "#pragma HLS stream variable=amem type=unsync",
                    "#pragma HLS stream variable=dwmem type=unsync",
                    "#pragma HLS DATAFLOW"]
    return [*(f"#pragma HLS INTERFACE mode=axis port={p.name}" for p in ports),
            "#pragma HLS INTERFACE mode=s_axilite port=return bundle=control", *partitions, *weights]


def _config(mapping, program: OverlayProgram, external: bool = False) -> dict:
    target, memory = mapping.target, mapping.memory
    R, C = target.array.rows, target.array.cols
    fields = [dict(zip((n for n, _ in ROW_FIELDS), r.values)) for r in program.rows]
    ports = [p.count for p in (*program.inputs, *program.outputs)]
    return {"rows": target.array.rows, "cols": target.array.cols, "act_depth": max(memory.plane_depth),
            "dw_copies": max(memory.dw_copies, 1), "dw_depth": memory.dw_depth, "acc_depth": program.acc_depth,
            "pool_tiles": program.pool_tiles, "pool_depth": program.pool_depth, "row_words": program.row_words,
            "act_bits": program.act_bits, "act_min": -(1 << (program.act_bits - 1)),
            "weight_bits": program.weight_max_bits, "acc_bits": target.widths.accumulator_bits,
            "max_spatial_tiles": max([1] + [f["ts"] for f in fields]),
            "max_column_tiles": max([1] + [f["tc"] for f in fields]),
            "max_row_tiles": max([1] + [f["tr"] for f in fields]),
            "max_passes": max([1] + [f["passes"] for f in fields]),
            "max_pixels": max([1] + [f["pixels"] * max(f["kh"] * f["kw"], 1) for f in fields]),
            "max_port": max([1] + ports), "external": external,
            "fmaps": memory.dram_words > 0, "fmap_words": memory.dram_words,
            "max_dma_segments": max([1] + [f["d_segments"] for f in fields]),
            "max_dma_words": max([1] + [f["d_words"] for f in fields]),
            # a PE row's load reads ROW_WORDS words from the one holding its first bit, anywhere in the tile
            "tile_words": (63 + (R - 1) * C * program.weight_max_bits) // 64 + program.row_words,
            "max_copy": max([1] + [s[3] * s[4] * s[5] for s in program.segments]
                            + [f["o_channels"] * f["o_h"] * f["o_w"] for f in fields if f["fill"]])}


def _bram(c: dict, program: OverlayProgram) -> int:
    """18 Kib blocks of the memories Vitis builds from the C++ (each partition its own memory; memories
    under LUTRAM_BITS go to LUT RAM)."""
    def blocks(count: int, depth: int, width: int) -> int:
        return count * (bram18(depth, width) if depth * width > LUTRAM_BITS else 0)

    R, C, act = c["rows"], c["cols"], c["act_bits"]
    rows = program.row_words
    total = blocks(2 * R, c["act_depth"], act)
    if c["dw_depth"] > 1:
        total += blocks(c["dw_copies"] * C, c["dw_depth"], act)
    total += blocks(C, c["acc_depth"], c["acc_bits"])
    if c["external"]:  # the two staging buffers, each split like the ROM
        total += blocks(2 * rows, math.ceil(c["tile_words"] / rows), 64)
    else:
        total += blocks(rows, math.ceil(len(program.weight_words) / rows), 64)
    total += blocks(C, len(program.params), c["acc_bits"] + 3 * 32)
    total += blocks(R, len(program.taps), 4 * 32)
    total += blocks(C, c["pool_depth"], act) + blocks(C, len(program.lut), act)
    return total


def _hex_lines(program: OverlayProgram) -> list[str]:
    words = [f"0x{w:016x}ULL," for w in program.weight_words]
    return [" ".join(words[i:i + WORDS_PER_LINE]) for i in range(0, len(words), WORDS_PER_LINE)]


def _c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
