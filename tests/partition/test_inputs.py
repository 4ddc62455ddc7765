"""Inputs as exporters ship them (hlsgen.frontend.inputs): uint8/int8 images, NHWC or NCHW, cast to float,
normalized and quantized by the model itself, all absorbed into the input: the accelerator's first layer reads
the model's input, the host's only step is the input quantization, and that step is ONNX's own arithmetic."""
import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from hlsgen.build_folder import load_build
from hlsgen.cli import main
from hlsgen.frontend import import_model
from hlsgen.graph_io import load_graph, save_graph
from hlsgen.npz_io import match_inputs
from hlsgen.partition.whole import WholeModel
from hlsgen.quant.report import sqnr_db
from hlsgen.reference import run_graph
from tests.builders import make_model, run_ort, tensor_value

SIZE = 12


def _convs(x: str, channels: int, seed: int, tail: str | None = None):
    """x -> conv 3x3 (8) -> relu -> conv 3x3 (4) -> y [-> Exp on the host]."""
    rng = np.random.default_rng(seed)
    inits = {"W1": (rng.standard_normal((8, channels, 3, 3)) * 0.3).astype(np.float32),
             "B1": (rng.standard_normal(8) * 0.1).astype(np.float32),
             "W2": (rng.standard_normal((4, 8, 3, 3)) * 0.3).astype(np.float32)}
    nodes = [helper.make_node("Conv", [x, "W1", "B1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", "W2"], ["c2" if tail else "y"], pads=[1, 1, 1, 1], name="conv2")]
    if tail == "exp":
        nodes.append(helper.make_node("Exp", ["c2"], ["y"], name="exp"))
    return nodes, inits


def nhwc_uint8(tail: str | None = None) -> onnx.ModelProto:
    """uint8 NHWC -> Transpose -> Cast -> Sub 127.5 -> Div 127.5 -> QuantizeLinear(1/128, int8) -> DQ -> convs."""
    convs, inits = _convs("dq", 3, 0, tail)
    inits |= {"mean": np.float32(127.5), "std": np.float32(127.5), "s": np.float32(1 / 128), "z": np.int8(0)}
    nodes = [helper.make_node("Transpose", ["image"], ["t"], perm=[0, 3, 1, 2], name="nchw"),
             helper.make_node("Cast", ["t"], ["f"], to=TensorProto.FLOAT, name="cast"),
             helper.make_node("Sub", ["f", "mean"], ["centred"], name="sub"),
             helper.make_node("Div", ["centred", "std"], ["normal"], name="div"),
             helper.make_node("QuantizeLinear", ["normal", "s", "z"], ["q"], name="quant"),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["dq"], name="dequant"), *convs]
    return make_model(nodes, [tensor_value("image", [1, SIZE, SIZE, 3], TensorProto.UINT8)], [tensor_value("y", None)],
                      inits, name="nhwc_uint8")


def int8_scaled() -> onnx.ModelProto:
    """int8 NCHW -> Cast -> Mul 0.02 -> QuantizeLinear(0.04, int8, zero point 3) -> DQ -> convs."""
    convs, inits = _convs("dq", 2, 1)
    inits |= {"k": np.float32(0.02), "s": np.float32(0.04), "z": np.int8(3)}
    nodes = [helper.make_node("Cast", ["image"], ["f"], to=TensorProto.FLOAT, name="cast"),
             helper.make_node("Mul", ["k", "f"], ["scaled"], name="mul"),
             helper.make_node("QuantizeLinear", ["scaled", "s", "z"], ["q"], name="quant"),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["dq"], name="dequant"), *convs]
    return make_model(nodes, [tensor_value("image", [1, 2, SIZE, SIZE], TensorProto.INT8)], [tensor_value("y", None)],
                      inits, name="int8_scaled")


def nchw_uint8() -> onnx.ModelProto:
    """Plain uint8 NCHW -> Cast -> convs: the integers are the input."""
    convs, inits = _convs("f", 3, 2)
    nodes = [helper.make_node("Cast", ["image"], ["f"], to=TensorProto.FLOAT, name="cast"), *convs]
    return make_model(nodes, [tensor_value("image", [1, 3, SIZE, SIZE], TensorProto.UINT8)], [tensor_value("y", None)],
                      inits, name="nchw_uint8")


MODELS = {"nhwc_uint8": (nhwc_uint8, np.uint8, (SIZE, SIZE, 3)), "int8_scaled": (int8_scaled, np.int8, (2, SIZE, SIZE)),
          "nchw_uint8": (nchw_uint8, np.uint8, (3, SIZE, SIZE))}


def _images(dtype, shape, count: int, seed: int) -> np.ndarray:
    limits = np.iinfo(dtype)
    return np.random.default_rng(seed).integers(limits.min, limits.max, (count, *shape), endpoint=True).astype(dtype)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Each model built with --verify csim; its folder, ONNX model and test images."""
    folder = tmp_path_factory.mktemp("inputs")
    result = {}
    for name, (make, dtype, shape) in MODELS.items():
        model = make()
        onnx.save(model, folder / f"{name}.onnx")
        np.savez(folder / f"{name}_calib.npz", image=_images(dtype, shape, 24, 0))
        np.savez(folder / f"{name}_test.npz", image=_images(dtype, shape, 4, 1))
        assert main(["build", str(folder / f"{name}.onnx"), "--calib", str(folder / f"{name}_calib.npz"), "-o",
                     str(folder / name), "--verify", "csim", "-q"]) == 0
        result[name] = (folder / name, model, folder / f"{name}_test.npz")
    return result


@pytest.mark.parametrize("name", list(MODELS))
def test_the_input_is_the_first_layers_input_on_the_accelerator(built, name):
    out, model, _ = built[name]
    report = json.loads((out / "report.json").read_text())
    assert report["partition"]["host_nodes"] == []
    assert report["verification"]["csim"]["passed"]  # the C++ bit-exact with the integer reference
    quant = json.loads((out / "quant.json").read_text())
    assert [layer["name"] for layer in quant["layers"]] == ["conv1", "conv2"]  # no layer for the preprocessing
    grid = quant["tensors"]["image"]
    if name == "nhwc_uint8":
        assert (grid["scale"], grid["zero_point"], grid["bits"], grid["signed"]) == (1 / 128, 0, 8, True)
    elif name == "int8_scaled":
        assert (grid["scale"], grid["zero_point"], grid["signed"]) == (pytest.approx(0.04), 3, True)
    else:
        assert (grid["scale"], grid["zero_point"], grid["bits"], grid["signed"]) == (1.0, 0, 8, False)
    program = json.loads((out / "program.json").read_text())
    assert "Transpose" not in json.dumps(program)
    # the stored vectors and the QDQ export take the model's input as its file declares it
    _, dtype, shape = MODELS[name]
    stored = dict(np.load(out / "verify" / "inputs.npz"))["image"]
    assert stored.dtype == dtype and stored.shape[1:] == shape
    qdq = onnx.load(str(out / "model_qdq.onnx"))
    declared = qdq.graph.input[0].type.tensor_type
    assert declared.elem_type == onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    assert [d.dim_value for d in declared.shape.dim][1:] == list(shape)
    ours = load_build(out).run({"image": stored[:2]})["y"]
    theirs = np.concatenate([run_ort(qdq, {"image": x[None]}, fused=False)["y"] for x in stored[:2]])
    assert sqnr_db(ours, theirs) >= 30


@pytest.mark.parametrize("name", list(MODELS))
def test_the_input_quantization_is_onnxs_own_arithmetic(built, name):
    out, model, test = built[name]
    quantized = load_build(out)
    images = dict(np.load(test))["image"]
    ints = quantized.quantize_inputs({"image": images})["image"]
    if name == "nchw_uint8":
        expected = images.astype(np.int64)
    else:  # the model's QuantizeLinear output, by onnxruntime
        probe = onnx.ModelProto.FromString(model.SerializeToString())
        probe.graph.output.append(onnx.ValueInfoProto(name="q"))
        expected = np.concatenate([run_ort(probe, {"image": x[None]})["q"] for x in images])
    assert np.array_equal(ints, expected)
    # every value the type holds, through the NHWC model's preprocessing
    if name == "nhwc_uint8":
        every = np.arange(SIZE * SIZE * 3).reshape(1, SIZE, SIZE, 3) % 256
        probe = onnx.ModelProto.FromString(model.SerializeToString())
        probe.graph.output.append(onnx.ValueInfoProto(name="q"))
        assert np.array_equal(quantized.quantize_inputs({"image": every.astype(np.uint8)})["image"],
                              run_ort(probe, {"image": every.astype(np.uint8)})["q"])


@pytest.mark.parametrize("name", list(MODELS))
def test_the_whole_model_follows_onnxruntime_and_hlsgen_run_takes_the_files_arrays(built, name, tmp_path):
    out, model, test = built[name]
    images = dict(np.load(test))["image"]
    assert main(["run", str(out), "--inputs", str(test), "-o", str(tmp_path / "y.npz")]) == 0
    got = dict(np.load(tmp_path / "y.npz"))["y"]
    expected = np.concatenate([run_ort(model, {"image": x[None]})["y"] for x in images])
    assert got.shape == expected.shape
    assert sqnr_db(expected, got) >= 30


def test_a_host_op_after_the_layers_keeps_the_models_input_on_the_first_segment(tmp_path):
    model = nhwc_uint8(tail="exp")
    onnx.save(model, tmp_path / "m.onnx")
    np.savez(tmp_path / "calib.npz", image=_images(np.uint8, (SIZE, SIZE, 3), 16, 0))
    assert main(["build", str(tmp_path / "m.onnx"), "--calib", str(tmp_path / "calib.npz"), "-o", str(tmp_path / "b"),
                 "-q"]) == 0
    partition = json.loads((tmp_path / "b" / "report.json").read_text())["partition"]
    assert partition["host_nodes"] == ["exp"]
    first = partition["stages"][0]
    assert first["side"] == "accelerator" and first["inputs"] == ["image"]
    assert {"nchw", "cast", "sub", "div", "quant", "dequant", "conv1"} <= set(first["nodes"])
    images = _images(np.uint8, (SIZE, SIZE, 3), 3, 5)
    got = WholeModel(tmp_path / "b").run({"image": images}, backend="csim")["y"]
    expected = np.concatenate([run_ort(model, {"image": x[None]})["y"] for x in images])
    assert sqnr_db(expected, got) >= 30


def test_the_npz_convention_takes_the_files_arrays_and_the_graphs():
    graph = import_model(nhwc_uint8())
    steps = graph.input_steps["image"]
    assert (steps.shape, steps.dtype, steps.perm, steps.cast) == ((1, SIZE, SIZE, 3), "uint8", (0, 3, 1, 2), True)
    assert [s.op for s in steps.ops] == ["Sub", "Div"] and steps.nodes == ("nchw", "cast", "sub", "div")
    assert graph.tensors["image"].shape == (1, 3, SIZE, SIZE) and graph.consumers("image")[0].op == "QuantizeLinear"
    images = _images(np.uint8, (SIZE, SIZE, 3), 2, 0)
    fed = match_inputs(graph, {"image": images})["image"]
    assert fed.dtype == np.float32 and fed.shape == (2, 3, SIZE, SIZE)
    np.testing.assert_array_equal(fed, (images.transpose(0, 3, 1, 2).astype(np.float32) - 127.5) / np.float32(127.5))
    assert match_inputs(graph, {"image": fed})["image"] is not None  # the graph's own form, as it is
    np.testing.assert_array_equal(run_graph(graph, {"image": images[:1]})["y"], run_graph(graph, {"image": fed[:1]})["y"])
    with pytest.raises(Exception, match=r"expected \(N, 12, 12, 3\) uint8"):
        match_inputs(graph, {"image": images.astype(np.float32)})
    with pytest.raises(Exception, match="outside the uint8"):
        match_inputs(graph, {"image": images.astype(np.int64) + 300})


def test_the_steps_survive_the_build_folder(tmp_path):
    graph = import_model(int8_scaled())
    save_graph(graph, tmp_path / "g")
    assert load_graph(tmp_path / "g").input_steps == graph.input_steps


def test_what_is_not_preprocessing_stays_in_the_graph():
    # a float input's arithmetic, and a Cast whose integers also feed another node
    convs, inits = _convs("f", 3, 0)
    inits |= {"k": np.float32(2.0)}
    model = make_model([helper.make_node("Mul", ["image", "k"], ["f"], name="mul"), *convs],
                       [tensor_value("image", [1, 3, SIZE, SIZE])], [tensor_value("y", None)], inits)
    assert not import_model(model).input_steps
    convs, inits = _convs("f", 3, 0)
    model = make_model([helper.make_node("Cast", ["image"], ["f"], to=TensorProto.FLOAT, name="cast"), *convs,
                        helper.make_node("Cast", ["image"], ["i"], to=TensorProto.INT32, name="other")],
                       [tensor_value("image", [1, 3, SIZE, SIZE], TensorProto.UINT8)],
                       [tensor_value("y", None), tensor_value("i", None)], inits)
    assert not import_model(model).input_steps


def test_the_ssd_exports_first_segment_reads_the_models_uint8_nhwc_image(tmp_path):
    data = Path(__file__).resolve().parents[1] / "data" / "exporters"
    assert main(["build", str(data / "ssd_uint8_nhwc.onnx"), "--calib", str(data / "ssd_uint8_nhwc_calib.npz"), "-o",
                 str(tmp_path / "ssd"), "-q"]) == 0
    report = json.loads((tmp_path / "ssd" / "report.json").read_text())
    first = report["partition"]["stages"][0]
    assert first["side"] == "accelerator" and first["inputs"] == ["image"]
    assert not {"/Transpose", "/Cast"} & set(report["partition"]["host_nodes"])
    assert len(report["partition"]["segments"]) == 1
    quant = json.loads((tmp_path / "ssd" / "segments" / "segment0" / "quant.json").read_text())
    assert quant["inputs"] == ["image"] and quant["tensors"]["image"]["scale"] == 1 / 128
    assert not {"/Sub", "/Div"} & {layer["name"] for layer in quant["layers"]}  # no layers for the preprocessing
    assert min(report["quality"]["sqnr_db"].values()) >= 30
