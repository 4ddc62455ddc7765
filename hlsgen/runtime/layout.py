"""What a host needs to know of one model built for the target's top (`--program external`), beside the
register map (hlsgen/rtl/control.py): the images' sizes, the input's and outputs' element counts, and where the
input goes when the program reads it from the feature-map image. Written once per build as OUT/driver/model.json;
the C driver's descriptor (hlsgen_model_<name>.c) and the Python runtime (hlsgen.runtime.driver) both read it.

Inputs and outputs through memory are one byte per element, [channel][row][col], the inputs one after another
in graph-input order and the outputs in graph-output order (as the streams carry them); when the program keeps the input in the
feature-map image, the host packs it there instead (hlsgen.hw.dram.pack_map: word (c / G) * pixels + pixel,
byte j channel (c / G) * G + (j mod G)), folded first where the build folds it (input_fold, hlsgen.ir.InputFold:
channel (ky * kw + kx) * C + c of pixel (y, x) is channel c of image pixel (sy y + ky - top, sx x + kx - left),
its fill off the image)."""
from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from ..errors import PathError
from ..ir import InputFold

LAYOUT_FILE = "model.json"


@dataclass(frozen=True)
class Tensor:
    """An input or output map: its elements, one byte each, [channel][row][col]."""

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
    inputs: tuple[Tensor, ...]  # in graph-input order: their bytes one after another
    input_in_fmap: bool
    input_word: int  # where the packed input starts in the feature-map image (input_in_fmap)
    input_channels: int
    input_pixels: int
    input_banks: int  # G
    outputs: tuple[Tensor, ...]  # in graph-output order: their bytes one after another
    input_fold: InputFold | None = None  # the host folds the input as it packs it (hlsgen.passes.input_fold)
    input_width: int = 0  # the packed (folded) input's width in pixels

    @property
    def input_gather(self) -> InputFold:
        """Where the packed input's channels and pixels come from in the input's bytes: its fold, or the
        identity (a 1 x 1 kernel of stride 1) where the host does not fold it."""
        width = self.input_width or self.input_pixels or 1
        return self.input_fold or InputFold.identity(self.input_channels, self.input_pixels // width, width)

    @property
    def input_bytes(self) -> int:
        return sum(i.bytes for i in self.inputs)

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
        def tensors(key):
            return tuple(Tensor(t["name"], t["bytes"], tuple(t["shape"]), t["signed"]) for t in data[key])

        fold = data.get("input_fold")
        return cls(**{**data, "inputs": tensors("inputs"), "outputs": tensors("outputs"),
                      "input_fold": InputFold.from_json(fold) if fold else None})

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

    def tensors(maps) -> tuple[Tensor, ...]:  # as the host holds them: an input it folds, unfolded
        return tuple(Tensor(m.tensor, m.channels * m.pixels if m.fold is None else math.prod(m.fold.image),
                            m.fold.image if m.fold else (m.channels, m.height, m.width), m.quant.signed)
                     for m in maps)

    return ModelLayout(
        name=program.name, target=t.name, rows=program.rows, cols=program.cols, program_bytes=program_bytes,
        weights_bytes=weights_bytes, fmap_bytes=image_bytes(program), inputs=tensors(program.inputs),
        input_in_fmap=program.input_in_dram, input_word=inp.dram_base if program.input_in_dram else 0,
        input_channels=inp.channels, input_pixels=inp.pixels, input_banks=inp.banks,
        outputs=tensors(program.outputs), input_fold=inp.fold, input_width=inp.width)
