"""A ModelSpec as ONNX: float, QDQ (QuantizeLinear/DequantizeLinear on the input, every weight and every
layer's output) or QONNX (Quant nodes in the same places). The annotated forms take their activation scales
from onnxruntime running the float model on the spec's calibration samples, as a calibrated export would."""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from .spec import LayerSpec, ModelSpec, channel_axis, conv_channels, conv_groups, head_input, head_shapes, layer_shape

IR_VERSION = 10  # onnx >= 1.23 writes 14 by default, which onnxruntime 1.2x/1.3x refuses
OPSET = 17
QONNX_OPSET = 13  # as FINN's and Brevitas' exports
QONNX_DOMAIN = "qonnx.custom_op.general"
INPUT, OUTPUT = "x", "y"


def spec_to_onnx(spec: ModelSpec) -> onnx.ModelProto:
    """The spec's model; byte-identical for equal specs."""
    float_model, points = _Builder(spec, {}).model()
    if spec.annotation == "float":
        return float_model
    return _Builder(spec, _ranges(float_model, points, spec.calibration())).model()[0]


def _ranges(model: onnx.ModelProto, points: list[str], samples: np.ndarray) -> dict[str, tuple[float, float]]:
    """min and max of every tensor that gets a quantizer, over the calibration samples."""
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    inferred = onnx.shape_inference.infer_shapes(probe)
    known = {v.name: v for v in inferred.graph.value_info}
    outputs = {o.name for o in probe.graph.output}
    for name in points:
        if name not in outputs and name != INPUT:  # past exporter shape code, inference may not know a shape
            probe.graph.output.append(known.get(name) or onnx.ValueInfoProto(name=name))
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1  # the same sums in the same order every run
    session = ort.InferenceSession(probe.SerializeToString(), options, providers=["CPUExecutionProvider"])
    wanted = [p for p in points if p != INPUT]
    lo = {p: np.inf for p in points}
    hi = {p: -np.inf for p in points}
    for sample in samples:
        values = dict(zip(wanted, session.run(wanted, {INPUT: sample[None]})))
        values[INPUT] = sample
        for p in points:
            lo[p] = min(lo[p], float(values[p].min()))
            hi[p] = max(hi[p], float(values[p].max()))
    return {p: (lo[p], hi[p]) for p in points}


class _Builder:
    def __init__(self, spec: ModelSpec, ranges: dict[str, tuple[float, float]]):
        self.spec, self.ranges = spec, ranges
        self.annotate = spec.annotation if ranges else "float"
        self.nodes: list[onnx.NodeProto] = []
        self.inits: dict[str, np.ndarray] = {}
        self.points: list[str] = []
        self.count = 0

    # ---- naming and constants ----
    def name(self, stem: str) -> str:
        """Layer tensors are numbered; a quantizer's names extend its tensor's (stem "of/what"), so the float
        and the annotated build name the layers' tensors alike."""
        if "/" in stem:
            return stem
        self.count += 1
        return f"{stem}_{self.count}"

    def const(self, stem: str, value) -> str:
        name = self.name(stem)
        self.inits[name] = np.asarray(value)
        return name

    def node(self, op: str, inputs: list[str], stem: str, **attrs) -> str:
        out = self.name(stem)
        domain = self.spec.qonnx_domain if op == "Quant" else ""
        self.nodes.append(helper.make_node(op, inputs, [out], name=f"{op}_{out}", domain=domain, **attrs))
        return out

    # ---- quantizers ----
    def activation(self, tensor: str) -> str:
        """A quantizer on an activation (QDQ or QONNX); the float model records where it goes."""
        self.points.append(tensor)
        if self.annotate == "float":
            return tensor
        lo, hi = self.ranges[tensor]
        signed = lo < 0
        bits = self.spec.bits if self.annotate == "qonnx" else 8
        top = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
        scale = np.float32(max(abs(lo), abs(hi), 1e-3) / top)
        if self.annotate == "qdq":
            zero = self.const(f"{tensor}/zp", np.int8(0) if signed else np.uint8(0))
            s = self.const(f"{tensor}/scale", scale)
            q = self.node("QuantizeLinear", [tensor, s, zero], f"{tensor}/q")
            return self.node("DequantizeLinear", [q, s, zero], f"{tensor}/dq")
        return self.node("Quant", [tensor, self.const(f"{tensor}/scale", scale), self.const(f"{tensor}/zero", np.float32(0)),
                                   self.const(f"{tensor}/bits", np.float32(bits))], f"{tensor}/quant",
                         signed=int(signed), narrow=0, rounding_mode="ROUND")

    def weight(self, stem: str, w: np.ndarray) -> str:
        """A weight initializer, quantized per output channel (axis 0) when annotated."""
        stem = self.name(stem)
        if self.annotate == "float":
            return self.const(stem + "/", w)
        bits = self.spec.bits if self.annotate == "qonnx" else 8
        top = (1 << (bits - 1)) - 1
        peak = np.abs(w.reshape(len(w), -1)).max(axis=1)
        scale = (np.where(peak > 0, peak, 1.0) / top).astype(np.float32)
        if self.annotate == "qdq":
            q = np.clip(np.round(w / scale.reshape((-1,) + (1,) * (w.ndim - 1))), -top, top).astype(np.int8)
            return self.node("DequantizeLinear", [self.const(stem + "/int", q), self.const(stem + "/scale", scale),
                                                  self.const(stem + "/zp", np.zeros(len(w), np.int8))], stem + "/dq",
                             axis=0)
        return self.node("Quant", [self.const(stem + "/", w),
                                   self.const(stem + "/scale", scale.reshape((-1,) + (1,) * (w.ndim - 1))),
                                   self.const(stem + "/zero", np.float32(0)), self.const(stem + "/bits", np.float32(bits))],
                         stem + "/quant", signed=1, narrow=1, rounding_mode="ROUND")

    # ---- layers ----
    def model(self) -> tuple[onnx.ModelProto, list[str]]:
        spec = self.spec
        shape = tuple(spec.shape)
        x = self.activation(INPUT)
        taps, shapes = [x], [shape]  # every layer's output (quantized), the input first
        for index, layer in enumerate(spec.layers):
            rng = np.random.default_rng([spec.seed, 2, index])
            x = getattr(self, f"_{layer.kind}")(layer, x, shape, rng)
            shape = layer_shape(layer, shape)
            x = self.activation(x)
            taps.append(x)
            shapes.append(shape)
        batch = "N" if spec.dynamic else 1
        if spec.dynamic == "hw":
            dims = [batch, spec.shape[0], "H", "W"]
        else:
            dims = [batch, *spec.shape]
        if not spec.outputs:
            self.nodes.append(helper.make_node("Identity", [x], [OUTPUT], name="output"))
            outputs = [helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, _dims(spec, batch, shape))]
        else:
            outputs = []
            for index, head in enumerate(spec.outputs):
                rng = np.random.default_rng([spec.seed, 4, index])
                names = self._head(head, taps, shapes, OUTPUT if index == 0 else f"{OUTPUT}{index}", rng)
                for (name, elem), out_shape in zip(names, head_shapes(head, shapes)):
                    outputs.append(helper.make_tensor_value_info(name, elem, _dims(spec, batch, out_shape)))
        graph = helper.make_graph(
            self.nodes, f"fuzz_{spec.seed}", [helper.make_tensor_value_info(INPUT, TensorProto.FLOAT, dims)],
            outputs, initializer=[numpy_helper.from_array(v, k) for k, v in self.inits.items()])
        qonnx = self.annotate == "qonnx"
        # QONNX exports are opset 13, where HardSwish (opset 14) does not exist yet
        hardswish = any(n.op_type == "HardSwish" for n in self.nodes)
        opsets = [helper.make_opsetid("", max(QONNX_OPSET, 14 * hardswish) if qonnx else OPSET)]
        if qonnx and spec.qonnx_domain:
            opsets.append(helper.make_opsetid(spec.qonnx_domain, 1))
        model = helper.make_model(graph, opset_imports=opsets, producer_name="hlsgen fuzz")
        model.ir_version = IR_VERSION
        return model, self.points

    def _conv(self, p: dict, x: str, shape, rng) -> str:
        cin = shape[0]
        g, cout = conv_groups(p, cin), conv_channels(p, cin)
        kh, kw = p["k"]
        fan_in = cin // g * kh * kw
        w = (rng.standard_normal((cout, cin // g, kh, kw)) * np.sqrt(2.0 / fan_in)).astype(np.float32)
        inputs = [x, self.weight("w", w)]
        if p["bias"]:
            inputs.append(self.const("b", (rng.standard_normal(cout) * 0.1).astype(np.float32)))
        t, l, b, r = p["pads"]
        y = self.node("Conv", inputs, "conv", kernel_shape=[kh, kw], strides=list(p["stride"]), dilations=list(p["dil"]),
                      pads=[t, l, b, r], group=g)
        if p["bn"]:
            y = self._batchnorm(y, cout, rng)
        return self._activation(p["act"], y, cout, rng, spatial=True)

    def _upconv(self, p: dict, x: str, shape, rng) -> str:
        """A ConvTranspose (weights [C_in, C_out / group, kh, kw]), then BatchNorm and an activation."""
        cin = shape[0]
        g, cout = conv_groups(p, cin), conv_channels(p, cin)
        kh, kw = p["k"]
        w = (rng.standard_normal((cin, cout // g, kh, kw)) * np.sqrt(2.0 / (cin // g * kh * kw))).astype(np.float32)
        inputs = [x, self.weight("w", w)]
        if p["bias"]:
            inputs.append(self.const("b", (rng.standard_normal(cout) * 0.1).astype(np.float32)))
        y = self.node("ConvTranspose", inputs, "upconv", kernel_shape=[kh, kw], strides=list(p["stride"]),
                      pads=list(p["pads"]), output_padding=list(p["output_padding"]), group=g)
        if p["bn"]:
            y = self._batchnorm(y, cout, rng)
        return self._activation(p["act"], y, cout, rng, spatial=True)

    def _shuffle(self, p: dict, x: str, shape, rng) -> str:
        """ESPCN's PixelShuffle: a Conv to C * b^2 channels, then DepthToSpace."""
        y = self.activation(self._conv(p["conv"], x, shape, rng))
        return self.node("DepthToSpace", [y], "d2s", blocksize=p["block"], mode=p["mode"])

    def _focus(self, p: dict, x: str, shape, rng) -> str:
        """YOLOv5's Focus: x[..., dy::2, dx::2] for each offset in `order` (a Slice per axis, as torch exports
        it), concatenated on channels."""
        end, two = self.const("end", np.array([2 ** 62], np.int64)), self.const("two", np.array([2], np.int64))
        rows, parts = {}, []
        for dy, dx in p["order"]:
            if dy not in rows:
                rows[dy] = self.node("Slice", [x, self.const("start", np.array([dy], np.int64)), end,
                                              self.const("axis", np.array([2], np.int64)), two], "slice")
            parts.append(self.node("Slice", [rows[dy], self.const("start", np.array([dx], np.int64)), end,
                                             self.const("axis", np.array([3], np.int64)), two], "slice"))
        return self.node("Concat", parts, "focus", axis=1)

    def _shuffle_unit(self, p: dict, x: str, shape, rng) -> str:
        """ShuffleNetV2's stride-1 unit as torch exports it: chunk in two (a Split, or two Slices), a 1x1 Conv
        on the second half, Concat, then view(n, g, c/g, h, w), transpose(1, 2), view(n, c, h, w)."""
        c, h, w = shape
        half = c // 2
        if p["chunk"] == "Split":
            first, second = self.name("chunk"), self.name("chunk")
            self.nodes.append(helper.make_node("Split", [x, self.const("split", np.array([half, half], np.int64))],
                                               [first, second], name=f"Split_{first}", axis=1))
        else:
            axis = self.const("axis", np.array([1], np.int64))
            first, second = (self.node("Slice", [x, self.const("start", np.array([lo], np.int64)),
                                                 self.const("end", np.array([hi], np.int64)), axis], "chunk")
                             for lo, hi in ((0, half), (half, c)))
        branch = self.activation(self._conv(p["conv"], second, (half, h, w), rng))
        joined = self.node("Concat", [first, branch], "cat", axis=1)
        g = p["groups"]
        grouped = self.node("Reshape", [joined, self.const("shape", np.array([1, g, c // g, h, w], np.int64))],
                            "groups")
        moved = self.node("Transpose", [grouped], "shuffle", perm=[0, 2, 1, 3, 4])
        return self.node("Reshape", [moved, self.const("shape", np.array([1, c, h, w], np.int64))], "shuffled")

    def _batchnorm(self, x: str, channels: int, rng) -> str:
        stats = [rng.uniform(0.5, 1.5, channels), rng.standard_normal(channels) * 0.2,
                 rng.standard_normal(channels) * 0.3, rng.uniform(0.3, 2.0, channels)]
        names = [self.const(n, v.astype(np.float32)) for n, v in zip(("gamma", "beta", "mean", "var"), stats)]
        return self.node("BatchNormalization", [x, *names], "bn", epsilon=1e-5)

    def _activation(self, kind: str, x: str, channels: int, rng, spatial: bool) -> str:
        if kind == "none":
            return x
        if kind == "relu":
            return self.node("Relu", [x], "relu")
        if kind in ("relu6", "clip"):
            lo, hi = (0.0, 6.0) if kind == "relu6" else (float(rng.uniform(-1.0, 0.0)), float(rng.uniform(0.5, 3.0)))
            return self.node("Clip", [x, self.const("lo", np.float32(lo)), self.const("hi", np.float32(hi))], "clip")
        if kind == "leakyrelu":
            return self.node("LeakyRelu", [x], "leaky", alpha=float(np.float32(rng.uniform(0.01, 0.3))))
        if kind == "prelu":
            slope = rng.uniform(0.0, 0.4, (channels, 1, 1) if spatial else (channels,)).astype(np.float32)
            return self.node("PRelu", [x, self.const("slope", slope)], "prelu")
        if kind == "hardsigmoid":
            return self.node("HardSigmoid", [x], "hsig", alpha=float(np.float32(rng.uniform(0.1, 0.3))),
                             beta=float(np.float32(rng.uniform(0.3, 0.7))))
        if kind == "elu":
            return self.node("Elu", [x], "elu", alpha=float(np.float32(rng.uniform(0.5, 1.5))))
        if kind in ("silu", "hardswish_mul", "mish"):  # as exporters write them: x times a gate of x
            if kind == "mish":
                gate = self.node("Tanh", [self.node("Softplus", [x], "softplus")], "tanh")
            elif kind == "silu":
                gate = self.node("Sigmoid", [x], "sigmoid")
            else:
                gate = self.node("HardSigmoid", [x], "hsig", alpha=1 / 6, beta=0.5)
            return self.node("Mul", [x, gate] if rng.random() < 0.5 else [gate, x], kind)
        if kind == "gelu":  # PyTorch's nn.GELU before opset 20
            scaled = self.node("Div", [x, self.const("sqrt2", np.float32(np.sqrt(2)))], "gelu_div")
            one_plus = self.node("Add", [self.node("Erf", [scaled], "erf"), self.const("one", np.float32(1))], "gelu_add")
            product = self.node("Mul", [x, one_plus], "gelu_mul")
            return self.node("Mul", [product, self.const("half", np.float32(0.5))], "gelu")
        op = {"sigmoid": "Sigmoid", "hardswish": "HardSwish", "selu": "Selu", "tanh": "Tanh", "softplus": "Softplus"}[kind]
        return self.node(op, [x], op.lower())

    def _pool(self, p: dict, x: str, shape, rng) -> str:
        kh, kw = p["k"]
        attrs = dict(kernel_shape=[kh, kw], strides=list(p["stride"]), pads=list(p["pads"]), ceil_mode=int(p["ceil"]))
        if p["op"] == "max":
            return self.node("MaxPool", [x], "maxpool", dilations=[p["dil"], p["dil"]], **attrs)
        return self.node("AveragePool", [x], "avgpool", count_include_pad=int(p["include_pad"]), **attrs)

    def _gpool(self, p: dict, x: str, shape, rng) -> str:
        return self.node("GlobalMaxPool" if p["op"] == "max" else "GlobalAveragePool", [x], "gpool")

    def _act(self, p: dict, x: str, shape, rng) -> str:
        return self._activation(p["act"], x, shape[0], rng, spatial=len(shape) == 3)

    def _residual(self, p: dict, x: str, shape, rng) -> str:
        y = self._conv(p["conv"], x, shape, rng)
        y = self.activation(y)
        out = self.node("Add", [x, y] if p["skip_first"] else [y, x], "add")
        return self._activation(p["post"], out, shape[0], rng, spatial=True)

    def _const(self, p: dict, x: str, shape, rng) -> str:
        """An elementwise op with a constant that broadcasts: per channel ([C,1,1]) or one scalar."""
        c = shape[0]
        dims = ((c, 1, 1) if p["per_channel"] else (1,)) if len(shape) == 3 else ((c,) if p["per_channel"] else (1,))
        value = rng.uniform(0.5, 1.5, dims) if p["op"] in ("Mul", "Div") else rng.standard_normal(dims) * 0.3
        return self.node(p["op"], [x, self.const("k", value.astype(np.float32))], p["op"].lower())

    def _concat(self, p: dict, x: str, shape, rng) -> str:
        a = self.activation(self._conv(p["a"], x, shape, rng))
        b = self.activation(self._conv(p["b"], x, shape, rng))
        return self.node("Concat", [a, b], "concat", axis=p["axis"])

    def _pad(self, p: dict, x: str, shape, rng) -> str:
        t, l, b, r = p["pads"]
        pads = self.const("pads", np.array([0, 0, t, l, 0, 0, b, r], np.int64))
        return self.node("Pad", [x, pads], "pad", mode="constant")

    def _flatten(self, p: dict, x: str, shape, rng) -> str:
        if p.get("shape_code"):  # PyTorch's x.view(x.size(0), -1): the batch read off the tensor's shape
            return self.node("Reshape", [x, self._batch_and(x, [-1])], "reshape")
        if p["reshape"]:
            return self.node("Reshape", [x, self.const("shape", np.array([1, -1], np.int64))], "reshape")
        return self.node("Flatten", [x], "flatten", axis=1)

    def _batch_and(self, x: str, rest: list[int]) -> str:
        """Shape -> Gather(0) -> Unsqueeze -> Concat with `rest`: a shape whose batch is x's, as exporters
        write it."""
        dims = self.node("Shape", [x], "shape")
        n = self.node("Gather", [dims, self.const("index", np.int64(0))], "gather", axis=0)
        n = self.node("Unsqueeze", [n, self.const("axes", np.array([0], np.int64))], "unsqueeze")
        return self.node("Concat", [n, self.const("rest", np.array(rest, np.int64))], "concat", axis=0)

    def _host(self, p: dict, x: str, shape, rng) -> str:
        """An op the accelerator has no unit for, between its layers."""
        if p["op"] == "InstanceNormalization":
            c = shape[0]
            scale = self.const("scale", rng.uniform(0.5, 1.5, c).astype(np.float32))
            bias = self.const("bias", (rng.standard_normal(c) * 0.2).astype(np.float32))
            return self.node("InstanceNormalization", [x, scale, bias], "inorm", epsilon=1e-5)
        return self.node(p["op"], [x], p["op"].lower())

    def _resize(self, p: dict, x: str, shape, rng) -> str:
        """Upsampling by an integer factor, nearest or bilinear (half_pixel or align_corners: torch's
        align_corners=False or True); its sizes constant, or as PyTorch's F.interpolate(scale_factor) exports them:
        Shape -> Slice(H, W) -> Cast -> Mul -> Cast -> Concat with (N, C); or bilinear to a size no multiple of
        the input's (F.interpolate(size=...): (N, C) from the Shape, (h, w) constant)."""
        s = p["scale"]
        attrs = dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor")
        if p.get("mode") == "linear":
            attrs = dict(mode="linear", coordinate_transformation_mode=p.get("transform", "half_pixel"))
        elif p.get("fraction"):  # nearest to a size no multiple of the input's: torch's F.interpolate(size=...)
            attrs = dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor")
        if p.get("fraction"):  # a fractional factor: F.interpolate(size=(h, w)), N and C from the map's Shape when
            num, den = p["fraction"]  # the batch is dynamic
            hw = np.array([n * num // den for n in shape[1:]], np.int64)
            if self.spec.dynamic != "batch":
                sizes = self.const("sizes", np.array([1, shape[0], *hw], np.int64))
                return self.node("Resize", [x, "", "", sizes], "resize", **attrs)
            nc = self.node("Slice", [self.node("Shape", [x], "shape"), self.const("starts", np.array([0], np.int64)),
                                     self.const("ends", np.array([2], np.int64))], "slice")
            sizes = self.node("Concat", [nc, self.const("hw", hw)], "concat", axis=0)
            return self.node("Resize", [x, "", "", sizes], "resize", **attrs)
        if not p.get("shape_code"):
            scales = self.const("scales", np.array([1, 1, s, s], np.float32))
            return self.node("Resize", [x, "", scales], "resize", **attrs)
        dims = self.node("Shape", [x], "shape")
        hw = self.node("Slice", [dims, self.const("starts", np.array([2], np.int64)),
                                 self.const("ends", np.array([4], np.int64))], "slice")
        hw = self.node("Cast", [hw], "cast", to=TensorProto.FLOAT)
        hw = self.node("Mul", [hw, self.const("factor", np.array([s, s], np.float32))], "mul")
        hw = self.node("Cast", [hw], "cast", to=TensorProto.INT64)
        nc = self.node("Slice", [dims, self.const("starts", np.array([0], np.int64)),
                                 self.const("ends", np.array([2], np.int64))], "slice")
        sizes = self.node("Concat", [nc, hw], "concat", axis=0)
        return self.node("Resize", [x, "", "", sizes], "resize", **attrs)

    # ---- output heads ----
    def _head(self, head, taps: list[str], shapes: list, name: str, rng) -> list[tuple[str, int]]:
        """The graph outputs of one head (spec.head_shapes), named `name` (TopK: name and name_idx), with their
        element types."""
        at = head.get("at")
        x = taps[-1] if at is None else taps[at]
        shape = head_input(head, shapes)
        convs = head.get("convs", [])
        if len(convs) == 1:
            x = self.activation(self._conv(convs[0], x, shape, rng))
            shape = layer_shape(LayerSpec("conv", convs[0]), shape)
        elif len(convs) == 2:
            parts = []
            for conv in convs:
                y = self.activation(self._conv(conv, x, shape, rng))
                c = layer_shape(LayerSpec("conv", conv), shape)[0]
                y = self.node("Transpose", [y], "transpose", perm=[0, 2, 3, 1])
                parts.append(self.node("Reshape", [y, self._batch_and(y, [-1, c])], "reshape"))
            x = self.node("Concat", parts, "concat", axis=2)
            shape = head_shapes(LayerSpec("head", {"convs": convs}), [shape])[0]
        for op in head.get("ops", []):
            kind = op["op"]
            axis = channel_axis(shape) + 1
            if kind == "exp":  # a box decode: exp(k * t) * anchor
                x = self.node("Mul", [x, self.const("k", np.float32(op["k"]))], "mul")
                x = self.node("Exp", [x], "exp")
                x = self.node("Mul", [x, self.const("anchor", np.float32(op["anchor"]))], "mul")
            elif kind == "sigmoid":
                x = self.node("Sigmoid", [x], "sigmoid")
            elif kind == "softmax":
                x = self.node("Softmax", [x], "softmax", axis=axis)
            elif kind == "reduce":
                if op["fn"] == "ReduceSum":  # axes an input since opset 13
                    x = self.node("ReduceSum", [x, self.const("axes", np.array([axis], np.int64))], "reducesum",
                                  keepdims=op["keepdims"])
                else:
                    x = self.node(op["fn"], [x], op["fn"].lower(), axes=[axis], keepdims=op["keepdims"])
            elif kind == "nhwc":
                x = self.node("Transpose", [x], "transpose", perm=[0, 2, 3, 1])
                x = self.node("Reshape", [x, self._batch_and(x, [-1, shape[0]])], "reshape")
            elif kind == "argmax":
                self.nodes.append(helper.make_node("ArgMax", [x], [name], name=f"ArgMax_{name}", axis=axis,
                                                   keepdims=op["keepdims"]))
                return [(name, TensorProto.INT64)]
            elif kind == "topk":
                flat = self.node("Reshape", [x, self._batch_and(x, [-1])], "reshape")
                k = self.const("k", np.array([op["k"]], np.int64))
                self.nodes.append(helper.make_node("TopK", [flat, k], [name, f"{name}_idx"], name=f"TopK_{name}",
                                                   axis=-1, largest=1, sorted=1))
                return [(name, TensorProto.FLOAT), (f"{name}_idx", TensorProto.INT64)]
            shape = _op_shape(op, shape)
        self.nodes.append(helper.make_node("Identity", [x], [name], name=f"output_{name}"))
        return [(name, TensorProto.FLOAT)]

    def _dense(self, p: dict, x: str, shape, rng) -> str:
        fin, fout = shape[0], p["out"]
        w = (rng.standard_normal((fout, fin)) * np.sqrt(2.0 / fin)).astype(np.float32)
        bias = (rng.standard_normal(fout) * 0.1).astype(np.float32)
        if p["matmul"] and self.spec.annotation == "float":
            y = self.node("MatMul", [x, self.const("w", np.ascontiguousarray(w.T))], "matmul")
            y = self.node("Add", [y, self.const("b", bias)], "bias") if p["bias"] else y
        else:
            inputs = [x, self.weight("w", w)] + ([self.const("b", bias)] if p["bias"] else [])
            y = self.node("Gemm", inputs, "gemm", transB=1)
        if p["bn"]:
            y = self._batchnorm(y, fout, rng)
        return self._activation(p["act"], y, fout, rng, spatial=False)



def _op_shape(op: dict, shape: tuple[int, ...]) -> tuple[int, ...]:
    return head_shapes(LayerSpec("head", {"ops": [op]}), [shape])[0]


def _dims(spec: ModelSpec, batch, shape: tuple[int, ...]) -> list:
    """An output's declared dims: its sizes unknown where the input's H and W are symbolic."""
    return [batch, *(None if spec.dynamic == "hw" else d for d in shape)]
