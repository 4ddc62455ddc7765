"""The build folder as other commands read it (`run`, `csim`, `sim`): its marker file and the quantized
model it holds. `hlsgen.build` writes it; the simulators only read it, so they need not import the build."""
from __future__ import annotations

import json
from pathlib import Path

from .errors import PathError
from .graph_io import load_graph
from .ir import verify
from .paths import reading_build
from .quant import QuantizedModel
from .quant.lower import Lowered

BUILD_MARKER = "build.json"


def is_build_folder(folder: Path) -> bool:
    return (Path(folder) / BUILD_MARKER).is_file()


def load_build(folder: Path) -> QuantizedModel:
    """The quantized model a build folder holds, ready to run its integer reference."""
    folder = Path(folder)
    if not is_build_folder(folder):
        raise PathError(f"{folder} is not an hlsgen build folder (no {BUILD_MARKER}); run `hlsgen build` first")
    with reading_build(folder):
        quant = json.loads((folder / "quant.json").read_text())
        host_softmax = {k: tuple(v) for k, v in quant["host_softmax"].items()}
        host_depth_to_space = {k: (int(v[0]), str(v[1])) for k, v in quant.get("host_depth_to_space", {}).items()}
        integer, float_graph = load_graph(folder / "integer"), load_graph(folder / "float")
        for graph in (integer, float_graph):  # an edited file can name a tensor nothing defines
            verify(graph)
        return QuantizedModel(Lowered(integer, [], {}, host_softmax, host_depth_to_space), float_graph)
