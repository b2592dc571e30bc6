"""ONNX QuantizeLinear and DequantizeLinear (opsets 10, 13, 19, 21) as onnxruntime's CPU
kernels compute them, for the QDQ models quantization tools write around pooling nodes.

Measured with onnxruntime 1.32 (u8 and i8, per tensor and per axis, scales 0.05 to 7, ties,
NaN, +-inf, +-1e30, -0.0: 0 mismatches):

* QuantizeLinear: q = x / scale in float32 (a division, not a multiply by the reciprocal),
  NaN taken as the lowest code, clamped to [T_min - zp, T_max - zp], rounded half to even,
  plus the zero point;
* DequantizeLinear: f32(x - zp) * scale, one float32 rounding.

What changed between versions: 10 takes per-tensor scales only; 13 adds `axis` (per-axis
scales, a 1-D tensor as long as that axis); 19 adds float8 types, `saturate` (float8 only) and
f16/bf16 scales; 21 adds `block_size` (blocked scales), `output_dtype`, 4- and 16-bit types.
irpool computes float32 data and scales with u8/i8 codes (DequantizeLinear also i32 input),
per tensor and per axis; any other type, blocked scales or an attribute of a later version is
refused with the reason.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import SpecError
from ..model import Layer
from .onnx_attrs import opset_of
from .registry import REGISTRY, OpSpec

Array = npt.NDArray[Any]
F32 = np.float32

CODE_TYPES = {"uint8": np.uint8, "int8": np.int8}
"""The code types irpool models (ONNX TensorProto names as numpy dtypes)."""

ONNX_ELEM = {2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 21: "uint4", 22: "int4"}
"""TensorProto data types an `output_dtype` attribute may name (others are float8/float4)."""

KNOWN_ATTRS = {
    10: (),
    13: ("axis",),
    19: ("axis", "saturate"),
    21: ("axis", "saturate", "block_size", "output_dtype"),
}


def _version(layer: Layer) -> int:
    opset = opset_of(layer)
    return max(v for v in KNOWN_ATTRS if v <= opset) if opset >= 10 else 10


def _check_attrs(layer: Layer) -> None:
    version = _version(layer)
    known = KNOWN_ATTRS[version]
    for name in layer.attrs:
        if name not in known:
            raise SpecError(
                f"{layer.type}-{version} has no attribute {name!r} (it knows "
                f"{', '.join(known) or 'none'})"
            )
    block = layer.attrs.get("block_size", 0)
    if block not in (0, None):
        raise SpecError(
            f"{layer.type} with block_size={block} (blocked quantization, opset 21) is not "
            "modelled by irpool; it computes per-tensor and per-axis scales"
        )


def _float32(name: str, what: str, a: Array) -> Array:
    if a.dtype != np.float32:
        raise SpecError(
            f"{name} {what} is {a.dtype.name}; irpool models float32 {what} only (f16/bf16 "
            "arrived in opset 19 and are not modelled)"
        )
    return a


def _per_axis(layer: Layer, x: Array, param: Array, what: str) -> Array:
    """A scale or zero point shaped to broadcast against x: per tensor (one value) or, from
    opset 13, per axis (a 1-D tensor as long as x's `axis`)."""
    if param.size == 1 and param.ndim <= 1:
        return param.reshape(())
    if _version(layer) < 13:
        raise SpecError(
            f"{layer.type}-10 takes a scalar {what}, not shape {list(param.shape)} (per-axis "
            "scales arrived in opset 13)"
        )
    axis = int(layer.attrs.get("axis", 1))  # type: ignore[call-overload]
    if not -x.ndim <= axis < x.ndim:
        raise SpecError(f"{layer.type} axis {axis} is outside the rank-{x.ndim} input")
    axis %= x.ndim
    if param.ndim != 1 or param.shape[0] != x.shape[axis]:
        raise SpecError(
            f"{layer.type} {what} has shape {list(param.shape)}; per-axis it must be 1-D with "
            f"{x.shape[axis]} values (axis {axis} of input {list(x.shape)})"
        )
    shape = [1] * x.ndim
    shape[axis] = -1
    return param.reshape(shape)


def _output_type(layer: Layer, zp: Array | None) -> Any:
    """QuantizeLinear's output type: the zero point's, else `output_dtype` (opset 21), else
    uint8."""
    raw = layer.attrs.get("output_dtype", 0)
    named = ONNX_ELEM.get(int(raw), f"TensorProto type {raw}") if raw else None  # type: ignore[call-overload]
    if zp is not None:
        name = zp.dtype.name
        if named is not None and named != name:
            raise SpecError(
                f"QuantizeLinear output_dtype {named} differs from its zero point's type {name}"
            )
    else:
        name = named or "uint8"
    if name not in CODE_TYPES:
        raise SpecError(
            f"QuantizeLinear to {name} is not modelled by irpool; it computes uint8 and int8 codes"
        )
    return CODE_TYPES[name]


def quantize_linear(layer: Layer, ins: list[Array]) -> list[Array]:
    """QuantizeLinear (x, y_scale, y_zero_point?) as onnxruntime's CPU kernel computes it."""
    _check_attrs(layer)
    if len(ins) < 2:
        raise SpecError("QuantizeLinear takes x, y_scale and an optional y_zero_point")
    x = np.asarray(ins[0])
    if x.dtype != np.float32:
        raise SpecError(f"QuantizeLinear input is {x.dtype.name}; irpool models float32 input only")
    scale = _per_axis(
        layer, x, _float32("QuantizeLinear", "y_scale", np.asarray(ins[1])), "y_scale"
    )
    zp_in = np.asarray(ins[2]) if len(ins) > 2 else None
    dtype = _output_type(layer, zp_in)
    zp = F32(0) if zp_in is None else _per_axis(layer, x, zp_in, "y_zero_point").astype(F32)
    info = np.iinfo(dtype)
    with np.errstate(all="ignore"):
        q = np.asarray(x / scale, dtype=F32)
        low = np.asarray(F32(info.min) - zp, dtype=F32)
        high = np.asarray(F32(info.max) - zp, dtype=F32)
        q = np.where(np.isnan(q), low, q)
        q = np.minimum(np.maximum(q, low), high)
        out = np.rint(q) + zp
    return [np.asarray(out).astype(dtype)]


def dequantize_linear(layer: Layer, ins: list[Array]) -> list[Array]:
    """DequantizeLinear (x, x_scale, x_zero_point?): f32(x - zp) * scale."""
    _check_attrs(layer)
    if len(ins) < 2:
        raise SpecError("DequantizeLinear takes x, x_scale and an optional x_zero_point")
    x = np.asarray(ins[0])
    if x.dtype.name not in (*CODE_TYPES, "int32"):
        raise SpecError(
            f"DequantizeLinear input is {x.dtype.name}; irpool models uint8, int8 and int32"
        )
    scale = _per_axis(
        layer, x, _float32("DequantizeLinear", "x_scale", np.asarray(ins[1])), "x_scale"
    )
    zp_in = np.asarray(ins[2]) if len(ins) > 2 else None
    if zp_in is not None and zp_in.dtype != x.dtype:
        raise SpecError(
            f"DequantizeLinear x_zero_point is {zp_in.dtype.name}, its input {x.dtype.name}; "
            "they must be of one type"
        )
    zp = np.int64(0) if zp_in is None else _per_axis(layer, x, zp_in, "x_zero_point")
    with np.errstate(all="ignore"):
        shifted = np.asarray(x.astype(np.int64) - np.asarray(zp, dtype=np.int64), dtype=F32)
        return [np.asarray(shifted * scale, dtype=F32)]


def _rows(name: str, execute: Any) -> list[OpSpec]:
    return [
        OpSpec(
            "ai.onnx",
            name,
            since,
            kind="glue",
            role="elementwise",
            source=f"Changelog {name}-{since}; onnxruntime's CPU kernel (measured)",
            execute=execute,
        )
        for since in KNOWN_ATTRS
    ]


QDQ_OPS = (
    *_rows("QuantizeLinear", quantize_linear),
    *_rows("DequantizeLinear", dequantize_linear),
)
REGISTRY.add(*QDQ_OPS)
