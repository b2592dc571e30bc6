"""A `Spec` in each runtime's own words: an OpenVINO IR layer, an ONNX node, a PyTorch call.

None where the runtime cannot express the op (PyTorch has no auto_pad and pads symmetrically;
ONNX AveragePool has dilations from opset 19; onnx has no global sum).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..cases import IrLayer, _ir, ir_builder
from .spec import Spec

IR_ELEMENT = {
    "float32": "f32",
    "float16": "f16",
    "bfloat16": "bf16",
    "float64": "f64",
    "int8": "i8",
    "uint8": "u8",
    "int32": "i32",
}
REDUCE_IR = {"max": "ReduceMax", "mean": "ReduceMean", "sum": "ReduceSum"}
GLOBAL_ONNX = {"max": "GlobalMaxPool", "mean": "GlobalAveragePool"}
ONNX_AUTO_PAD = {"same_upper": "SAME_UPPER", "same_lower": "SAME_LOWER", "valid": "VALID"}


@dataclass(frozen=True)
class OnnxNodeCall:
    op: str
    attrs: dict[str, Any]
    opset: int


@dataclass(frozen=True)
class TorchCallSpec:
    function: str
    kwargs: dict[str, Any]


def ir_layer(spec: Spec) -> IrLayer:
    if spec.kind == "global":
        axes = tuple(range(2, 2 + spec.rank))
        return IrLayer(REDUCE_IR[spec.reduce], 1, {"keep_dims": "true"}, (("i64", axes),))
    op = "MaxPool" if spec.reduce == "max" else "AvgPool"
    v = spec.ov_version
    dilated = (op == "MaxPool" and v >= 8) or (op == "AvgPool" and v >= 16)
    rounding = (spec.ov_ceil if v >= 14 else "ceil") if spec.ceil else "floor"
    return _ir(
        op,
        v,
        spec.window,
        spec.strides,
        spec.pads_begin,
        spec.pads_end,
        exclude_pad=None if op == "MaxPool" else not spec.count_pad,
        rounding=rounding,
        auto_pad=spec.auto_pad,
        dilations=spec.dilations if dilated else None,
        axis=0 if op == "MaxPool" and v >= 8 else None,
    )


def ir_expressible(spec: Spec) -> bool:
    """MaxPool-1 and AvgPool-1/14 have no dilations; the spec's versions respect it."""
    if spec.kind == "global":
        return True
    v = spec.ov_version
    dilated = (spec.reduce == "max" and v >= 8) or (spec.reduce == "mean" and v >= 16)
    return dilated or all(d == 1 for d in spec.dilations)


def ir_files(spec: Spec) -> tuple[str, bytes]:
    """The IR of a one-layer net (Parameter "x", the layer, Results): .xml text, .bin bytes."""
    net = ir_builder(ir_layer(spec), spec.shape, IR_ELEMENT[spec.dtype])
    return net.xml(), bytes(net.bin())


def write_ir(spec: Spec, xml_path: str) -> tuple[str, bytes]:
    """Write the case's IR (.xml and, when it has constants, .bin beside it)."""
    xml, weights = ir_files(spec)
    with open(xml_path, "w") as f:
        f.write(xml)
    bin_path = xml_path[: -len(".xml")] + ".bin"
    if weights:
        with open(bin_path, "wb") as f:
            f.write(weights)
    return xml, weights


ONNX_TYPES = {
    "MaxPool": ("float32", "float16", "float64", "int8", "uint8"),
    "AveragePool": ("float32", "float16", "float64"),
    "GlobalMaxPool": ("float32", "float16", "float64"),
    "GlobalAveragePool": ("float32", "float16", "float64"),
}
"""The element types each ONNX op's type constraint admits (MaxPool's integers from opset 12)."""


def onnx_node(spec: Spec) -> OnnxNodeCall | None:
    node = _onnx_node(spec)
    if node is None or spec.dtype not in ONNX_TYPES[node.op]:
        return None
    if spec.dtype in ("int8", "uint8") and node.opset < 12:
        return None
    return node


def _onnx_node(spec: Spec) -> OnnxNodeCall | None:
    if spec.kind == "global":
        op = GLOBAL_ONNX.get(spec.reduce)
        return None if op is None else OnnxNodeCall(op, {}, spec.onnx_opset)
    dilated = any(d > 1 for d in spec.dilations)
    if dilated and (spec.onnx_opset < (19 if spec.reduce == "mean" else 10)):
        return None
    if spec.ceil and spec.onnx_opset < 10:
        return None
    attrs: dict[str, Any] = {"kernel_shape": list(spec.window), "strides": list(spec.strides)}
    if spec.auto_pad == "explicit":
        attrs["pads"] = [*spec.pads_begin, *spec.pads_end]
    else:
        attrs["auto_pad"] = ONNX_AUTO_PAD[spec.auto_pad]
    if dilated:
        attrs["dilations"] = list(spec.dilations)
    if spec.ceil:
        attrs["ceil_mode"] = 1
    if spec.reduce == "mean" and spec.count_pad:
        attrs["count_include_pad"] = 1
    op = "MaxPool" if spec.reduce == "max" else "AveragePool"
    return OnnxNodeCall(op, attrs, spec.onnx_opset)


def torch_call(spec: Spec) -> TorchCallSpec | None:
    dims = list(range(2, 2 + spec.rank))
    if spec.kind == "global":
        name = {"max": "amax", "mean": "mean", "sum": "sum"}[spec.reduce]
        return TorchCallSpec(name, {"dim": dims, "keepdim": True})
    if spec.auto_pad != "explicit" or spec.pads_begin != spec.pads_end:
        return None
    if spec.reduce == "mean" and any(d > 1 for d in spec.dilations):
        return None
    kind = "max" if spec.reduce == "max" else "avg"
    kwargs: dict[str, Any] = {
        "kernel_size": list(spec.window),
        "stride": list(spec.strides),
        "padding": list(spec.pads_begin),
        "ceil_mode": spec.ceil,
    }
    if kind == "max":
        kwargs["dilation"] = list(spec.dilations)
    else:
        kwargs["count_include_pad"] = spec.count_pad
    return TorchCallSpec(f"{kind}_pool{spec.rank}d", kwargs)


@dataclass(frozen=True)
class TfCallSpec:
    op_type: str
    """AvgPool or MaxPool (tf.nn.avg_pool / max_pool on N+2 dims, channels last)."""
    ksize: tuple[int, ...]
    strides: tuple[int, ...]
    padding: str


def tf_call(spec: Spec) -> TfCallSpec | None:
    """TensorFlow pools round down, pad SAME (the odd pad last) or VALID, never count the
    padding in an average, and take no dilation with strides; globals are not driven."""
    if spec.kind != "window" or spec.ceil or any(d != 1 for d in spec.dilations):
        return None
    if spec.auto_pad == "same_upper":
        padding = "SAME"
    elif spec.auto_pad == "valid" or (
        spec.auto_pad == "explicit" and not any(spec.pads_begin) and not any(spec.pads_end)
    ):
        padding = "VALID"
    else:
        return None
    if spec.reduce == "mean" and spec.count_pad and padding == "SAME":
        return None
    if spec.dtype not in ("float32", "float16", "float64", "bfloat16"):
        return None
    op = "MaxPool" if spec.reduce == "max" else "AvgPool"
    return TfCallSpec(op, (1, *spec.window, 1), (1, *spec.strides, 1), padding)
