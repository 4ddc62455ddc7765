"""--program external: the generated Verilog depends only on the target (two models, byte-identical .v files,
lint-clean), program.bin holds each model's layer table and tables exactly as the loader reads them, the tables'
entries are no wider than the resource estimate charges, MobileNetV2 fits every shipped target's top with room
to spare, and a model the overlay cannot hold (more layer rows than its table, a plane too small), or a target
without external memory, is a one-line exit-3 refusal."""
import json

import numpy as np
import onnx
import pytest
import yaml

from hlsgen.architectures import calibration_data, mobilenet_v2, resnet8, resnet18
from hlsgen.cli import main
from hlsgen.hw import load_target, map_model
from hlsgen.hw.overlay_tables import capacity, entry_bits
from hlsgen.hw.target import builtin_targets
from hlsgen.rtl.overlay import OverlayFitError
from hlsgen.rtl.program import compile_program
from hlsgen.rtl import program_image
from hlsgen.rtl.program_image import HEADER_BITS, HEADER_WORDS, MAGIC, VERSION, Table, header, slot_bytes, tables
from hlsgen.rtl.render import config_fields, layer_count, memory_depths, move_count, move_fields, write_rtl
from hlsgen.rtl.toolchain import lint
from tests.cli.test_errors import assert_one_line_error, run_cli
from tests.builders import make_model, tensor_value
from tests.hw.models import _quantize, integer_graph
from tests.hw.test_overlay_tables import ROM_ONLY

EXAMPLE = "examples/digits/digits.onnx"
CALIB = "examples/digits/calib.npz"


def overlay_program(model: str, target: str):
    graph = integer_graph(model)
    return compile_program(map_model(graph, load_target(target), program="external"), graph)


@pytest.mark.parametrize("target", ["systolic8x8", "systolic16x16"])
def test_two_models_on_one_target_get_byte_identical_verilog(tmp_path, target):
    files = [write_rtl(overlay_program(model, target), tmp_path / model) for model in ("digits", "window_pools")]
    a, b = (sorted(f.folder.glob("*.v")) for f in files)
    assert [p.name for p in a] == [p.name for p in b] and f"overlay_{target}_top.v" in [p.name for p in a]
    for x, y in zip(a, b):
        assert x.read_bytes() == y.read_bytes(), f"{x.name} differs between the models"
    assert files[0].program_image.read_bytes() != files[1].program_image.read_bytes()
    assert not list(files[0].folder.glob("*.mem")), "the overlay has no ROM images"
    for top in (files[0].top, files[0].tb):
        ok, messages = lint(list(files[0].sources), top)
        assert ok, messages


def test_the_program_image_holds_every_row_and_table_where_the_loader_reads_them(tmp_path):
    program = overlay_program("window_pools", "systolic16x16")  # average and max pools: divisors, dma rows
    fields = config_fields(program)
    files = write_rtl(program, tmp_path)
    image, data_bits = files.program_image.read_bytes(), program.target.external_memory.data_bits
    words = [int.from_bytes(image[4 * k:4 * k + 4], "little") for k in range(HEADER_BITS // 32)]
    moves = move_fields(program)
    tables_ = tables(program, fields, moves)
    assert words[0] == MAGIC << 16 | VERSION
    assert words[1:1 + len(tables_)] == [len(t.entries) for t in tables_] and words[1] == len(program.compute)
    geometry = header(program)
    assert words[1 + len(tables_):1 + len(tables_) + len(HEADER_WORDS)] == [geometry[k] for k in HEADER_WORDS]
    offset = HEADER_BITS // 8
    for table in tables_:  # each table after the last, its entries aligned to their own size
        size = (data_bits << table.beats_lg(data_bits)) // 8
        assert size <= slot_bytes(tables_, data_bits) <= 4096 and table.width <= size * 8
        for entry in table.entries:  # an empty table takes no room, not even its alignment
            offset += -offset % size
            assert int.from_bytes(image[offset:offset + size], "little") == entry
            offset += size
    assert offset == len(image)
    # a row's fields, low bits first, are the layer's (two's complement at the field's width)
    by_name = {t.name: t for t in tables_}
    for table, layers, columns in ((by_name["layers"], program.compute, fields), (by_name["moves"], program.moves, moves)):
        assert len(table.entries) == len(layers)
        for layer, row in zip(layers, table.entries):
            lsb = 0
            for name, width in columns:
                assert (row >> lsb) & ((1 << width) - 1) == layer.fields.get(name, 0) & ((1 << width) - 1), name
                lsb += width
    assert [t.name for t in tables_][-2:] == ["moves", "weights"] and by_name["divisors"].entries
    # the weights fit the weight RAM: the top loads them with the program (and runs no weight DMA)
    assert program.weights_loaded and by_name["weights"].entries == tuple(program.weights)
    assert by_name["weights"].width == program.cols * program.weight_word_slices


def loader_reads(image: bytes, sizes: list[int]) -> list[list[int]]:
    """The entries hg_program_loader reads from `image`: after the header, table after table, each entry at the
    next multiple of its size (`sizes`: bytes of an entry of each table), as many as the header counts."""
    counts = [int.from_bytes(image[4 * (1 + t):8 + 4 * t], "little") for t in range(len(sizes))]
    offset, read = HEADER_BITS // 8, []
    for count, size in zip(counts, sizes):
        entries = []
        for _ in range(count):
            offset += -offset % size
            entries.append(int.from_bytes(image[offset:offset + size], "little"))
            offset += size
        read.append(entries)
    return read


def test_an_empty_table_takes_no_room_in_the_image(monkeypatch):
    """The loader aligns each entry, not each table: an empty table after an odd number of 1-beat entries must
    not pad the image (DS-CNN: 121 divisor words, no move, then the weights, read a word late and bit-wrong)."""
    program = overlay_program("digits", "systolic16x16")
    made = (Table("divisors", 24, (1, 2, 3)), Table("moves", 160, ()), Table("weights", 128, (7, 8)))
    monkeypatch.setattr(program_image, "tables", lambda *_: made)
    image = program_image.program_image(program, [], [])
    data_bits = program.target.external_memory.data_bits
    sizes = [(data_bits << t.beats_lg(data_bits)) // 8 for t in made]
    assert sizes == [16, 32, 16]
    assert loader_reads(image, sizes) == [[1, 2, 3], [], [7, 8]]


def test_the_build_reports_the_residency_and_writes_the_images(tmp_path):
    out = tmp_path / "build"
    assert main(["build", EXAMPLE, "--calib", CALIB, "--target", "systolic8x8", "--program", "external", "-o",
                 str(out), "-q"]) == 0
    residency = json.loads((out / "program.json").read_text())["residency"]
    assert residency["program"] == "external" and residency["weights"] == "on_chip"  # loaded into the weight RAM
    rtl = json.loads((out / "report.json").read_text())["designs"]["rtl"]
    assert rtl["program"] == "external" and rtl["top"] == "overlay_systolic8x8_top"
    assert rtl["program_image_bytes"] == (out / "rtl" / "program.bin").stat().st_size > 0
    assert rtl["weight_image_bytes"] == (out / "rtl" / "weights.bin").stat().st_size > 0
    assert not list((out / "rtl").glob("*.mem"))
    rom = tmp_path / "rom"
    assert main(["build", EXAMPLE, "--calib", CALIB, "--target", "systolic8x8", "-o", str(rom), "-q"]) == 0
    assert json.loads((rom / "program.json").read_text())["residency"]["program"] == "rom"
    assert json.loads((rom / "report.json").read_text())["designs"]["rtl"]["program"] == "rom"


def target_file(folder, **changes) -> str:
    data = yaml.safe_load(builtin_targets()["systolic16x16"].read_text())
    data["name"] = "changed"
    for key, value in changes.items():
        if value is None:
            del data[key]
        else:
            data["buffers"][key]["kib"] = value
    path = folder / "changed.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


@pytest.mark.parametrize("changes, fragments", [
    ({"input": 2}, ("'digits'", "fit the activation memory (buffers.input = 2 KiB)", "larger buffers.input")),
    ({"external_memory": None}, ("--program external", "has no external_memory")),
], ids=["plane", "no-external-memory"])
def test_what_the_overlay_cannot_hold_is_an_exit_3_refusal(tmp_path, capsys, changes, fragments):
    target = target_file(tmp_path, **changes)
    code, _, err = run_cli(capsys, "build", EXAMPLE, "--calib", CALIB, "--target", target, "--program", "external",
                           "-o", str(tmp_path / "out"), "-q")
    assert code == 3
    assert_one_line_error(err, *fragments)
    assert not (tmp_path / "out").exists()


def test_auto_loads_the_program_when_the_model_uses_external_memory_and_the_overlay_holds_it(tmp_path, capsys):
    """16 KiB of weight memory: the example's weights stream, so its program is loaded too; 2 KiB of
    activation memory: its maps move through external memory in its own top, but not even its smallest bands fit
    the target's top's split of it, so the model keeps its own top, with a notice that says why."""
    weights = tmp_path / "weights"
    weights.mkdir()
    data = yaml.safe_load(builtin_targets()["systolic16x16"].read_text())
    data["name"], data["buffers"]["weight"]["kib"] = "w16", 16
    (weights / "w16.yaml").write_text(yaml.safe_dump(data))
    out = tmp_path / "streamed"
    assert main(["build", EXAMPLE, "--calib", CALIB, "--target", str(weights / "w16.yaml"), "-o", str(out),
                 "-q"]) == 0
    assert json.loads((out / "program.json").read_text())["residency"]["program"] == "external"
    assert (out / "rtl" / "program.bin").is_file()
    code, printed, _ = run_cli(capsys, "build", EXAMPLE, "--calib", CALIB, "--target", target_file(tmp_path, input=2),
                               "-o", str(tmp_path / "banded"), "--json")
    assert code == 0
    residency = json.loads((tmp_path / "banded" / "program.json").read_text())["residency"]
    assert residency["feature_maps"] == "external" and residency["program"] == "rom"
    notices = json.loads(printed)["notices"]
    assert any("the model's own top (--program rom)" in n and "fit the activation memory" in n
               for n in notices), notices


def test_auto_keeps_the_models_own_top_when_the_targets_would_be_slower(tmp_path, capsys):
    """ResNet-8 on systolic8x8 streams its weights, so auto tries the target's top; its fixed split of the
    activation memory would move maps that fit the model's own top through external memory in bands (about
    22% more cycles), so auto keeps the model's own top and says so."""
    model = resnet8()
    onnx.save_model(model, str(tmp_path / "resnet8.onnx"))
    np.savez(tmp_path / "calib.npz", **{model.graph.input[0].name: calibration_data(model, n=4)})
    code, printed, _ = run_cli(capsys, "build", str(tmp_path / "resnet8.onnx"), "--calib", str(tmp_path / "calib.npz"),
                               "--target", "systolic8x8", "-o", str(tmp_path / "out"), "--json")
    assert code == 0
    residency = json.loads((tmp_path / "out" / "program.json").read_text())["residency"]
    assert residency["weights"] == "external" and residency["program"] == "rom"
    notices = json.loads(printed)["notices"]
    assert any("cycles per inference" in n and "--program external" in n for n in notices), notices


def test_the_mapper_bands_a_model_into_the_overlays_split_of_the_activation_memory():
    """The zoo's CIFAR MobileNet on systolic16x16: its own top keeps every map on chip in planes deeper than
    the target's top's split; there some of its rows run in bands, band by band together (runs), their maps
    between them in band buffers: nothing moves through external memory, and the model charges the bands'
    cost."""
    from hlsgen.hw.overlay_memory import memory_split

    graph, target = integer_graph("mobilenet_cifar"), load_target("systolic16x16")
    own, loaded = map_model(graph, target), map_model(graph, target, program="external")
    split = memory_split(target)
    assert not split.fits(own.memory.plane_depth, own.memory.dw_copies, own.memory.dw_depth)
    assert not own.maps_external
    assert split.fits(loaded.memory.plane_depth, loaded.memory.dw_copies, loaded.memory.dw_depth)
    assert any(layer.band for layer in loaded.layers) and not loaded.maps_external
    assert not any(layer.move for layer in loaded.layers) and loaded.cycles > own.cycles
    assert compile_program(loaded, graph).overlay.dw_depth == split.copy_depth


@pytest.mark.parametrize("target", sorted(set(builtin_targets()) - ROM_ONLY))
def test_every_table_entry_fits_the_width_the_estimate_charges(target):
    """hlsgen.hw.resources charges each table at its capacity and a bound on its entries' width."""
    program = overlay_program("window_pools", target)
    bits, depths = entry_bits(program.target), memory_depths(program)
    for table in tables(program, config_fields(program), move_fields(program)):
        if table.name == "weights":  # the weight RAM is buffers.weight, which the estimate charges as such
            assert len(table.entries) <= program.overlay.weight_words
            assert program.overlay.weight_words * table.width <= program.target.buffers.weight.bytes * 8
            continue
        assert table.width <= bits[table.name], table.name
    capacity = program.overlay.capacity
    assert (layer_count(program), move_count(program)) == (capacity.layers, capacity.moves)
    assert all(depths[m] == getattr(capacity, m) for m in ("taps", "params", "lut", "divisors"))


@pytest.mark.slow  # ResNet-18 quantized, then mapped and compiled three times: about 15 s
def test_resnet18_fits_every_targets_top_with_its_image_packed():
    """ResNet-18 (224 px) in the target's top: its RGB image packed a word per pixel (G = 4) so that the 7x7/2
    stem's smallest band, 7 rows of 224 pixels, fits the top's plane 0 (as G = 1, 3 words a pixel, it did not
    on any target), and the placement keeps within the top's uneven planes."""
    from hlsgen.hw.overlay_memory import memory_split

    graph = _quantize(resnet18(), samples=2)
    for name in ("systolic8x8", "systolic16x16", "systolic32x32"):
        target = load_target(name)
        mapping = map_model(graph, target, program="external")
        image = mapping.placement(graph.inputs[0])
        assert mapping.packed_input and (image.banks, image.words) == (4, 224 * 224)
        memory = mapping.memory
        assert memory_split(target).fits(memory.plane_depth, memory.dw_copies, memory.dw_depth)
        stem = next(row for row in compile_program(mapping, graph).compute if row.name.startswith("stem_conv"))
        assert stem.row.tiles.work.reduction == 49 * 4


def test_mobilenet_v2_fits_the_targets_top_with_a_fifth_to_spare():
    """MobileNetV2-0.5 (128 px) needs the most layer rows, moves and parameter words of the architectures, most
    of all on the smallest array (bench/program_choice.py maps it on every target)."""
    graph = _quantize(mobilenet_v2(), samples=2)
    program = compile_program(map_model(graph, load_target("systolic8x8"), program="external"), graph)
    capacity = program.overlay.capacity
    needs = {"layers": len(program.compute), "moves": len(program.moves), "taps": len(program.taps),
             "params": len(program.params)}
    assert needs["layers"] > 256  # what the top held before
    for table, need in needs.items():
        assert need <= 0.8 * getattr(capacity, table), (table, need)


def chain_of_convs(count: int) -> onnx.ModelProto:
    """`count` 1x1 Convs one after another: a layer-table row each."""
    rng = np.random.default_rng(0)
    nodes, weights, x = [], {}, "x"
    for i in range(count):
        weights[f"w{i}"] = rng.standard_normal((4, 4, 1, 1)).astype(np.float32) * 0.5
        nodes.append(onnx.helper.make_node("Conv", [x, f"w{i}"], [f"c{i}"], name=f"conv{i}"))
        x = f"c{i}"
    return make_model(nodes, [tensor_value("x", [1, 4, 2, 2])], [tensor_value(x, [1, 4, 2, 2])], weights)


def test_a_program_longer_than_the_layer_table_is_an_exit_3_refusal():
    """(The CLI prints an OverlayFitError on one line with exit 3: the refusals above.)"""
    target = load_target("systolic8x8")
    rows = capacity(target).layers
    graph = _quantize(chain_of_convs(rows + 1), samples=2)
    mapping = map_model(graph, target, program="external")
    with pytest.raises(OverlayFitError) as refused:
        compile_program(mapping, graph)
    message = str(refused.value)
    assert refused.value.exit_code == 3 and "\n" not in message
    assert f"the model needs {rows + 1:,} layer-table rows" in message and f"holds {rows:,}" in message
    assert message.endswith("build with --program rom")
