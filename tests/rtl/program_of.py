"""The RTL program of an integer graph: its layer program (hlsgen.hw.map_model), encoded for the RTL."""
from hlsgen.hw import map_model
from hlsgen.rtl.program import compile_program


def rtl_program(graph, target, packed: bool | None = None):
    return compile_program(map_model(graph, target, packed=packed), graph)
