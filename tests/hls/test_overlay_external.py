"""The overlay with its weights in external memory: when the layer program finds the weights larger than
the target's weight memory (here a target shrunk to 1 KiB of it), the weight ROM becomes an m_axi port
`wmem`, the build writes the image weights.bin, and the testbench passes it as a host array. C-simulated
bit-exact, reading exactly the bytes the program's transfers list (MLPerf Tiny's ResNet-8 on the shipped
systolic8x8 among them); a model whose weights fit is unchanged."""
from __future__ import annotations

import re
import subprocess
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from hlsgen import architectures
from hlsgen.hls import write_hls
from hlsgen.hls.csim import CsimBuildError, vendor_headers
from hlsgen.hls.overlay.units import prove, unit_nests
from hlsgen.loopir import Partition
from hlsgen.hw import load_target, map_model
from hlsgen.hls.overlay.design import overlay_config
from tests.hls.helpers import csim, overlay_memories, quantize_model
from tests.hls.test_overlay import conv_chain, digits, pragma_counts, zoo_model
from tests.hw.models import target_with

pytestmark = pytest.mark.csim
IMAGE = "weights.bin"


def external(tmp_path: Path, build, target: str):
    """The model written for `target` with 1 KiB of weight memory: (design, mapping, folder)."""
    model, feeds = build()
    quantized = quantize_model(model, feeds)
    shrunk = target_with(target, buffers__weight__kib=1)
    mapping = map_model(quantized.graph, shrunk)
    int_inputs = quantized.quantize_inputs(feeds)
    out = tmp_path / "hls"
    design = write_hls(out, quantized.graph, shrunk, "tiny", "tiny.onnx", int_inputs, quantized.run_int(int_inputs),
                       design="overlay", mapping=mapping)
    return design, mapping, out


def sources(folder: Path) -> str:
    return "\n".join(p.read_text() for p in sorted(folder.glob("*.[ch]*")) if not p.name.endswith("_tb.cpp"))


CASES = [("conv_chain", lambda: conv_chain(3), "systolic8x8"), ("conv_chain", lambda: conv_chain(3), "systolic16x16"),
         ("mobilenet", lambda: zoo_model("mobilenet"), "systolic8x8"), ("digits", digits, "systolic16x16")]


@pytest.mark.parametrize("name, build, target", CASES, ids=[f"{n}-{t}" for n, _, t in CASES])
def test_weights_in_external_memory_are_bit_exact(tmp_path, name, build, target):
    design, mapping, out = external(tmp_path, build, target)
    assert mapping.weights_external and design.weights == "external"
    image = np.frombuffer((out / IMAGE).read_bytes(), dtype="<u8")
    assert image.size == design.weight_rom_words and design.to_json()["weight_bytes"] == image.size * 8
    text = sources(out)
    assert "wrom" not in text and "const uint64_t* wmem" in text
    assert f"mode=m_axi port=wmem offset=slave bundle=gmem depth={image.size} " in text
    assert "ARRAY_PARTITION variable=wmem" not in text
    # the array unit reads the bytes the layer program's transfers list, no more and no fewer
    assert design.dram_bytes == sum(layer.dram_bytes for layer in mapping.layers) > 0
    result = csim(out, portable=True)
    assert result.compared > 0 and result.mismatches == 0, result.log[-2000:]


@pytest.mark.parametrize("build, target", [(lambda: conv_chain(3), "systolic16x16"),
                                           (lambda: zoo_model("mobilenet"), "systolic8x8")],
                         ids=["conv_chain-systolic16x16", "mobilenet-systolic8x8"])
def test_weights_in_external_memory_with_the_vendor_headers(tmp_path, build, target):
    if vendor_headers() is None:
        pytest.fail("hls4ml (a dependency carrying the vendor ap_types headers) is not installed: pip install .")
    external(tmp_path, build, target)
    result = csim(tmp_path / "hls", portable=False)
    assert result.headers.kind == "vendor" and result.mismatches == 0 and result.compared > 0


def test_the_testbench_computes_with_the_image_it_loads(tmp_path):
    """A changed weight in weights.bin changes outputs; a short image is refused; the README's g++ line,
    run inside the folder, finds the image in the working directory."""
    _, _, out = external(tmp_path, lambda: conv_chain(3), "systolic8x8")
    good = (out / IMAGE).read_bytes()
    words = np.frombuffer(good, dtype="<u8").copy()
    words[:8] ^= np.uint64(0x0101010101010101)  # the first layer's first tile
    (out / IMAGE).write_bytes(words.astype("<u8").tobytes())
    assert csim(out, portable=True).mismatches > 0
    (out / IMAGE).write_bytes(good[:-8])
    with pytest.raises(CsimBuildError, match="weights.bin is missing or not the build.s weight image of 642 "):
        csim(out, portable=True)
    (out / IMAGE).write_bytes(good)
    subprocess.run(["g++", "-std=c++14", "-DHLSGEN_PORTABLE", "-Iportable", "-I.", "tiny.cpp", "tiny_tb.cpp", "-o",
                    "readme.bin"], cwd=out, check=True)
    done = subprocess.run(["./readme.bin"], cwd=out, capture_output=True, text=True)
    assert done.returncode == 0 and " 0 mismatches" in done.stdout, done.stdout + done.stderr


def test_the_pragma_count_does_not_grow_with_the_layers_and_the_proof_covers_the_staging_buffers(tmp_path):
    counts = []
    for layers in (2, 6):
        design, _, out = external(tmp_path / str(layers), lambda: conv_chain(layers), "systolic16x16")
        assert design.weights == "external" and design.rows == layers
        counts.append(pragma_counts(out))
    assert counts[0] == counts[1] and all(counts[0].values())
    # staging buffers split in fewer banks than the words one PE row's load reads at once
    model, feeds = conv_chain(2)
    quantized = quantize_model(model, feeds)
    mapping = map_model(quantized.graph, target_with("systolic16x16", buffers__weight__kib=1))
    words = overlay_config(quantized.graph, mapping)["row_words"]
    c, narrow = overlay_memories(quantized, mapping, ("wbuf", Partition("wbuf", 2, "cyclic", words)),
                                 ("wbuf", Partition("wbuf", 2, "cyclic", 1)))
    assert c["external"] and words > 2 and prove(unit_nests(c)) == []
    found = prove(unit_nests(c, narrow))
    assert {p.split("'")[1] for p in found if "wbuf" in p} == {"first_load", "stream"}, found


def test_a_model_whose_weights_fit_is_unchanged_by_the_external_memory(tmp_path):
    """The same files, byte for byte, for a target with external memory and without: no m_axi port, no
    image, the weight ROM as before."""
    model, feeds = zoo_model("mobilenet")
    quantized = quantize_model(model, feeds)
    int_inputs = quantized.quantize_inputs(feeds)
    with_dram = load_target("systolic8x8")
    assert with_dram.external_memory is not None
    folders = []
    for name, target in (("dram", with_dram), ("none", replace(with_dram, external_memory=None))):
        design = write_hls(tmp_path / name, quantized.graph, target, "tiny", "tiny.onnx", int_inputs,
                           quantized.run_int(int_inputs), design="overlay")
        assert design.weights == "rom" and design.dram_bytes == 0
        folders.append(tmp_path / name)
    files = sorted(p.relative_to(folders[0]) for p in folders[0].rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(folders[1]) for p in folders[1].rglob("*") if p.is_file())
    assert all((folders[0] / f).read_bytes() == (folders[1] / f).read_bytes() for f in files)
    text = sources(folders[0])
    assert not (folders[0] / IMAGE).exists() and not re.search(r"\bwmem\b", text) and "wrom" in text


def test_mlperf_tiny_resnet8_on_the_shipped_8x8_target_reads_its_weights_from_external_memory(tmp_path):
    """78,744 bytes of weights against 64 KiB of weight memory: the shipped systolic8x8 streams them."""
    model = architectures.resnet8()
    feeds = {model.graph.input[0].name: architectures.calibration_data(model, n=4, seed=0)}
    quantized = quantize_model(model, feeds)
    target = load_target("systolic8x8")
    mapping = map_model(quantized.graph, target)
    assert mapping.weights_external
    int_inputs = quantized.quantize_inputs(feeds)
    design = write_hls(tmp_path / "hls", quantized.graph, target, "resnet8", "resnet8.onnx", int_inputs,
                       quantized.run_int(int_inputs), design="overlay", mapping=mapping)
    assert design.dram_bytes == sum(layer.dram_bytes for layer in mapping.layers) > target.buffers.weight.bytes
    result = csim(tmp_path / "hls", portable=True)
    assert result.compared == 40 and result.mismatches == 0, result.log[-2000:]
