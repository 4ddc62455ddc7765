"""The overlay C++ runs the layer program's two queues as two processes (hlsgen/hls/overlay/tokens.py,
templates/hls/overlay/top.cpp.j2): the engines' rows and the dma rows, each a process of the top's dataflow
region, synchronised by tokens exactly as the rows' waits say. C-simulated on two threads (hlsgen_dataflow.h),
bit-exact on a double-buffered program; the tokens balance; the C++ design's cycles are the two-queue
schedule of its own rows."""
from __future__ import annotations

import random
import re
import subprocess
from pathlib import Path

import pytest

from hlsgen import architectures
from hlsgen.hls.csim import WARNINGS
from hlsgen.hls.emit import INCLUDE_DIR
from hlsgen.hls.overlay.cycles import inference_cycles, row_cycles
from hlsgen.hls.overlay.program import DMA, ROW_FIELDS, build_program
from hlsgen.hls.overlay.tokens import DMA_QUEUE, ENGINES, queues
from hlsgen.hls.tbdata import EXPECTED_FILE, INPUT_FILE
from hlsgen.hw.cycles import two_queue_cycles
from hlsgen.tools import cxx_compiler
from tests.hls.helpers import csim
from tests.hls.test_overlay_fmaps import architecture, banded, windowed_model
from tests.hw.models import target_with

pytestmark = pytest.mark.csim
NAMES = [name for name, _ in ROW_FIELDS]


def fields(program) -> list[dict]:
    return [dict(zip(NAMES, row.values)) for row in program.rows]


def test_waits_count_the_cxx_rows_and_only_awaited_rows_send_tokens():
    """A grouped conv's layer row becomes a C++ row per chunk: the dma rows after it wait for all its
    chunks. A queue sends a token after the rows whose counts the other queue's running maximum wait
    reaches (a smaller later wait reads nothing), and the last dma row always, for the stream out."""
    rows = [(ENGINES, 0, 1),  # e1
            (DMA_QUEUE, 1, 1),  # d1: after e1
            (ENGINES, 1, 3),  # e2..e4, a grouped conv: after d1
            (DMA_QUEUE, 2, 1),  # d2: after the grouped conv, e4
            (DMA_QUEUE, 1, 1),  # d3: a smaller wait, already met
            (ENGINES, 3, 1),  # e5: after d3
            (DMA_QUEUE, 0, 1)]  # d4: the last dma row
    q = queues(rows)
    assert q.waits == (0, 1, 1, 1, 1, 4, 1, 3, 0)
    # the engines signal after e1 and e4; the DMA queue after d1, d3 and d4 (the engines' last read)
    assert q.signals == (1, 1, 0, 0, 1, 0, 1, 0, 1)
    assert (q.to_dma, q.to_engines) == (1 + 2, 3)
    # at most two tokens wait in a stream: the first and e1's before the DMA queue reads any; d3's and d4's
    # while the engines run e2..e4 (they read d1's)
    assert (q.to_dma_depth, q.to_engines_depth) == (2, 2)


def run_processes(rows: list[dict], tokens, seed: int, first: str | None = None) -> tuple[dict, dict]:
    """The two processes of top.cpp.j2, token for token, their steps interleaved at random (`first`: that
    process whenever it can go on, the other only when it waits): returns the tokens each stream carried and
    the most it held at once. Fails when a row starts before the other queue's rows it waits for have
    finished, on a deadlock, on a write to a full stream (the depths are meant to let every write go on at
    once) and on a token left unread."""
    queue = {"engines": [f for f in rows if f["unit"] != DMA], "dma": [f for f in rows if f["unit"] == DMA]}
    finished = {"engines": 0, "dma": 0}

    def engines():
        yield "write", "to_dma", 0  # the inputs are in
        moved = 0
        for i, f in enumerate(queue["engines"]):
            while moved < f["wait"]:
                moved = yield "read", "to_engines"
            assert finished["dma"] >= f["wait"]
            finished["engines"] = i + 1
            if f["signal"]:
                yield "write", "to_dma", i + 1
        while moved < len(queue["dma"]):  # before the outputs stream out
            moved = yield "read", "to_engines"
        assert finished["dma"] == len(queue["dma"])

    def dma():
        computed = yield "read", "to_dma"
        for i, f in enumerate(queue["dma"]):
            while computed < f["wait"]:
                computed = yield "read", "to_dma"
            assert finished["engines"] >= f["wait"]
            finished["dma"] = i + 1
            if f["signal"]:
                yield "write", "to_engines", i + 1

    depth = {"to_dma": tokens.to_dma_depth, "to_engines": tokens.to_engines_depth}
    streams, sent = {"to_dma": [], "to_engines": []}, {"to_dma": 0, "to_engines": 0}
    peak = {"to_dma": 0, "to_engines": 0}
    processes = {name: (made(), None) for name, made in (("engines", engines), ("dma", dma))}
    pending = {name: process.send(None) for name, (process, _) in processes.items()}
    rng = random.Random(seed)
    while pending:
        ready = [n for n, (kind, stream, *_) in pending.items() if kind == "write" or streams[stream]]
        assert ready, f"deadlock: {pending}"
        name = first if first in ready else rng.choice(ready)
        kind, stream, *value = pending[name]
        if kind == "write":
            assert len(streams[stream]) < depth[stream], f"{stream} is full ({depth[stream]} tokens)"
            streams[stream].append(value[0])
            sent[stream] += 1
            peak[stream] = max(peak[stream], len(streams[stream]))
        answer = streams[stream].pop(0) if kind == "read" else None
        try:
            pending[name] = processes[name][0].send(answer)
        except StopIteration:
            del pending[name]
    assert streams == {"to_dma": [], "to_engines": []}, "a token nobody read"
    return sent, peak


CASES = [("resnet8", architecture(architectures.resnet8), "systolic16x16", 24),
         ("resnet8", architecture(architectures.resnet8), "systolic16x16", 16),
         ("windowed", windowed_model, "systolic8x8", 6)]


@pytest.mark.parametrize("name, made, target, kib", CASES, ids=[f"{n}-{t}-{k}KiB" for n, _, t, k in CASES])
def test_every_token_sent_is_read_and_no_write_waits_whatever_the_interleaving(tmp_path, name, made, target, kib):
    quantized, mapping, design = banded(tmp_path, made, target_with(target, buffers__input__kib=kib))
    program = build_program(quantized.graph, mapping)
    rows = fields(program)
    tokens = program.tokens
    peaks = []
    for seed, first in [(seed, None) for seed in range(20)] + [(0, "engines"), (0, "dma")]:
        sent, peak = run_processes(rows, tokens, seed, first)
        assert sent == {"to_dma": tokens.to_dma, "to_engines": tokens.to_engines}
        peaks.append(peak)
    # the depths are reached: the engines running ahead fill to_dma, the DMA queue running ahead to_engines
    assert max(p["to_dma"] for p in peaks) == tokens.to_dma_depth
    assert max(p["to_engines"] for p in peaks) == tokens.to_engines_depth
    text = (tmp_path / "hls" / "net_program.h").read_text()
    assert f"static const int TO_DMA_DEPTH = {tokens.to_dma_depth};" in text
    assert f"static const int TO_ENGINES_DEPTH = {tokens.to_engines_depth};" in text
    engine = [f for f in rows if f["unit"] != DMA]
    assert tokens.to_dma == 1 + sum(f["signal"] for f in engine) and tokens.to_engines == sum(
        f["signal"] for f in rows if f["unit"] == DMA)
    assert tokens.to_dma_depth < tokens.to_dma and tokens.to_engines_depth < tokens.to_engines


def double_buffered(mapping) -> list[str]:
    """The layers whose band k + 1's loads come before band k's compute row."""
    found = []
    for i, layer in enumerate(mapping.layers):
        if layer.unit == "dma" or layer.band is None or layer.band.count < 2:
            continue
        later = [r for r in mapping.layers[i + 1:] if r.unit != "dma" and r.band is not None
                 and r.band.index == layer.band.index + 1 and r.name.split("#")[0] == layer.name.split("#")[0]]
        loads_before = {r.move.buffer for r in mapping.layers[:i] if r.unit == "dma" and r.move.direction == "load"}
        if later and set(later[0].inputs) <= loads_before:
            found.append(layer.name)
    return found


def test_a_double_buffered_program_overlaps_its_copies_bit_exact(tmp_path):
    """ResNet-8 with 24 KiB of activation memory double-buffers its bands: the loads of band k + 1 come
    before the compute of band k, and the DMA process runs them while the engines compute. C simulation
    runs the two processes on two threads and is bit-exact; the C++ design's cycles are the two queues'."""
    quantized, mapping, design = banded(tmp_path, architecture(architectures.resnet8),
                                        target_with("systolic16x16", buffers__input__kib=24))
    assert double_buffered(mapping)
    out = tmp_path / "hls"
    top = (out / "net.cpp").read_text()
    assert "#pragma HLS DATAFLOW" in top and "#pragma HLS stream variable=amem type=unsync" in top
    assert re.search(r"HLSGEN_PROCESSES\(engine_queue\([^;]*\),\s+dma_queue\(amem, dwmem, fmem, to_dma, "
                     r"to_engines\)\);", top)
    result = csim(out, portable=True)
    assert result.compared == result.samples * 10 and result.mismatches == 0, result.log[-2000:]
    program = build_program(quantized.graph, mapping)
    cycles = row_cycles(program, 16)
    times = two_queue_cycles([(int(f["unit"] == DMA), c, f["wait"]) for f, c in zip(fields(program), cycles)])
    # the input is in the image (no input stream), the 10 logits stream out
    assert design.cycles == inference_cycles(program, 16) == max(end for _, end in times) + 10
    assert design.cycles < sum(cycles)  # the copies overlap the compute
    # the C++ rows' waits are the layer program's (no grouped conv: one C++ row per layer row)
    assert [f["wait"] for f in fields(program)] == [layer.wait for layer in mapping.layers if layer.unit != "none"]


def sanitized_csim(out: Path) -> subprocess.CompletedProcess:
    """The C simulation under ThreadSanitizer, which reports any two accesses of the processes to one
    word that no token orders (happens-before through the token streams' lock)."""
    binary = out / "csim_tsan"
    subprocess.run([cxx_compiler("the test"), "-std=c++14", "-O1", "-pthread", "-fsanitize=thread", *WARNINGS,
                    "-DHLSGEN_PORTABLE", "-I", str(out / "portable"), "-I", str(out), str(out / "net.cpp"),
                    str(out / "net_tb.cpp"), "-o", str(binary)], check=True, capture_output=True, text=True)
    return subprocess.run([str(binary), str(out / INPUT_FILE), str(out / EXPECTED_FILE)], capture_output=True,
                          text=True, timeout=300)


def test_the_tokens_order_every_access_of_the_two_processes_to_a_word(tmp_path):
    """ThreadSanitizer finds no race on the activation memory in the double-buffered program; with the dma rows'
    waits dropped and the engine rows' signals with them (the control: the DMA then runs unsynchronised, and no
    token fills a channel nobody reads, which would abort before the race is seen), it does."""
    banded(tmp_path, architecture(architectures.resnet8), target_with("systolic16x16", buffers__input__kib=24))
    out = tmp_path / "hls"
    done = sanitized_csim(out)
    assert done.returncode == 0 and "ThreadSanitizer" not in done.stderr, done.stderr[-3000:]
    assert "compared 40 output integers of 4 samples: 0 mismatches" in done.stdout
    program = out / "net_program.h"
    text = program.read_text()
    fields = re.search(r"// Row fields: (.*)", text).group(1).split(", ")

    def zeroed(table: str, field: str) -> str:
        column = fields.index(field)

        def zero(row: re.Match) -> str:
            values = row.group(1).split(", ")
            return "{ " + ", ".join(values[:column] + ["0"] + values[column + 1:]) + " }"
        return re.sub(r"\{ ([^}]*) \}", zero, table)

    head, moves = text.split("static const Row moves[MOVES] = {")
    before, engines = head.split("static const Row program[ROWS] = {")
    engine_table, between = engines.split("};", 1)
    move_table, rest = moves.split("};", 1)
    program.write_text(before + "static const Row program[ROWS] = {" + zeroed(engine_table, "signal") + "};"
                       + between + "static const Row moves[MOVES] = {" + zeroed(move_table, "wait") + "};" + rest)
    assert "WARNING: ThreadSanitizer: data race" in sanitized_csim(out).stderr


def test_the_vendor_headers_run_the_two_processes_too(tmp_path):
    banded(tmp_path, architecture(architectures.resnet8), target_with("systolic16x16", buffers__input__kib=24))
    result = csim(tmp_path / "hls", portable=False)
    assert result.headers.kind == "vendor" and result.compared == 40 and result.mismatches == 0


DATAFLOW_PROGRAM = """
#include <cstdio>
#include "hlsgen_dataflow.h"

static void ping(hlsgen::channel<int, 2>& out, hlsgen::channel<int, 2>& in, int rounds, int& last) {
    for (int i = 0; i < rounds; i++) {
        out.write(i);
        last = in.read();
    }
}

static void pong(hlsgen::channel<int, 2>& in, hlsgen::channel<int, 2>& out, int rounds) {
    for (int i = 0; i < rounds; i++) {
        out.write(in.read() * 10);
    }
}

int main(int argc, char** argv) {
    const int rounds = 5, replies = argc > 1 ? std::atoi(argv[1]) : rounds;
    int last = -1;
    {
        hlsgen::channel<int, 2> to_pong("to_pong"), to_ping("to_ping");
        HLSGEN_PROCESSES(ping(to_pong, to_ping, rounds, last), pong(to_pong, to_ping, replies));
    }
    std::printf("last %d\\n", last);
    if (argc > 2) {  // a token nobody reads
        hlsgen::channel<int, 2> spare("spare");
        spare.write(1);
    }
    return 0;
}
"""


@pytest.fixture(scope="module")
def dataflow_binary(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("dataflow")
    (folder / "main.cpp").write_text(DATAFLOW_PROGRAM)
    binary = folder / "main"
    subprocess.run([cxx_compiler("the test"), "-std=c++14", "-O2", "-pthread", *WARNINGS, "-I", str(INCLUDE_DIR),
                    str(folder / "main.cpp"), "-o", str(binary)], check=True, capture_output=True, text=True)
    return binary


def test_two_processes_hand_each_other_tokens_on_two_threads(dataflow_binary):
    """A round trip per token: run one after the other, the first process would wait forever."""
    done = subprocess.run([str(dataflow_binary)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and done.stdout == "last 40\n", done.stderr


@pytest.mark.parametrize("args, message", [
    (["3"], "hlsgen_dataflow: deadlock: read from empty channel 'to_ping'"),  # pong returns after 3 replies
    (["5", "spare"], "hlsgen_dataflow: 1 token(s) left in channel 'spare': sent, never read")])
def test_a_wait_that_cannot_end_or_a_token_left_unread_aborts_naming_the_channel(dataflow_binary, args, message):
    done = subprocess.run([str(dataflow_binary), *args], capture_output=True, text=True, timeout=30)
    assert done.returncode != 0 and message in done.stderr, done.stderr
