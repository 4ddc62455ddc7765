"""Exporters' shape code (Shape -> Gather -> ... -> Reshape/Resize) folds away once the input shape is fixed:
the folded model equals the original in onnxruntime, hlsgen imports it, and its float reference matches."""
import re

import numpy as np
import onnx
import pytest
import yaml
from onnx import TensorProto, helper

from hlsgen.cli import main
from hlsgen.errors import USAGE_EXIT, UnsupportedModelError, UsageError
from hlsgen.frontend import import_model
from hlsgen.frontend.fold import fold_shape_code, fold_with_notices, parse_input_shape
from hlsgen.frontend.onnx_import import load_onnx_proto
from hlsgen.reference import run_graph
from tests.builders import make_model, run_ort, tensor_value

DIGITS = "examples/digits/digits.onnx"
I64 = np.int64


def node(op, inputs, outputs, name=None, **attrs):
    return helper.make_node(op, inputs, outputs, name=name or outputs[0], **attrs)


def flatten_head(shape_nodes, shape_name, input_shape=("N", 2, 4, 4), inits=None, rank=2):
    """Relu -> Reshape(shape computed by `shape_nodes`) -> Relu: the shape code under test in between."""
    nodes = [node("Relu", ["x"], ["r"], "relu0"), *shape_nodes,
             node("Reshape", ["r", shape_name], ["flat"], "reshape"), node("Relu", ["flat"], ["y"], "relu1")]
    output = tensor_value("y", [f"d{i}" for i in range(rank)])  # symbolic, as exporters write it
    return make_model(nodes, [tensor_value("x", list(input_shape))], [output], inits or {})


def view_batch_minus_one():
    """x.view(x.size(0), -1) as torch.onnx writes it."""
    return flatten_head([node("Shape", ["r"], ["s"], "shape"), node("Gather", ["s", "zero"], ["n"], "gather", axis=0),
                         node("Unsqueeze", ["n", "axes0"], ["n1"], "unsqueeze"),
                         node("Concat", ["n1", "minus1"], ["target"], "concat", axis=0)],
                        "target", inits={"zero": I64(0), "axes0": np.array([0], I64), "minus1": np.array([-1], I64)})


def resize_twice(h="H", w="W"):
    """F.interpolate(x, scale_factor=2) with dynamic H, W: sizes = Shape[:2] ++ int(float(Shape[2:]) * 2)."""
    nodes = [node("Conv", ["x", "k"], ["c"], "conv"), node("Shape", ["c"], ["s"], "shape"),
             node("Slice", ["s", "start2", "end4"], ["hw"], "slice_hw"),
             node("Slice", ["s", "start0", "start2"], ["nc"], "slice_nc"),
             node("Cast", ["hw"], ["hwf"], "cast_f", to=TensorProto.FLOAT),
             node("Mul", ["hwf", "two"], ["hw2f"], "mul"),
             node("Cast", ["hw2f"], ["hw2"], "cast_i", to=TensorProto.INT64),
             node("Concat", ["nc", "hw2"], ["sizes"], "concat", axis=0),
             node("Resize", ["c", "", "", "sizes"], ["up"], "resize", mode="nearest"),
             node("Relu", ["up"], ["y"], "relu")]
    inits = {"k": np.random.default_rng(1).standard_normal((4, 3, 3, 3)).astype(np.float32),
             "start0": np.array([0], I64), "start2": np.array([2], I64), "end4": np.array([4], I64),
             "two": np.float32(2.0)}
    return make_model(nodes, [tensor_value("x", ["N", 3, h, w])], [tensor_value("y", None)], inits)


def tile_pattern():
    return flatten_head([node("Shape", ["r"], ["s"], "shape"), node("Slice", ["s", "b0", "b1"], ["n"], "slice"),
                         node("Tile", ["n", "reps"], ["n2"], "tile"),
                         node("Slice", ["n2", "b0", "b1"], ["n1"], "slice2"),
                         node("Concat", ["n1", "minus1"], ["target"], "concat", axis=0)],
                        "target", inits={"b0": np.array([0], I64), "b1": np.array([1], I64),
                                         "reps": np.array([2], I64), "minus1": np.array([-1], I64)})


def expand_constant_of_shape_pattern():
    """ones = ConstantOfShape([rank - 3]) expanded to the batch's length, times the batch, then -1."""
    return flatten_head([node("Shape", ["r"], ["s"], "shape"), node("Size", ["s"], ["rank"], "size"),
                         node("Sub", ["rank", "three"], ["one"], "sub"),
                         node("Unsqueeze", ["one", "axes0"], ["one1"], "unsqueeze"),
                         node("ConstantOfShape", ["one1"], ["ones"], "cos",
                              value=helper.make_tensor("v", TensorProto.INT64, [1], [1])),
                         node("Gather", ["s", "zero1"], ["n"], "gather", axis=0),
                         node("Expand", ["ones", "one1"], ["ones_e"], "expand"),
                         node("Mul", ["ones_e", "n"], ["n1"], "mul"),
                         node("Concat", ["n1", "minus1"], ["target"], "concat", axis=0)],
                        "target", inits={"three": I64(3), "axes0": np.array([0], I64), "zero1": np.array([0], I64),
                                         "minus1": np.array([-1], I64)})


def range_pattern():
    """(N, C, H*W): Gather(Shape, Range(0, Size(x) - 2, 1)) ++ [-1]."""
    return flatten_head([node("Shape", ["r"], ["s"], "shape"), node("Size", ["s"], ["rank"], "size"),
                         node("Sub", ["rank", "two"], ["lim"], "sub"),
                         node("Range", ["zero", "lim", "one"], ["idx"], "range"),
                         node("Gather", ["s", "idx"], ["nc"], "gather", axis=0),
                         node("Concat", ["nc", "minus1"], ["target"], "concat", axis=0)],
                        "target", inits={"zero": I64(0), "one": I64(1), "two": I64(2), "minus1": np.array([-1], I64)},
                        rank=3)


def ceil_floor_pattern(op):
    """(N, op(elements / N / 8), -1): shape arithmetic through float and back."""
    return flatten_head([node("Size", ["r"], ["numel"], "size"), node("Shape", ["r"], ["s"], "shape"),
                         node("Gather", ["s", "zero1"], ["n"], "gather", axis=0),
                         node("Cast", ["numel"], ["numel_f"], "cast_f", to=TensorProto.FLOAT),
                         node("Div", ["numel_f", "eight"], ["q"], "div"),
                         node(op, ["q"], ["qr"], op.lower()),
                         node("Cast", ["qr"], ["qi"], "cast_i", to=TensorProto.INT64),
                         node("Unsqueeze", ["qi", "axes0"], ["q1"], "unsqueeze"),
                         node("Concat", ["n", "q1", "minus1"], ["target"], "concat", axis=0)],
                        "target", input_shape=("N", 2, 4, 5),
                        inits={"zero1": np.array([0], I64), "eight": np.float32(8.0), "axes0": np.array([0], I64),
                               "minus1": np.array([-1], I64)}, rank=3)


def where_equal_pattern():
    """Reshape's 0 written out, as tf2onnx does: Where(Equal(target, 0), Shape[:2], target)."""
    return flatten_head([node("Shape", ["r"], ["s"], "shape", start=0, end=2),
                         node("Equal", ["target0", "zeros"], ["is0"], "equal"),
                         node("Where", ["is0", "s", "target0"], ["target"], "where")],
                        "target", inits={"target0": np.array([0, -1], I64), "zeros": np.array([0, 0], I64)})


PATTERNS = {  # name: (model, --input-shape, the op types folded)
    "view(size(0), -1)": (view_batch_minus_one, {}, {"Shape", "Gather", "Unsqueeze", "Concat"}),
    "resize x2, dynamic H/W": (resize_twice, {"x": (1, 3, 6, 5)}, {"Shape", "Slice", "Cast", "Mul", "Concat"}),
    "tile": (tile_pattern, {}, {"Shape", "Slice", "Tile", "Concat"}),
    "expand, ConstantOfShape": (expand_constant_of_shape_pattern, {},
                                {"Shape", "Size", "Sub", "ConstantOfShape", "Expand", "Mul", "Concat"}),
    "range, size": (range_pattern, {}, {"Shape", "Size", "Range", "Gather", "Concat"}),
    "ceil": (lambda: ceil_floor_pattern("Ceil"), {}, {"Ceil", "Size", "Div"}),
    "floor": (lambda: ceil_floor_pattern("Floor"), {}, {"Floor", "Size", "Div"}),
    "where, equal": (where_equal_pattern, {}, {"Shape", "Equal", "Where"}),
}


def feeds_for(model, shapes):
    value = model.graph.input[0]
    dims = shapes.get(value.name) or [d.dim_value or 1 for d in value.type.tensor_type.shape.dim]
    return {value.name: np.random.default_rng(0).standard_normal(dims).astype(np.float32)}


@pytest.mark.parametrize("case", list(PATTERNS))
def test_folded_model_equals_the_original_in_onnxruntime(case):
    build, shapes, folded_ops = PATTERNS[case]
    model = build()
    folded = fold_shape_code(model, shapes)
    assert {n.op_type for n in folded.graph.node} <= {"Relu", "Reshape", "Conv", "Resize"}
    gone = {n.op_type for n in model.graph.node} - {n.op_type for n in folded.graph.node}
    assert folded_ops - {"Cast", "Mul", "Div", "Sub", "Concat", "Unsqueeze"} <= gone
    feeds = feeds_for(model, shapes)
    for name, expected in run_ort(model, feeds).items():
        assert np.array_equal(run_ort(folded, feeds)[name], expected)
    # the nodes that stay keep their names
    kept = [n.name for n in model.graph.node if n.op_type in {"Relu", "Reshape", "Conv", "Resize"}]
    assert [n.name for n in folded.graph.node] == kept


@pytest.mark.parametrize("case", list(PATTERNS))
def test_hlsgen_imports_the_shape_code_and_matches_onnxruntime(case):
    build, shapes, _ = PATTERNS[case]
    model = build()
    graph = import_model(model, input_shapes=shapes)
    assert any(n.startswith("folded ") and "shape-computing node(s) (" in n for n in graph.notices), graph.notices
    feeds = feeds_for(model, shapes)
    ours = run_graph(graph, feeds)
    for name, expected in run_ort(model, feeds).items():
        assert ours[name].shape == expected.shape
        np.testing.assert_allclose(ours[name], expected, rtol=1e-6, atol=1e-6)


def test_folding_is_deterministic_and_leaves_the_given_model_alone():
    model = resize_twice()
    before = model.SerializeToString()
    first = fold_shape_code(model, {"x": (1, 3, 6, 5)}).SerializeToString()
    assert fold_shape_code(model, {"x": (1, 3, 6, 5)}).SerializeToString() == first
    assert model.SerializeToString() == before


def test_ops_computing_on_real_tensors_survive_untouched():
    """Exp and ReduceSum read the data; TopK's k comes from the shape and folds, TopK itself stays."""
    nodes = [node("Exp", ["x"], ["e"], "exp"), node("ReduceSum", ["e", "axes1"], ["sum"], "reduce", keepdims=1),
             node("Div", ["e", "sum"], ["soft"], "div"), node("Shape", ["soft"], ["s"], "shape"),
             node("Gather", ["s", "one1"], ["k"], "gather", axis=0),
             node("TopK", ["soft", "k"], ["y", "i"], "topk", axis=1)]
    model = make_model(nodes, [tensor_value("x", ["N", 6])], [tensor_value("y", None), tensor_value("i", None)],
                       {"axes1": np.array([1], I64), "one1": np.array([1], I64)})
    folded = fold_shape_code(model)
    assert [(n.name, n.op_type) for n in folded.graph.node] == [("exp", "Exp"), ("reduce", "ReduceSum"),
                                                                ("div", "Div"), ("topk", "TopK")]
    assert [n for n in folded.graph.node if n.name == "exp"][0] == model.graph.node[0]
    feeds = feeds_for(model, {})
    for name, expected in run_ort(model, feeds).items():
        assert np.array_equal(run_ort(folded, feeds)[name], expected)


def test_quantizers_on_constant_weights_are_not_folded():
    """DequantizeLinear of int8 weights computes from constants alone, but hlsgen imports it: it stays."""
    nodes = [node("DequantizeLinear", ["wq", "ws"], ["w"], "dq"), node("Conv", ["x", "w"], ["c"], "conv"),
             *view_batch_minus_one().graph.node[1:5], node("Reshape", ["c", "target"], ["y"], "reshape")]
    nodes[2].input[0] = "c"
    model = make_model(nodes, [tensor_value("x", ["N", 2, 4, 4])], [tensor_value("y", ["a", "b"])],
                       {"wq": np.ones((3, 2, 1, 1), np.int8), "ws": np.float32(0.5), "zero": I64(0),
                        "axes0": np.array([0], I64), "minus1": np.array([-1], I64)})
    folded = fold_shape_code(model)
    assert [n.name for n in folded.graph.node] == ["dq", "conv", "reshape"]


def test_a_model_that_imports_today_is_unchanged():
    model = load_onnx_proto(DIGITS)
    assert fold_with_notices(model)[0] is model  # nothing to fold: not even copied
    plain = import_model(load_onnx_proto(DIGITS))
    pinned = import_model(fold_shape_code(load_onnx_proto(DIGITS)))
    assert list(pinned.nodes) == list(plain.nodes) and pinned.origins == plain.origins
    assert {k: v.shape for k, v in pinned.tensors.items()} == {k: v.shape for k, v in plain.tensors.items()}
    assert pinned.constants.keys() == plain.constants.keys()
    assert not any("folded" in n for n in plain.notices)


def test_a_shape_from_data_is_refused_naming_the_node():
    nodes = [node("NonZero", ["x"], ["nz"], "nonzero"), node("Shape", ["nz"], ["s"], "shape"),
             node("Gather", ["s", "one1"], ["count"], "gather", axis=0),
             node("Concat", ["one1", "count"], ["target"], "concat", axis=0),
             node("Cast", ["nz"], ["nzf"], "cast", to=TensorProto.FLOAT),
             node("Reshape", ["nzf", "target"], ["y"], "reshape")]
    model = make_model(nodes, [tensor_value("x", [1, 6])], [tensor_value("y", ["a", "b"])],
                       {"one1": np.array([1], I64)})
    with pytest.raises(UnsupportedModelError, match=r"^node 'reshape' \(Reshape\): its shape input 'target' depends "
                                                    r"on the data: the size of NonZero 'nonzero''s output"):
        import_model(model)


@pytest.mark.parametrize("name, shape", [("fpn_detector", (1, 3, 64, 96)), ("ssd_uint8_nhwc", None)])
def test_real_pytorch_exports_fold_and_import(name, shape):
    """tests/data/exporters: an FPN whose upsampling sizes and head reshapes come from Shape, dynamic H/W;
    an SSD head reshaped with x.view(x.size(0), -1, k)."""
    model = load_onnx_proto(f"tests/data/exporters/{name}.onnx")
    value = model.graph.input[0]
    dims = shape or tuple(d.dim_value or 1 for d in value.type.tensor_type.shape.dim)
    shapes = {value.name: dims} if shape else {}
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(dims) * 50).astype(helper.tensor_dtype_to_np_dtype(value.type.tensor_type.elem_type))
    folded = fold_shape_code(model, shapes)
    assert not {"Shape", "Gather"} & {n.op_type for n in folded.graph.node}
    graph = import_model(model, input_shapes=shapes)
    ours = run_graph(graph, {value.name: x})
    for out, expected in run_ort(model, {value.name: x}).items():
        scale = float(np.abs(expected).max())
        np.testing.assert_allclose(run_ort(folded, {value.name: x})[out], expected, rtol=0, atol=1e-6 * scale)
        np.testing.assert_allclose(ours[out], expected, rtol=0, atol=1e-6 * scale)


# ---- pinning the inputs -----------------------------------------------------------------------------------
def test_a_dynamic_dim_without_a_shape_tells_how_to_give_one():
    with pytest.raises(UnsupportedModelError, match=r"input 'x' has a dynamic dimension 'H' at axis 2.*"
                                                    r"--input-shape x:1x3xHxW"):
        fold_shape_code(resize_twice())


@pytest.mark.parametrize("shapes, fragment", [
    ({"y": (1, 3, 6, 5)}, "names 'y', which is not an input of the model (its inputs: x)"),
    ({"x": (1, 3, 6)}, "has 3 dimension(s) but input 'x' has 4"),
    ({"x": (1, 4, 6, 5)}, "sets axis 1 to 4 but the model fixes it at 3"),
])
def test_input_shapes_that_do_not_fit_are_usage_errors(shapes, fragment):
    with pytest.raises(UsageError, match=re.escape(fragment)):
        fold_shape_code(resize_twice(), shapes)


@pytest.mark.parametrize("text", ["x", "x:", "x:1x3x", "x:1,3,8,8", "x:0x3x8x8", ":1x3", "x:1x-3"])
def test_malformed_input_shapes_are_usage_errors(text):
    with pytest.raises(UsageError, match="expected NAME:DIMS"):
        parse_input_shape(text)


def test_an_input_name_may_hold_a_colon():
    assert parse_input_shape("input_1:0:1x3x480x640") == ("input_1:0", (1, 3, 480, 640))


# ---- the command line -------------------------------------------------------------------------------------
def run_cli(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_line_error(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("notice:")]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    return lines[0]


@pytest.fixture
def dynamic_model(tmp_path):
    path = tmp_path / "up.onnx"
    onnx.save(resize_twice(), str(path))
    return str(path)


def test_cli_dynamic_axis_without_input_shape_is_exit_8(capsys, dynamic_model):
    code, _, err = run_cli(capsys, "inspect", dynamic_model)
    assert code == UnsupportedModelError.exit_code
    line = one_line_error(err)
    assert "'x'" in line and "axis 2" in line and "--input-shape x:" in line


def test_cli_inspect_and_run_with_input_shape(capsys, dynamic_model, tmp_path):
    code, out, err = run_cli(capsys, "inspect", dynamic_model, "--input-shape", "x:1x3x6x5")
    assert code == 0, err
    assert "folded 7 shape-computing node(s)" in err and "1x4x8x6" in out  # Conv 6x5 -> 4x3, then twice
    feeds = feeds_for(resize_twice(), {"x": (1, 3, 6, 5)})
    np.savez(tmp_path / "in.npz", **feeds)
    code, _, err = run_cli(capsys, "run", dynamic_model, "--input-shape", "x:1x3x6x5", "--inputs",
                           str(tmp_path / "in.npz"), "-o", str(tmp_path / "out.npz"))
    assert code == 0, err
    expected = run_ort(resize_twice(), feeds)["y"]
    np.testing.assert_allclose(np.load(tmp_path / "out.npz")["y"], expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape, fragment", [
    ("pixels:1x3x6x5", "names 'pixels'"),
    ("x:1x4x6x5", "sets axis 1 to 4"),
    ("x:1x3x6", "has 3 dimension(s)"),
    ("x=1x3x6x5", "expected NAME:DIMS"),
])
def test_cli_bad_input_shapes_are_exit_2_and_write_nothing(capsys, dynamic_model, tmp_path, shape, fragment):
    for argv in (["inspect", dynamic_model], ["build", dynamic_model, "-o", str(tmp_path / "out"), "-q"]):
        code, _, err = run_cli(capsys, *argv, "--input-shape", shape)
        assert code == USAGE_EXIT
        assert fragment in one_line_error(err)
    assert not (tmp_path / "out").exists()


def test_config_input_shape_is_read_and_written_back(capsys, dynamic_model, tmp_path):
    config = tmp_path / "build.yaml"
    config.write_text("input_shape: {x: 1x3x6x5}\nbits: 8\n")
    code, _, err = run_cli(capsys, "build", dynamic_model, "--config", str(config), "-o", str(tmp_path / "out"),
                           "--input-range", "-1,1", "-q")
    assert code == 0, err
    resolved = yaml.safe_load((tmp_path / "out" / "config.yaml").read_text())
    assert resolved["input_shape"] == {"x": "1x3x6x5"}
    config.write_text("input_shape: {x: [1, 3, 6]}\n")
    code, _, err = run_cli(capsys, "build", dynamic_model, "--config", str(config), "-o", str(tmp_path / "o2"), "-q")
    assert code == USAGE_EXIT and "has 3 dimension(s)" in one_line_error(err)
    config.write_text("input_shape: {x: 1x3xHx5}\n")
    code, _, err = run_cli(capsys, "build", dynamic_model, "--config", str(config), "-o", str(tmp_path / "o2"), "-q")
    assert code == USAGE_EXIT and "input_shape.x must be a shape" in one_line_error(err)
    assert not (tmp_path / "o2").exists()
