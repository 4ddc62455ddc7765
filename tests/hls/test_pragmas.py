"""Every loop IR directive becomes its pragma, at the loop, buffer or function it names; no kernel pragma
comes from anywhere else."""
from __future__ import annotations

import re

import pytest

from hlsgen import zoo
from hlsgen.hls.pragmas import pragma
from hlsgen.hw import load_target, map_model
from hlsgen.loopir import Dataflow, Partition, Pipeline, Stream, Unroll, layer_nests
from tests.hls.helpers import generate, quantize_model


def test_each_directive_has_its_pragma():
    assert pragma(Pipeline(1)) == "#pragma HLS PIPELINE II=1"
    assert pragma(Pipeline(4)) == "#pragma HLS PIPELINE II=4"
    assert pragma(Unroll()) == "#pragma HLS UNROLL"
    assert pragma(Unroll(8)) == "#pragma HLS UNROLL factor=8"
    assert pragma(Partition("acc", 2, "cyclic", 16)) == "#pragma HLS ARRAY_PARTITION variable=acc type=cyclic factor=16 dim=2"
    assert pragma(Partition("w", 3, "block", 4), "conv1_weights") == \
        "#pragma HLS ARRAY_PARTITION variable=conv1_weights type=block factor=4 dim=3"
    assert pragma(Partition("pe_w", 1, "complete")) == "#pragma HLS ARRAY_PARTITION variable=pe_w type=complete dim=1"
    assert pragma(Dataflow()) == "#pragma HLS DATAFLOW"
    assert pragma(Stream(depth=8), "window") == "#pragma HLS STREAM variable=window depth=8"
    with pytest.raises(ValueError):
        pragma(Stream(depth=2))  # a stream pragma needs the variable it applies to
    with pytest.raises(ValueError):
        pragma(object())


def guarded_block(lines: list[str], index: int) -> list[str]:
    """The pragmas of the `#ifdef __SYNTHESIS__` block right after line `index` ([] if none)."""
    if index + 1 >= len(lines) or lines[index + 1].strip() != "#ifdef __SYNTHESIS__":
        return []
    block = []
    for line in lines[index + 2:]:
        if line.strip() == "#endif":
            return block
        block.append(line.strip())
    raise AssertionError("unterminated #ifdef __SYNTHESIS__ block")


@pytest.fixture(scope="module", params=["residual", "mobilenet"])
def generated(request, tmp_path_factory):
    model = zoo.ZOO[request.param]()
    calib = {"image": zoo.calibration_data(model, n=16, seed=0)}
    quantized = quantize_model(model, calib)
    target = load_target("systolic16x16")
    out = tmp_path_factory.mktemp("pragmas") / "hls"
    design = generate(quantized, calib, out)
    return out, design, layer_nests(map_model(quantized.graph, target))


def test_every_loop_ir_directive_is_its_pragma_in_place(generated):
    out, design, nests = generated
    kernels = {k.layer: k for k in design.kernels}
    checked = 0
    for name, nest in nests.items():
        if not nest.body:  # a Reshape: addressing only
            continue
        lines = (out / "kernels" / kernels[name].header).read_text().splitlines()
        fn = kernels[name].fn
        signature = next(i for i, line in enumerate(lines) if line.startswith(f"static void {fn}("))
        for target, directive in nest.directives():
            if isinstance(directive, (Pipeline, Unroll)):
                at = next(i for i, line in enumerate(lines) if f"HLSGEN_LOOP({target}) for (" in line)
                assert pragma(directive) in guarded_block(lines, at), (name, target, directive)
            elif isinstance(directive, Dataflow):
                assert target == name and pragma(directive) in guarded_block(lines, signature)
            else:  # Partition, Stream: after the buffer's declaration (a ROM's, at the top of the kernel)
                variable = _c_name(lines, target)
                declared = [i for i, line in enumerate(lines[signature:], signature)
                            if re.match(rf"\s+[\w<>]+ {variable}(\[\d+\])+;$", line)]
                where = guarded_block(lines, declared[0]) if declared else [line.strip() for line in lines[signature:]]
                assert pragma(directive, variable) in where, (name, target, directive)
            checked += 1
        pragmas_in_kernel = [line.strip() for line in lines[signature:] if line.strip().startswith("#pragma HLS")]
        adapters = sum(1 for line in lines[signature:] if "HLSGEN_LOOP(read_" in line or "HLSGEN_LOOP(write_" in line) // 2
        assert len(pragmas_in_kernel) == len(nest.directives()) + adapters, name
    assert checked > 50


def _c_name(lines: list[str], buffer: str) -> str:
    """A nest buffer's C name: itself for a local array, <layer>_<buffer> for a ROM."""
    if any(re.match(rf"\s+[\w<>]+ {buffer}(\[\d+\])+;$", line) for line in lines):
        return buffer
    return next(m.group(1) for line in lines for m in [re.search(rf"(\w+_{buffer})\[", line)] if m)


SCHEDULE = re.compile(r"#pragma HLS (PIPELINE|UNROLL|ARRAY_PARTITION)\b")


def _emitted(folder) -> list[tuple[str, str]]:
    """(the loop label or array it applies to, the pragma) of every PIPELINE, UNROLL and ARRAY_PARTITION in
    the design's C++ (not its testbench)."""
    found = []
    for path in sorted(folder.glob("*.[ch]*")):
        if path.name.endswith("_tb.cpp"):
            continue
        label = None
        for line in path.read_text().splitlines():
            m = re.search(r"HLSGEN_LOOP\((\w+)\)", line)
            label = m.group(1) if m else label
            if SCHEDULE.search(line):
                variable = re.search(r"variable=(\w+)", line)
                found.append((variable.group(1) if variable else label, line.strip()))
    return found


@pytest.mark.parametrize("target, kib", [("systolic8x8", None), ("systolic16x16", 1)], ids=["rom", "external"])
def test_every_overlay_pragma_comes_from_a_directive_of_the_units(tmp_path, target, kib):
    """The overlay's scheduling pragmas are exactly the loop IR directives of its units and of the memories
    they share: none that no directive produced, none missing."""
    from hlsgen.hls import write_hls
    from hlsgen.hls.overlay.design import overlay_config
    from hlsgen.hls.overlay.units import memories, unit_nests
    from tests.hw.models import target_with

    model = zoo.ZOO["mobilenet"]()
    calib = {"image": zoo.calibration_data(model, n=4, seed=0)}
    quantized = quantize_model(model, calib)
    tgt = target_with(target, buffers__weight__kib=kib) if kib else load_target(target)
    mapping = map_model(quantized.graph, tgt)
    int_inputs = quantized.quantize_inputs(calib)
    write_hls(tmp_path, quantized.graph, tgt, "net", "net.onnx", int_inputs, quantized.run_int(int_inputs),
              design="overlay", mapping=mapping)
    c = overlay_config(quantized.graph, mapping)
    assert c["external"] == bool(kib)
    expected = []
    for nest in unit_nests(c).values():
        expected += [(loop.name, pragma(d)) for loop in nest.loops() for d in nest.directives_on(loop.name)
                     if isinstance(d, (Pipeline, Unroll))]
        expected += [(b.name, pragma(d, b.name)) for b in nest.buffers if b.decl for d in nest.directives_on(b.name)
                     if isinstance(d, Partition)]
    shared = memories(c)
    expected += [(b.name, pragma(d, b.name)) for b in shared.buffers for d in shared.directives_on(b.name)]
    emitted = _emitted(tmp_path)
    assert sorted(emitted) == sorted(expected)
    assert len(emitted) > 50 and any("wbuf" in line for _, line in emitted) == bool(kib)
