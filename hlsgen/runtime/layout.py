"""What a host needs to know of one model built for the target's top (`--program external`), beside the
register map (hlsgen/rtl/control.py): the images' sizes, the input's and outputs' element counts, and where the
input goes when the program reads it from the feature-map image. Written once per build as OUT/driver/model.json;
the C driver's descriptor (hlsgen_model_<name>.c) and the Python runtime (hlsgen.runtime.driver) both read it.

Inputs and outputs through memory are one byte per element, [channel][row][col], the outputs one after
another in graph-output order (as the output stream sends them); when the program keeps the input in the
feature-map image, the host packs it there instead (hlsgen.hw.dram.pack_map: word (c / G) * pixels + pixel,
byte j channel (c / G) * G + (j mod G))."""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from ..errors import PathError

LAYOUT_FILE = "model.json"


@dataclass(frozen=True)
class Output:
    name: str
    bytes: int
    shape: tuple[int, ...]
    signed: bool


@dataclass(frozen=True)
class ModelLayout:
    name: str
    target: str
    rows: int
    cols: int
    program_bytes: int
    weights_bytes: int
    fmap_bytes: int
    input_name: str
    input_shape: tuple[int, ...]
    input_bytes: int
    input_signed: bool
    input_in_fmap: bool
    input_word: int  # where the packed input starts in the feature-map image (input_in_fmap)
    input_channels: int
    input_pixels: int
    input_banks: int  # G
    outputs: tuple[Output, ...]

    @property
    def output_bytes(self) -> int:
        return sum(o.bytes for o in self.outputs)

    @property
    def ident(self) -> str:
        """The model's name as a C identifier."""
        ident = re.sub(r"\W", "_", self.name).strip("_").lower() or "model"
        return ident if not ident[0].isdigit() else f"m_{ident}"

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "ModelLayout":
        outputs = tuple(Output(o["name"], o["bytes"], tuple(o["shape"]), o["signed"]) for o in data["outputs"])
        return cls(**{**data, "input_shape": tuple(data["input_shape"]), "outputs": outputs})

    @classmethod
    def read(cls, folder: Path) -> "ModelLayout":
        """OUT/driver/model.json of a build with the target's top."""
        path = Path(folder) / "driver" / LAYOUT_FILE
        try:
            return cls.from_json(json.loads(path.read_text()))
        except FileNotFoundError:
            raise PathError(f"{folder} has no {Path('driver') / LAYOUT_FILE}: only a build with the target's top "
                            "(--program external) runs on a device; rebuild with --program external") from None
        except (ValueError, KeyError, TypeError) as exc:
            raise PathError(f"{path} is not readable ({type(exc).__name__}); rebuild the folder") from None


def layout_of(program, program_bytes: int, weights_bytes: int) -> ModelLayout:
    """The layout of `program` (hlsgen.rtl.program.Program, with the target's overlay)."""
    from ..rtl.fmap_dma import image_bytes

    inp = program.maps[program.input_map]
    t = program.target
    return ModelLayout(
        name=program.name, target=t.name, rows=program.rows, cols=program.cols, program_bytes=program_bytes,
        weights_bytes=weights_bytes, fmap_bytes=image_bytes(program), input_name=inp.tensor,
        input_shape=(inp.channels, inp.height, inp.width), input_bytes=inp.channels * inp.pixels,
        input_signed=inp.quant.signed, input_in_fmap=program.input_in_dram,
        input_word=inp.dram_base if program.input_in_dram else 0, input_channels=inp.channels,
        input_pixels=inp.pixels, input_banks=inp.banks,
        outputs=tuple(Output(o.tensor, o.channels * o.pixels, (o.channels, o.height, o.width), o.quant.signed)
                      for o in program.outputs))
