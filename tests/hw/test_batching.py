"""Throughput mode (--batch N): the head runs image by image, the Dense tail once for the N images with each
weight tile loaded once; cycles by docs/hardware.md's formula, the report's images per second, the memory
the batch holds, and the build's options."""
import json
import re

import pytest

from hlsgen.errors import MappingError, UsageError
from hlsgen.hw import load_target, map_model
from hlsgen.hw.cycles import inference_cycles, weight_stationary_cycles
from hlsgen.hw.program_io import read_program, write_program
from hlsgen.hw.queues import schedule
from hlsgen.hw.report import report_json
from hlsgen.hw.rows import tensor_bytes
from hlsgen.hw.target import Buffer
from tests.cli.test_build import CALIB, MODEL
from tests.cli.test_errors import assert_one_line_error, run_cli
from tests.hw.models import integer_graph, target_with


def dense_utilization(mapping) -> dict:
    return {row["name"]: row["utilization"] for row in report_json(mapping)["layers"] if row["kind"] == "dense"}


def test_batch_1_is_latency_mode_unchanged():
    graph, target = integer_graph("digits"), target_with()
    default, one = map_model(graph, target), map_model(graph, target, batch=1)
    assert one == default and one.batching is None and one.images == 1
    assert report_json(one)["total"]["batch"] == 1


@pytest.mark.parametrize("name, rows", [("systolic16x16", 16), ("systolic8x8", 8)])
@pytest.mark.parametrize("n", [8, 32])
def test_the_dense_tail_streams_n_vectors_through_each_weight_tile(name, rows, n):
    graph, target = integer_graph("digits"), target_with(name)
    single, batched = map_model(graph, target), map_model(graph, target, batch=n)
    tail = batched.batching.tail
    assert [row.name for row in batched.layers[tail:]] == ["fc1", "fc2"]  # the convolutions run image by image
    assert single.stream is not None and batched.stream is None  # a batch's first row waits for each image
    first, conv1 = single.layers[0], batched.layers[0]
    assert conv1.tiles.work == first.tiles.work and conv1.tiles.spatial_tile > first.tiles.spatial_tile
    for one, row in zip(single.layers[1:tail], batched.layers[1:tail]):
        assert (row.images, row.tiles, row.cycles, row.macs) == (1, one.tiles, one.cycles, one.macs)
    for one, row in zip(single.layers[tail:], batched.layers[tail:]):
        assert row.images == n and row.tiles.work.pixels == n and row.macs == n * one.macs
        assert row.tiles.row_tiles == one.tiles.row_tiles and row.tiles.col_tiles == one.tiles.col_tiles
        assert row.cycles == weight_stationary_cycles(rows, target.array.cols, 1, row.tiles.row_tiles,
                                                      row.tiles.col_tiles, [n], None, 0)
    head = max(end for _, end in schedule(list(batched.layers[:tail])))
    assert batched.cycles == inference_cycles(n * single.input_elements,
                                              [n * head + sum(r.cycles for r in batched.layers[tail:])],
                                              n * single.output_elements)
    assert batched.batching.held == (batched.layers[tail].inputs[0],)
    assert batched.batching.held_bytes == n * tensor_bytes(graph, batched.layers[tail].inputs[0])
    assert batched.cycles / n < single.cycles


def test_fc_utilization_and_images_per_second_rise_with_the_batch():
    graph, target = integer_graph("digits"), target_with()
    reports = {n: report_json(map_model(graph, target, batch=n)) for n in (1, 8, 32)}
    fc1 = [dense_utilization(map_model(graph, target, batch=n))["fc1"] for n in (1, 8, 32)]
    assert fc1[0] < 0.07 and fc1[0] < fc1[1] < fc1[2] and fc1[2] > 0.95  # 6% of the array at batch 1
    rate = [reports[n]["total"]["images_per_s"] for n in (1, 8, 32)]
    assert rate[0] < rate[1] < rate[2]
    for n, report in reports.items():
        total = report["total"]
        assert total["batch"] == n and total["clock"] == {"mhz": 200, "source": "target clock_mhz"}
        assert total["images_per_s"] == pytest.approx(n * 200e6 / total["cycles"], rel=1e-6)
        assert total["latency_us"] == pytest.approx(total["cycles"] / 200, abs=1e-4)
        assert total["cycles_per_image"] == pytest.approx(total["cycles"] / n, abs=1e-4)
        runs = {row["name"]: (row["runs"], row["images"]) for row in report["layers"]}
        assert runs == {"conv1+pool1": (n, 1), "conv2+pool2": (n, 1), "fc1": (1, n), "fc2": (1, n)}
        assert total["macs"] == sum(row["macs"] for row in report["layers"])
        assert total["macs"] == n * reports[1]["total"]["macs"]


def test_weights_from_external_memory_load_once_per_batch():
    graph, target = integer_graph("digits"), target_with(buffers__weight=Buffer(16, 16))
    single, batched = map_model(graph, target), map_model(graph, target, batch=8)
    assert batched.weights_external
    fc1 = [r for r in batched.layers if r.name == "fc1"][0]
    assert fc1.transfers == [r for r in single.layers if r.name == "fc1"][0].transfers  # one load for 8 images
    weights = {n: report_json(m)["total"]["dram_bytes_by_what"]["weights"] for n, m in ((1, single), (8, batched))}
    assert weights[1] < weights[8] < 8 * weights[1]  # the convolutions' weights per image, the Dense's once


def test_a_model_without_a_dense_tail_runs_every_row_per_image():
    graph, target = integer_graph("vector_ops"), target_with()
    single = map_model(graph, target)
    batched = map_model(graph, target, batch=4)
    tail = batched.batching.tail
    assert [r.name for r in batched.layers[tail:]] == ["fc_1"]
    no_dense = integer_graph("mobilenet")
    conv_only = map_model(no_dense, target, batch=4)
    assert conv_only.batching.tail <= len(conv_only.layers)
    assert single.images == 1 and batched.images == 4


def test_a_batch_whose_vectors_do_not_fit_names_the_batch_and_one_that_does():
    graph, target = integer_graph("digits"), target_with()
    with pytest.raises(MappingError, match=r"--batch 4096: .*activation memory.* use --batch \d+ or less") as info:
        map_model(graph, target, batch=4096)
    assert info.value.exit_code == 3 and "\n" not in str(info.value)
    fits = int(re.search(r"use --batch (\d+)", str(info.value)).group(1))
    assert 32 < fits < 4096
    map_model(graph, target, batch=fits)  # the suggested batch maps, one more does not
    with pytest.raises(MappingError):
        map_model(graph, target, batch=fits + 1)


def test_the_batched_program_reads_back_equal(tmp_path):
    graph, target = integer_graph("digits"), target_with()
    mapping = map_model(graph, target, batch=8)
    write_program(mapping, tmp_path)
    again = read_program(tmp_path, graph, target)
    assert again == mapping and again.cycles == mapping.cycles
    assert json.loads((tmp_path / "program.json").read_text())["batch"] == {
        "images": 8, "tail": 2, "held": [mapping.layers[2].inputs[0]], "held_bytes": mapping.batching.held_bytes}


def test_the_held_maps_stack_n_images_and_live_through_the_head():
    graph, target = integer_graph("digits"), target_with()
    mapping = map_model(graph, target, batch=8)
    tail = mapping.batching.tail
    held = mapping.placement(mapping.batching.held[0])
    assert held.images == 8 and held.height == 8 * held.image_height and held.words == 8 * map_model(
        graph, target).placement(held.name).words
    for m in mapping.memory.maps:  # every map of the head shares no word with the held one
        if m.name != held.name and m.birth < tail and m.plane == held.plane:
            assert m.base + m.words <= held.base or held.base + held.words <= m.base, m.name
    outputs = [mapping.placement(t) for t in graph.outputs]
    assert all(m.images == 8 for m in outputs)


def test_build_batch_verifies_the_cpp_and_writes_the_batched_rtl(capsys, tmp_path):
    out = tmp_path / "b"
    code, stdout, _ = run_cli(capsys, "build", MODEL, "--calib", CALIB, "--target", "systolic8x8", "--batch", "8",
                              "--verify", "csim", "-o", str(out))
    assert code == 0 and "per run of 8 images" in stdout and "verified csim: bit-exact" in stdout
    report = json.loads((out / "report.json").read_text())
    assert report["total"]["batch"] == 8 and "OUT/hls and OUT/rtl run 8 images per call" in report["designs"]["batch"]
    one = map_model(integer_graph("digits"), load_target("systolic8x8"))  # the same model at batch 1
    assert report["total"]["latency_mode"]["cycles"] == one.cycles < report["total"]["cycles"] / 4
    assert report["total"]["latency_mode"]["images_per_s"] == round(150e6 / one.cycles, 4)
    assert json.loads((out / "program.json").read_text())["batch"]["images"] == 8
    assert "batch: 8" in (out / "config.yaml").read_text()
    code, stdout, _ = run_cli(capsys, "report", str(out))
    assert code == 0 and "per batch of 8 images" in stdout
    code, stdout, _ = run_cli(capsys, "run", str(out), "--inputs", CALIB, "-o", str(tmp_path / "y.npz"))
    assert code == 0 and "256 sample(s)" in stdout  # the integer reference takes any count: it is per image
    top = (out / "rtl" / "digits_top.v").read_text()  # simulated in sim/test_model_batch.py
    assert "a run takes 8 images in turn" in top and "writer_base" in top


@pytest.mark.parametrize("options, fragment", [(("--program", "external"), "--batch 4 with --program external"),
                                               (("--hls-design", "dataflow"), "only the overlay design runs a batch")])
def test_build_batch_with_what_does_not_run_a_batch_fails_up_front(capsys, tmp_path, options, fragment):
    code, _, err = run_cli(capsys, "build", MODEL, "--calib", CALIB, "--batch", "4", *options,
                           "-o", str(tmp_path / "b"))
    assert code == UsageError.exit_code and not (tmp_path / "b").exists()
    assert_one_line_error(err, fragment)


@pytest.mark.parametrize("text", ["batch: 0\n", "batch: true\n", "batch: 2.5\n", "batch: 100000\n"])
def test_a_bad_batch_in_the_config_is_a_usage_error(capsys, tmp_path, text):
    config = tmp_path / "c.yaml"
    config.write_text(text)
    code, _, err = run_cli(capsys, "build", MODEL, "--calib", CALIB, "--config", str(config), "-o", str(tmp_path / "b"))
    assert code == UsageError.exit_code
    assert_one_line_error(err, "batch must be a whole number of images")


@pytest.mark.parametrize("kib, fragment", [(4, "keeps feature maps in external memory even at batch 1"),
                                           (6, "do not all fit the activation memory with the batch's vectors")])
def test_a_batch_needs_every_map_on_chip(kib, fragment):
    graph, target = integer_graph("digits"), target_with(buffers__input=Buffer(kib, 16))
    with pytest.raises(MappingError, match="--batch 4: ") as info:
        map_model(graph, target, batch=4)
    assert fragment in str(info.value) and info.value.exit_code == 3
    if kib == 6:  # the largest batch that fits, named
        assert "use --batch 2 or less" in str(info.value) and map_model(graph, target, batch=2).images == 2
