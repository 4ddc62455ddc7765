"""Models with several inputs or outputs (issue 25): the program compiler gives the RTL every input and output
map in graph order, the generated top takes the inputs one after another on s_axis and streams the outputs one
after another on m_axis (lint-clean), the performance model charges every input's and output's elements, `hlsgen sim` compares each output by name, and what the RTL does not do is refused by
name. The target's top (--program external) reads up to MAX_INPUTS and MAX_OUTPUTS maps from program.bin's header.
The Verilator simulations are sim/test_model_multi_output.py's."""
from types import SimpleNamespace

import numpy as np
import pytest

from hlsgen.hw import load_target, map_model
from hlsgen.hw.cycles import STREAM_LATENCY
from hlsgen.rtl.overlay import OverlayFitError
from hlsgen.rtl.program import compile_program
from hlsgen.rtl.program_image import HEADER_BITS, header, tables
from hlsgen.rtl.render import config_fields, move_fields, write_rtl
from hlsgen.rtl.sim import _compare
from hlsgen.rtl.toolchain import lint
from tests.hw.models import _quantize
from tests.rtl.multi_output import (add_input_model, concat_inputs_model, three_outputs_model,
                                    two_heads_model)
from tests.rtl.program_of import rtl_program

MODELS = {"two_heads": two_heads_model, "three_outputs": three_outputs_model}
INPUT_MODELS = {"add_input": add_input_model, "concat_inputs": concat_inputs_model}


def graph_of(name: str):
    return _quantize(MODELS[name]())


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_program_streams_every_output_in_graph_order(name):
    graph = graph_of(name)
    mapping = map_model(graph, load_target("systolic8x8"))
    program = compile_program(mapping, graph)
    assert [m.tensor for m in program.outputs] == list(graph.outputs)
    assert len(set(program.output_maps)) == len(graph.outputs) > 1
    assert all(m.dram_base is None for m in program.outputs)  # model outputs stay on chip
    # the model charges the stream of every output, one element a beat
    elements = sum(int(np.prod(graph.shape(t))) for t in graph.outputs)
    assert mapping.output_elements == elements
    assert not mapping.maps_external
    assert mapping.cycles == (mapping.input_elements + sum(r.cycles for r in mapping.layers) + elements + STREAM_LATENCY
                              - mapping.overlapped_cycles)


@pytest.mark.parametrize("target", ["systolic8x8", "systolic16x16"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_top_with_several_outputs_is_lint_clean(name, target, tmp_path):
    files = write_rtl(rtl_program(graph_of(name), load_target(target)), tmp_path)
    text = (tmp_path / f"{files.top}.v").read_text()
    assert "case (out_map)" in text and "last_map(" in text
    for top in (files.top, files.tb):
        ok, messages = lint(list(files.sources), top)
        assert ok, messages


@pytest.mark.parametrize("name", ["two_heads", "add_input"])
def test_the_target_s_top_takes_several_maps_from_its_header(name, tmp_path):
    graph = _quantize({**MODELS, **INPUT_MODELS}[name]())
    program = compile_program(map_model(graph, load_target("systolic8x8"), program="external"), graph)
    words = header(program)
    assert 1 + len(tables(program, config_fields(program), move_fields(program))) + len(words) <= HEADER_BITS // 32
    assert (words["in_maps"], words["out_maps"]) == (len(graph.inputs), len(graph.outputs))
    assert words["out_elements"] == sum(int(np.prod(graph.shape(t))) for t in graph.outputs)
    files = write_rtl(program, tmp_path)
    for top in (files.top, files.tb):
        ok, messages = lint(list(files.sources), top)
        assert ok, messages


def test_the_target_s_top_refuses_more_maps_than_its_header_holds(monkeypatch):
    graph = graph_of("two_heads")
    monkeypatch.setattr("hlsgen.rtl.program.MAX_OUTPUTS", 1)
    with pytest.raises(OverlayFitError, match="sends up to 1 output maps, the model has 2: --program rom"):
        compile_program(map_model(graph, load_target("systolic8x8"), program="external"), graph)


@pytest.mark.parametrize("name", sorted(INPUT_MODELS))
def test_the_program_streams_every_input_in_graph_order(name):
    graph = _quantize(INPUT_MODELS[name]())
    mapping = map_model(graph, load_target("systolic8x8"))
    program = compile_program(mapping, graph)
    assert [m.tensor for m in program.inputs] == list(graph.inputs) and len(graph.inputs) == 2
    assert len(set(program.input_maps)) == 2 and all(m.dram_base is None for m in program.inputs)
    # the model charges the stream of every input, one element a beat
    assert mapping.input_elements == sum(int(np.prod(graph.shape(t))) for t in graph.inputs)


@pytest.mark.parametrize("name", sorted(INPUT_MODELS))
def test_a_top_with_several_inputs_is_lint_clean(name, tmp_path):
    graph = _quantize(INPUT_MODELS[name]())
    files = write_rtl(rtl_program(graph, load_target("systolic8x8")), tmp_path)
    text = (tmp_path / f"{files.top}.v").read_text()
    assert "case (in_map)" in text
    elements = sum(int(np.prod(graph.shape(t))) for t in graph.inputs)
    assert f"IN_ELEMS = {elements};" in (tmp_path / f"{files.tb}.v").read_text()
    for top in (files.top, files.tb):
        ok, messages = lint(list(files.sources), top)
        assert ok, messages


def test_a_mismatch_names_its_output():
    """The stream's beats are output 0's elements, then output 1's: a wrong beat of the second output is
    reported as that output's element."""
    expected = [("boxes", np.arange(6).reshape(1, 2, 3)), ("scores", np.array([[-1, 2]]))]
    program = SimpleNamespace(outputs=[SimpleNamespace(quant=SimpleNamespace(signed=False)),
                                       SimpleNamespace(quant=SimpleNamespace(signed=True))],
                              images=1, compute=[], moves=[])
    target = SimpleNamespace(widths=SimpleNamespace(operand_bits=8))
    beats = {k: v for k, v in enumerate([0, 1, 2, 3, 4, 5, 255, 2])}
    parsed = {"out": {0: beats}, "run": {0: 100}, "layer": {}, "move": {}, "in": {0: 10}, "load": None}
    ok = _compare(parsed, expected, program, target, SimpleNamespace(cycles=100), 1, 0, 0, 0)
    assert not ok.mismatches and ok.compared == 8
    parsed["out"][0] = beats | {7: 3}
    wrong = _compare(parsed, expected, program, target, SimpleNamespace(cycles=100), 1, 0, 0, 0)
    assert wrong.mismatches == ["image 0 output 'scores' element 1: rtl 3, reference 2"]
