"""The exporter-made models in tests/data/exporters/ (made by its make_test_data.py with PyTorch's
TorchScript ONNX exporter; torch is never needed here): each file loads, passes onnx.checker, runs in
onnxruntime on its calibration samples, and has the patterns its README says it covers."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, numpy_helper

DATA = Path(__file__).resolve().parents[1] / "data" / "exporters"
NAMES = ["fpn_detector", "focus_silu", "shufflenet_block", "conv1d_audio", "espcn_sr", "ssd_uint8_nhwc",
         "cls_head_decode", "unet_decoder", "se_mobilenetv3", "fpn_bilinear", "dwsep_audio1d"]


def load(name: str) -> onnx.ModelProto:
    return onnx.load(str(DATA / f"{name}.onnx"))


def ops(model: onnx.ModelProto) -> Counter:
    return Counter(n.op_type for n in model.graph.node)


def dims(value: onnx.ValueInfoProto) -> list[int | str]:
    return [d.dim_param or d.dim_value for d in value.type.tensor_type.shape.dim]


def producers(model: onnx.ModelProto) -> dict[str, onnx.NodeProto]:
    return {out: n for n in model.graph.node for out in n.output}


def upstream_ops(model: onnx.ModelProto, tensor: str) -> set[str]:
    """Op types of every node that the tensor depends on."""
    made_by, seen, todo, found = producers(model), set(), [tensor], set()
    while todo:
        t = todo.pop()
        if t in seen or t not in made_by:
            continue
        seen.add(t)
        node = made_by[t]
        found.add(node.op_type)
        todo.extend(i for i in node.input if i)
    return found


def session(name: str) -> ort.InferenceSession:
    return ort.InferenceSession(str(DATA / f"{name}.onnx"), providers=["CPUExecutionProvider"])


def calib(name: str) -> dict[str, np.ndarray]:
    with np.load(DATA / f"{name}_calib.npz") as f:
        return {k: f[k] for k in f.files}


def test_every_model_is_listed():
    assert sorted(p.stem for p in DATA.glob("*.onnx")) == sorted(NAMES)
    assert sorted(p.name for p in DATA.glob("*.npz")) == sorted(f"{n}_calib.npz" for n in NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_file_is_a_valid_small_pytorch_export(name):
    path = DATA / f"{name}.onnx"
    assert path.stat().st_size < 200 * 1024
    model = load(name)
    onnx.checker.check_model(model, full_check=True)
    assert model.producer_name == "pytorch"
    assert model.ir_version <= 10
    assert [o.domain for o in model.opset_import] == [""] and model.opset_import[0].version == 13


@pytest.mark.parametrize("name", NAMES)
def test_runs_in_onnxruntime_on_its_calibration_samples(name):
    model, sess, data = load(name), session(name), calib(name)
    inputs = [i.name for i in model.graph.input]
    assert list(data) == inputs
    batch = data[inputs[0]]
    assert batch.shape[0] == 8
    for i in range(batch.shape[0]):
        outs = sess.run(None, {k: v[i:i + 1] for k, v in data.items()})
        assert len(outs) == len(model.graph.output)
        for out in outs:
            if out.dtype.kind == "f":
                assert np.isfinite(out).all()


def test_calibration_samples_are_realistic():
    for name in ("fpn_detector", "focus_silu", "shufflenet_block", "espcn_sr", "cls_head_decode"):
        x = next(iter(calib(name).values()))
        assert x.dtype == np.float32 and x.min() >= 0 and x.max() <= 1 and x.std() > 0.05
    iq = calib("conv1d_audio")["iq"]
    assert iq.shape == (8, 2, 512) and iq.dtype == np.float32 and 0.05 < np.abs(iq).mean() < 2
    img = calib("ssd_uint8_nhwc")["image"]
    assert img.shape == (8, 64, 64, 3) and img.dtype == np.uint8 and img.std() > 10


def test_fpn_detector_has_dynamic_shape_code_upsampling_and_three_outputs():
    model = load("fpn_detector")
    assert dims(model.graph.input[0]) == ["batch", 3, "height", "width"]
    assert [o.name for o in model.graph.output] == ["boxes", "scores", "landmarks"]
    hist = ops(model)
    for op in ("Shape", "Gather", "Unsqueeze", "Concat", "Reshape", "Transpose", "Resize", "Sigmoid"):
        assert hist[op] >= 1, op
    made_by = producers(model)
    resizes = [n for n in model.graph.node if n.op_type == "Resize"]
    assert len(resizes) == 2 and all(n.attribute and dict(
        (a.name, onnx.helper.get_attribute_value(a)) for a in n.attribute)["mode"] == b"nearest" for n in resizes)
    # one Resize by constant scales (scale_factor=2), one by sizes computed from Shape at run time
    sized = [n for n in resizes if len(n.input) == 4 and n.input[3]]
    assert len(sized) == 1 and "Shape" in upstream_ops(model, sized[0].input[3])
    # every Reshape's target shape is computed from the batch size (x.size(0))
    reshapes = [n for n in model.graph.node if n.op_type == "Reshape"]
    assert len(reshapes) == 9
    assert all({"Shape", "Gather", "Unsqueeze", "Concat"} <= upstream_ops(model, n.input[1]) for n in reshapes)
    # the box decode multiplies and adds by constant vectors
    assert made_by["boxes"].op_type == "Add" and made_by[made_by["boxes"].input[0]].op_type == "Mul"
    assert made_by["scores"].op_type == "Sigmoid"


def test_fpn_detector_runs_at_other_batch_and_sizes():
    sess = session("fpn_detector")
    x = np.random.default_rng(0).uniform(0, 1, (2, 3, 96, 128)).astype(np.float32)
    boxes, scores, landmarks = sess.run(None, {"input": x})
    priors = 2 * sum((96 // s) * (128 // s) for s in (8, 16, 32))
    assert boxes.shape == (2, priors, 4) and scores.shape == (2, priors, 2) and landmarks.shape == (2, priors, 10)


def test_focus_silu_has_strided_slices_and_silu():
    model = load("focus_silu")
    assert dims(model.graph.input[0]) == [1, 3, 64, 64]
    hist = ops(model)
    assert hist["Slice"] >= 4 and hist["Sigmoid"] >= 5 and hist["Mul"] >= 5
    steps = []
    consts = {n.output[0]: numpy_helper.to_array(n.attribute[0].t) for n in model.graph.node if n.op_type == "Constant"}
    for n in model.graph.node:
        if n.op_type == "Slice" and len(n.input) == 5:
            steps.append(int(consts[n.input[4]][0]))
    assert steps and all(s == 2 for s in steps)
    # the four space-to-depth slices meet in one Concat on the channel axis before the first Conv
    concat = next(n for n in model.graph.node if n.op_type == "Concat")
    assert len(concat.input) == 4 and onnx.helper.get_attribute_value(concat.attribute[0]) == 1
    assert upstream_ops(model, concat.output[0]) == {"Concat", "Slice", "Constant"}
    # SiLU exported as x * Sigmoid(x)
    made_by = producers(model)
    assert any(n.op_type == "Mul" and {made_by[i].op_type for i in n.input if i in made_by} >= {"Sigmoid", "Conv"}
               for n in model.graph.node)
    assert dims(model.graph.output[0]) == [1, 192, 8]


def test_shufflenet_has_channel_shuffle_and_split():
    model = load("shufflenet_block")
    made_by = producers(model)
    shuffles = [n for n in model.graph.node if n.op_type == "Reshape"
                and made_by[n.input[0]].op_type == "Transpose"
                and made_by[made_by[n.input[0]].input[0]].op_type == "Reshape"]
    assert len(shuffles) == 3
    for n in shuffles:
        perm = onnx.helper.get_attribute_value(made_by[n.input[0]].attribute[0])
        assert perm == [0, 2, 1, 3, 4]
    # chunk(2, dim=1): two Slices of one tensor on axis 1, with bounds computed from its Shape
    hist = ops(model)
    assert hist["Slice"] == 4 and hist["Shape"] == 2
    assert {"ReduceMean", "Gemm", "Softmax", "MaxPool"} <= set(hist)
    assert made_by["probs"].op_type == "Softmax"


def test_conv1d_audio_has_long_dilated_and_depthwise_1d_convs():
    model = load("conv1d_audio")
    assert dims(model.graph.input[0]) == [1, 2, 512]
    convs = [{a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
             for n in model.graph.node if n.op_type == "Conv"]
    assert all(len(c["kernel_shape"]) == 1 for c in convs)
    assert max(c["kernel_shape"][0] for c in convs) == 33
    assert {c["dilations"][0] for c in convs} == {1, 2, 4}
    assert any(c["group"] == 16 for c in convs)
    hist = ops(model)
    assert hist["BatchNormalization"] == 5
    assert {"GlobalAveragePool", "Flatten", "Gemm", "Softmax", "MaxPool"} <= set(hist)


def test_espcn_has_depth_to_space_and_dynamic_size():
    model = load("espcn_sr")
    assert dims(model.graph.input[0]) == [1, 1, "height", "width"]
    d2s = [n for n in model.graph.node if n.op_type == "DepthToSpace"]
    assert len(d2s) == 1
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in d2s[0].attribute}
    assert attrs == {"blocksize": 3, "mode": b"CRD"}
    assert ops(model)["Tanh"] == 2
    (y,) = session("espcn_sr").run(None, {"input": np.full((1, 1, 20, 24), 0.5, np.float32)})
    assert y.shape == (1, 1, 60, 72)


def test_ssd_takes_uint8_nhwc_with_quantized_input():
    model = load("ssd_uint8_nhwc")
    inp = model.graph.input[0]
    assert inp.name == "image" and inp.type.tensor_type.elem_type == TensorProto.UINT8
    assert dims(inp) == ["batch", 64, 64, 3]
    nodes = model.graph.node
    first = [n.op_type for n in nodes if n.op_type != "Constant"][:6]
    assert first == ["Transpose", "Cast", "Sub", "Div", "QuantizeLinear", "DequantizeLinear"]
    assert onnx.helper.get_attribute_value(nodes[0].attribute[0]) == [0, 3, 1, 2]
    assert [o.name for o in model.graph.output] == ["boxes", "scores"]
    assert producers(model)["scores"].op_type == "Softmax"
    boxes, scores = session("ssd_uint8_nhwc").run(None, {"image": calib("ssd_uint8_nhwc")["image"][:3]})
    assert boxes.shape == (3, 240, 4) and scores.shape == (3, 240, 4)
    np.testing.assert_allclose(scores.sum(-1), 1, rtol=1e-5)


def test_cls_head_decode_needs_host_ops():
    model = load("cls_head_decode")
    hist = ops(model)
    for op in ("Sigmoid", "Exp", "ReduceSum", "ReduceMean", "ReduceMax", "ArgMax", "TopK"):
        assert hist[op] >= 1, op
    outs = {o.name: o.type.tensor_type.elem_type for o in model.graph.output}
    assert outs == {"topk_scores": TensorProto.FLOAT, "topk_indices": TensorProto.INT64,
                    "class_ids": TensorProto.INT64, "image_scores": TensorProto.FLOAT,
                    "distances": TensorProto.FLOAT, "total_area": TensorProto.FLOAT}
    x = calib("cls_head_decode")["input"][:1]
    top_s, top_i, cls, img, dist, area = session("cls_head_decode").run(None, {"input": x})
    assert top_i.max() < 64 and cls.max() < 4 and (dist > 0).all() and area[0] > 0
    assert (np.diff(top_s[0]) <= 0).all()


def attributes(node: onnx.NodeProto) -> dict:
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def test_unet_decoder_upsamples_with_conv_transpose():
    model = load("unet_decoder")
    ups = [attributes(n) for n in model.graph.node if n.op_type == "ConvTranspose"]
    assert [(u["kernel_shape"], u["strides"], u.get("pads", [0] * 4)) for u in ups] == [
        ([2, 2], [2, 2], [0, 0, 0, 0]), ([4, 4], [2, 2], [1, 1, 1, 1])]
    assert ops(model)["Concat"] == 2 and dims(model.graph.output[0]) == [1, 1, 64, 64]


def test_se_mobilenetv3_has_hard_swish_as_a_product_and_squeeze_excitation():
    model = load("se_mobilenetv3")
    made_by = producers(model)
    gates = [n for n in model.graph.node if n.op_type == "Mul" and {made_by[t].op_type for t in n.input if t in made_by}
             & {"HardSigmoid"}]
    hard_swish = [n for n in gates if made_by[n.input[1]].input[0] == n.input[0]]  # x * HardSigmoid(x)
    squeeze = [n for n in gates if n not in hard_swish]  # x * HardSigmoid(conv(relu(conv(GAP(x)))))
    assert len(hard_swish) == 8 and len(squeeze) == 3
    assert {attributes(made_by[n.input[1]])["alpha"] for n in hard_swish + squeeze} == {np.float32(1 / 6)}
    assert all("GlobalAveragePool" in upstream_ops(model, n.input[1]) for n in squeeze)


def test_fpn_bilinear_resizes_linearly_in_both_coordinate_modes():
    model = load("fpn_bilinear")
    modes = sorted((attributes(n)["mode"], attributes(n)["coordinate_transformation_mode"])
                   for n in model.graph.node if n.op_type == "Resize")
    assert modes == [(b"linear", b"align_corners"), (b"linear", b"half_pixel"), (b"linear", b"half_pixel")]


def test_dwsep_audio1d_has_gelu_as_erf_and_depthwise_1d_convs():
    model = load("dwsep_audio1d")
    assert dims(model.graph.input[0]) == [1, 40, 128]
    convs = [attributes(n) for n in model.graph.node if n.op_type == "Conv"]
    assert max(c["kernel_shape"][0] for c in convs) == 33 and {c.get("dilations", [1])[0] for c in convs} == {1, 2, 4}
    assert sum(c.get("group", 1) > 1 for c in convs) == 3
    assert ops(model)["Erf"] == 4 and ops(model)["ReduceMean"] == 1
