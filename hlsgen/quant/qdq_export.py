"""Export a quantized build as an ONNX QDQ model that onnxruntime runs: a cross-check of the integer
reference (which remains the specification), and a hand-off format other tools understand.

Every quantized tensor t becomes QuantizeLinear -> DequantizeLinear (with a Clip first when it is
narrower than 8 bits; a wider one, as Div -> Round -> Clip -> Mul, since opset 17 quantizes to 8 bits only);
weights are int8 initializers behind a per-channel DequantizeLinear, biases int32.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ..ir import Graph, Node
from .model import QuantizedModel
from .params import TensorQuant

OPSET = 17
IR_VERSION = 10  # onnxruntime 1.31 refuses the IR version 14 that onnx 1.23 writes by default


class _Exporter:
    def __init__(self, graph: Graph, quantized: QuantizedModel):
        self.graph, self.quantized = graph, quantized
        self.quant: dict[str, TensorQuant] = quantized.graph.quant
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []

    # ---- helpers ---------------------------------------------------------------------------
    def const(self, name: str, value) -> str:
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def add(self, op: str, inputs: list[str], output: str, name: str, **attrs) -> str:
        self.nodes.append(helper.make_node(op, inputs, [output], name=name, **attrs))
        return output

    def produced(self, tensor: str) -> str:
        """Where a node writes `tensor` before its quantize/dequantize pair."""
        return f"{tensor}__float" if tensor in self.quant else tensor

    def fake_quantize(self, tensor: str) -> None:
        """tensor__float -> [Clip] -> QuantizeLinear -> DequantizeLinear -> tensor (wider than 8 bits: Div,
        Round, Clip, Mul)."""
        q = self.quant[tensor]
        scale = self.const(f"{tensor}__scale", np.float32(q.scale))
        source = f"{tensor}__float"
        if q.bits > 8:  # opset 17 quantizes to 8 bits only: the same grid in plain arithmetic (ties to even)
            levels = self.add("Round", [self.add("Div", [source, scale], f"{tensor}__div", f"{tensor}/div")],
                              f"{tensor}__levels", f"{tensor}/round")
            lo = self.const(f"{tensor}__lo", np.float32(q.qmin - q.zero_point))
            hi = self.const(f"{tensor}__hi", np.float32(q.qmax - q.zero_point))
            clipped = self.add("Clip", [levels, lo, hi], f"{tensor}__clipped", f"{tensor}/clip")
            self.add("Mul", [clipped, scale], tensor, f"{tensor}/dequantize")
            return
        zero = self.const(f"{tensor}__zero", (np.int8 if q.signed else np.uint8)(q.zero_point))
        if q.bits != 8:
            lo = self.const(f"{tensor}__lo", np.float32((q.qmin - q.zero_point) * q.scale))
            hi = self.const(f"{tensor}__hi", np.float32((q.qmax - q.zero_point) * q.scale))
            source = self.add("Clip", [source, lo, hi], f"{tensor}__clipped", f"{tensor}/clip")
        quantized = self.add("QuantizeLinear", [source, scale, zero], f"{tensor}__q", f"{tensor}/quantize")
        self.add("DequantizeLinear", [quantized, scale, zero], tensor, f"{tensor}/dequantize")

    def weights(self, node: Node, axis: int) -> tuple[str, str | None]:
        """DequantizeLinear of the layer's integer weights and bias, as the integer graph holds them."""
        int_node = self.quantized.graph.nodes[node.name]
        layer = next(layer for layer in self.quantized.lowered.layers if layer.name == node.name)
        w_int = self.quantized.graph.constants[int_node.inputs[1]]
        scales = np.asarray(layer.weight_scales, np.float32)
        w = self.add("DequantizeLinear", [
            self.const(f"{node.name}__w_int", w_int.astype(np.int8 if layer.weight_bits <= 8 else np.int16)),
            self.const(f"{node.name}__w_scale", scales),
            self.const(f"{node.name}__w_zero", np.zeros(len(scales), np.int8 if layer.weight_bits <= 8 else np.int16)),
        ], f"{node.name}__w", f"{node.name}/dequantize_w", axis=axis)
        if len(int_node.inputs) < 3:
            return w, None
        b_int = self.quantized.graph.constants[int_node.inputs[2]].astype(np.int32)
        b_scale = (self.quant[node.inputs[0]].scale * scales.astype(np.float64)).astype(np.float32)
        b = self.add("DequantizeLinear", [
            self.const(f"{node.name}__b_int", b_int), self.const(f"{node.name}__b_scale", b_scale),
            self.const(f"{node.name}__b_zero", np.zeros(len(b_scale), np.int32)),
        ], f"{node.name}__b", f"{node.name}/dequantize_b", axis=0)
        return w, b

    def activation(self, node: Node, source: str, out: str) -> str:
        act = node.attrs.activation
        if act is None:
            return self.add("Identity", [source], out, f"{node.name}/out")
        if act.kind == "relu":
            return self.add("Relu", [source], out, f"{node.name}/relu")
        if act.kind == "leaky_relu":
            return self.add("LeakyRelu", [source], out, f"{node.name}/leaky_relu", alpha=act.alpha)
        lo = self.const(f"{node.name}__act_lo", np.float32(act.lo))
        hi = self.const(f"{node.name}__act_hi", np.float32(act.hi))
        return self.add("Clip", [source, lo, hi], out, f"{node.name}/clip")

    # ---- ops -------------------------------------------------------------------------------
    def export_node(self, node: Node) -> None:
        out = self.produced(node.outputs[0])
        handler = getattr(self, f"_op_{node.op}", None)
        if handler is None:
            self.add(node.op, list(node.inputs), out, node.name, **_plain_attrs(node))
        else:
            handler(node, out)

    def _op_Conv(self, node: Node, out: str) -> None:
        w, b = self.weights(node, axis=0)
        a = node.attrs
        conv = self.add("Conv", [node.inputs[0], w] + ([b] if b else []), f"{node.name}__acc", node.name,
                        kernel_shape=list(a.kernel_shape), strides=list(a.strides), pads=list(a.pads),
                        dilations=list(a.dilations), group=a.group)
        self.activation(node, conv, out)

    def _op_Dense(self, node: Node, out: str) -> None:
        w, b = self.weights(node, axis=1)
        flat = self.add("Flatten", [node.inputs[0]], f"{node.name}__flat", f"{node.name}/flatten", axis=1)
        acc = self.add("MatMul", [flat, w], f"{node.name}__mm", node.name)
        if b:
            acc = self.add("Add", [acc, b], f"{node.name}__acc", f"{node.name}/bias")
        self.activation(node, acc, out)

    def _op_ChannelAffine(self, node: Node, out: str) -> None:
        x, scale, shift = node.inputs
        shape = (-1,) + (1,) * (len(self.graph.shape(x)) - 2)
        s = self.const(f"{node.name}__scale", self.graph.constants[scale].reshape(shape))
        t = self.const(f"{node.name}__shift", self.graph.constants[shift].reshape(shape))
        self.add("Add", [self.add("Mul", [x, s], f"{node.name}__mul", f"{node.name}/mul"), t], out, node.name)

    def _op_Clip(self, node: Node, out: str) -> None:
        bounds = [self.const(f"{node.name}__{k}", np.float32(v)) if math.isfinite(v) else ""
                  for k, v in (("lo", node.attrs.lo), ("hi", node.attrs.hi))]
        self.add("Clip", [node.inputs[0], *bounds], out, node.name)

    def _op_Reshape(self, node: Node, out: str) -> None:
        shape = self.const(f"{node.name}__shape", np.asarray(node.attrs.shape, np.int64))
        self.add("Reshape", [node.inputs[0], shape], out, node.name)

    def _op_Gather(self, node: Node, out: str) -> None:
        indices = self.const(f"{node.name}__indices", np.asarray(node.attrs.indices, np.int64))
        self.add("Gather", [node.inputs[0], indices], out, node.name, axis=node.attrs.axis)

    def _op_Pad(self, node: Node, out: str) -> None:
        pads = self.const(f"{node.name}__pads", np.asarray(node.attrs.pads, np.int64))
        value = self.const(f"{node.name}__value", np.float32(node.attrs.value))
        self.add("Pad", [node.inputs[0], pads, value], out, node.name, mode=node.attrs.mode)

    def _op_Resize(self, node: Node, out: str) -> None:
        """Nearest upsampling (pixel repetition), then the edge pixels a Resize also repeats as an edge Pad."""
        a = node.attrs
        target = f"{node.outputs[0]}__upsampled" if a.pads else out
        if all(int(s) == s for s in a.scales):
            resized = ["", self.const(f"{node.name}__scales", np.asarray((1, 1, *a.scales), np.float32))]
        else:  # a fractional factor: the output sizes say it exactly
            shape = self.graph.shape(node.inputs[0])
            sizes = (*shape[:2], *(int(n * s) for n, s in zip(shape[2:], a.scales)))
            resized = ["", "", self.const(f"{node.name}__sizes", np.asarray(sizes, np.int64))]
        self.add("Resize", [node.inputs[0], *resized], target, node.name, mode=a.mode,
                 coordinate_transformation_mode=a.transform, nearest_mode="floor")
        if a.pads:
            n = len(a.scales)
            pads = self.const(f"{node.name}__pads", np.asarray((0, 0, *a.pads[:n], 0, 0, *a.pads[n:]), np.int64))
            self.add("Pad", [target, pads], out, f"{node.name}/edge", mode="edge")

    def _op_Trunc(self, node: Node, out: str) -> None:
        """QONNX's Trunc in standard ops: its input sits on its grid (fake-quantized), so y = R(x / (scale * 2^k))
        * out_scale, and the QuantizeLinear/DequantizeLinear of its output clamps it."""
        int_node = self.quantized.graph.nodes[node.name]
        scale = float(np.ravel(self.graph.constants[node.inputs[1]])[0])
        step = self.const(f"{node.name}__step", np.float32(scale * (1 << int_node.attrs.shift)))
        rounding = {"FLOOR": "Floor", "CEIL": "Ceil", "ROUND": "Round",
                    "ROUND_TO_ZERO": "Floor"}[node.attrs.rounding_mode]  # lowered for unsigned inputs only
        levels = self.add(rounding, [self.add("Div", [node.inputs[0], step], f"{node.name}__div", f"{node.name}/div")],
                          f"{node.name}__levels", f"{node.name}/round")
        out_scale = self.const(f"{node.name}__out_scale", np.float32(self.quant[node.outputs[0]].scale))
        self.add("Mul", [levels, out_scale], out, node.name)

    def _op_SiLU(self, node: Node, out: str) -> None:
        """x * Sigmoid(x) (a float product inside the fused op: its lookup table has no inner quantization)."""
        gate = self.add("Sigmoid", [node.inputs[0]], f"{node.name}__gate", f"{node.name}/sigmoid")
        self.add("Mul", [node.inputs[0], gate], out, node.name)

    def _op_Mish(self, node: Node, out: str) -> None:
        """x * Tanh(Softplus(x)): Mish is opset 18."""
        soft = self.add("Softplus", [node.inputs[0]], f"{node.name}__softplus", f"{node.name}/softplus")
        gate = self.add("Tanh", [soft], f"{node.name}__gate", f"{node.name}/tanh")
        self.add("Mul", [node.inputs[0], gate], out, node.name)

    def _op_Gelu(self, node: Node, out: str) -> None:
        """0.5 x (1 + erf(x / sqrt 2)), or the tanh form: Gelu is opset 20."""
        x, name = node.inputs[0], node.name
        if node.attrs.approximate == "tanh":
            cube = self.add("Mul", [self.add("Mul", [x, x], f"{name}__sq", f"{name}/sq"), x], f"{name}__cube",
                            f"{name}/cube")
            inner = self.add("Add", [x, self.add("Mul", [cube, self.const(f"{name}__k", np.float32(0.044715))],
                                                 f"{name}__kcube", f"{name}/kcube")], f"{name}__inner", f"{name}/inner")
            scaled = self.add("Mul", [inner, self.const(f"{name}__c", np.float32(math.sqrt(2 / math.pi)))],
                              f"{name}__scaled", f"{name}/scaled")
            curve = self.add("Tanh", [scaled], f"{name}__curve", f"{name}/tanh")
        else:
            scaled = self.add("Div", [x, self.const(f"{name}__sqrt2", np.float32(math.sqrt(2)))], f"{name}__scaled",
                              f"{name}/div")
            curve = self.add("Erf", [scaled], f"{name}__curve", f"{name}/erf")
        one_plus = self.add("Add", [curve, self.const(f"{name}__one", np.float32(1))], f"{name}__one_plus",
                            f"{name}/add")
        half = self.add("Mul", [x, self.const(f"{name}__half", np.float32(0.5))], f"{name}__half_x", f"{name}/half")
        self.add("Mul", [half, one_plus], out, name)

    def _op_Interleave(self, node: Node, out: str) -> None:
        """Each phase spread onto every stride-th pixel (Reshape, Pad with zeros, Reshape), fitted to the output
        (Slice, then Pad) and the phases summed: zeros everywhere but on its own pixels, so the Sum weaves them."""
        strides = node.attrs.strides
        n = len(strides)
        size = self.graph.shape(node.outputs[0])[-n:]
        spread = []
        for i, (t, offsets) in enumerate(zip(node.inputs, np.ndindex(*strides))):
            lead, spatial = self.graph.shape(t)[:2], self.graph.shape(t)[2:]
            stem = f"{node.name}__phase{i}"
            split = [*lead, *(v for u in spatial for v in (u, 1))]
            x = self.add("Reshape", [t, self.const(f"{stem}_shape_split", np.array(split, np.int64))],
                         f"{stem}_split", f"{stem}/split")
            begins = [0, 0, *(v for d in offsets for v in (0, d))]
            ends = [0, 0, *(v for d, st in zip(offsets, strides) for v in (0, st - 1 - d))]
            x = self.add("Pad", [x, self.const(f"{stem}_pads", np.array(begins + ends, np.int64))], f"{stem}_spread",
                         f"{stem}/spread")
            woven = [u * st for u, st in zip(spatial, strides)]
            x = self.add("Reshape", [x, self.const(f"{stem}_shape_woven", np.array([*lead, *woven], np.int64))],
                         f"{stem}_woven", f"{stem}/woven")
            if tuple(woven) != tuple(size):  # crop to the output, then pad up to it
                axes = np.arange(2, 2 + n, dtype=np.int64)
                ends = np.array([min(w, o) for w, o in zip(woven, size)], np.int64)
                x = self.add("Slice", [x, self.const(f"{stem}_starts", np.zeros(n, np.int64)),
                                       self.const(f"{stem}_ends", ends), self.const(f"{stem}_axes", axes)],
                             f"{stem}_crop", f"{stem}/crop")
                grow = [0] * (n + 2) + [0, 0] + [max(0, o - w) for w, o in zip(woven, size)]
                x = self.add("Pad", [x, self.const(f"{stem}_grow", np.array(grow, np.int64))], f"{stem}_fit",
                             f"{stem}/fit")
            spread.append(x)
        self.add("Sum", spread, out, node.name)

    def _op_Softmax(self, node: Node, out: str) -> None:
        if len(node.attrs.axes) != 1:
            raise ValueError(f"{node.name}: a Softmax over several axes has no opset-{OPSET} form")
        self.add("Softmax", [node.inputs[0]], out, node.name, axis=node.attrs.axes[0])

    def export(self) -> onnx.ModelProto:
        for name in self.graph.inputs:
            self.add("Identity", [self._input_steps(name)], f"{name}__float", f"{name}/input")
            self.fake_quantize(name)
        for node in self.graph.topological():
            self.export_node(node)
            if node.outputs[0] in self.quant:
                self.fake_quantize(node.outputs[0])
        self._keep_input_names()
        value = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, list(self.graph.shape(n)))  # noqa: E731
        inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(np.dtype(steps.dtype)),
                                                list(steps.shape)) if (steps := self.graph.input_steps.get(n))
                  else value(n) for n in self.graph.inputs]
        onnx_graph = helper.make_graph(self.nodes, self.graph.name, inputs,
                                       [value(n) for n in self.graph.outputs], initializer=self.inits)
        model = helper.make_model(onnx_graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="hlsgen")
        model.ir_version = IR_VERSION
        onnx.checker.check_model(model)
        return model

    def _input_steps(self, name: str) -> str:
        """An input with absorbed preprocessing (Graph.input_steps) takes the file's array, as the model does:
        its steps as ONNX nodes (named `<input>/step<i>`); returns the tensor they make."""
        steps = self.graph.input_steps.get(name)
        if steps is None:
            return name
        x, count = name, 0

        def step(op: str, inputs: list[str], **attrs) -> str:
            nonlocal count
            count += 1
            return self.add(op, inputs, f"{name}__step{count}", f"{name}/step{count}", **attrs)

        if steps.perm is not None:
            x = step("Transpose", [x], perm=list(steps.perm))
        if steps.dequantize is not None:
            scale, zero = steps.dequantize
            x = step("DequantizeLinear", [x, self.const(f"{name}__step_scale", np.float32(scale)),
                                          self.const(f"{name}__step_zp", np.asarray(zero, steps.dtype))])
        if steps.cast:
            x = step("Cast", [x], to=TensorProto.FLOAT)
        for i, op in enumerate(steps.ops):
            c = self.const(f"{name}__step_c{i}", np.asarray(op.value, np.float32).reshape(op.shape))
            x = step(op.op, [x, c] if op.x_first else [c, x])
        return x

    def _keep_input_names(self) -> None:
        """Graph inputs keep their names: their fake-quantized copies become `<input>__dq`."""
        for name in self.graph.inputs:
            for n in self.nodes:
                if n.op_type == "Identity" and n.output[0] == f"{name}__float" or n.name.startswith(f"{name}/step"):
                    continue
                n.input[:] = [f"{name}__dq" if t == name else t for t in n.input]
                n.output[:] = [f"{name}__dq" if t == name else t for t in n.output]


def _plain_attrs(node: Node) -> dict:
    """Attributes of ops whose internal form is the ONNX form (pools, Transpose, Concat, activations)."""
    a = node.attrs
    if a is None or not hasattr(a, "__dataclass_fields__"):
        return {}
    names = {"kernel_shape": "kernel_shape", "strides": "strides", "pads": "pads", "perm": "perm", "axis": "axis",
             "alpha": "alpha", "beta": "beta", "ceil_mode": "ceil_mode", "count_include_pad": "count_include_pad",
             "blocksize": "blocksize", "mode": "mode"}
    out = {}
    for field_name in a.__dataclass_fields__:
        value = getattr(a, field_name)
        if field_name == "dilations":
            if any(d != 1 for d in value):
                out["dilations"] = list(value)
        elif field_name == "count_include_pad" and node.op != "AveragePool" or field_name == "mode" and \
                node.op != "DepthToSpace":
            continue
        elif field_name in names:
            out[names[field_name]] = [int(v) for v in value] if isinstance(value, tuple) else (
                int(value) if isinstance(value, bool) else value)
    return out


def export_qdq(graph: Graph, quantized: QuantizedModel, path: Path) -> None:
    model = _Exporter(graph, quantized).export()
    path.write_bytes(model.SerializeToString())
