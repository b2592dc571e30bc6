"""The glue `run` executes between pooling layers: Parameter, Const, Convert, Result, the
shape-only ops (Squeeze, Unsqueeze, Reshape, Split, Concat), pass-throughs (Identity, Dropout)
and the elementwise ops openvino's converters decompose Lp pooling into (Abs, Sign, ReLU, Sqrt,
Multiply, Power, ConvertLike).

Each is one registry entry with a role (how the graph walk treats it) and, where it computes
something from its inputs, the function that does.  What Convert computes was measured with
openvino 2026.4.1 (docs/semantics.md); so was every elementwise op's handling of NaN, signed
zeros and infinities on float32 (docs/semantics.md, "Glue"):

* Abs clears the sign bit; Sign gives NaN for NaN, +0 for +-0 and +-1 for +-inf; ReLU gives 0
  for NaN and +0 for -0; Sqrt keeps -0 and gives NaN below 0; Multiply is IEEE.
* Power with a scalar exponent: 1 copies, 2 is x*x, 3 is x*x*x, 4 is (x*x)*(x*x), 0.5 is the
  square root, any other the C library's powf (bit for bit); a tensor exponent: powf per
  element.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InputError, SpecError
from ..model import Layer, element_type_of_numpy, numpy_dtype
from .registry import REGISTRY, Domain, OpSpec, Role

Array = npt.NDArray[Any]


def convert(array: Array, element_type: str) -> Array:
    """openvino's Convert: floats to integers truncate toward zero and wrap (measured)."""
    dtype = numpy_dtype(element_type)
    if dtype.kind in "iu" and array.dtype.kind not in "iu":
        with np.errstate(invalid="ignore"):
            wide = np.nan_to_num(np.trunc(array.astype(np.float64)), nan=0.0)
            return np.asarray(wide.astype(np.int64).astype(dtype))
    return np.asarray(array.astype(dtype))


def squeeze(layer: Layer, ins: list[Array]) -> list[Array]:
    """Squeeze: axes from the attribute (ONNX opset < 13) or the second input; none: every
    axis of size 1."""
    raw = _axes(layer, ins)
    x = ins[0]
    if raw is None:
        return [np.asarray(np.squeeze(x))]
    return [np.asarray(np.squeeze(x, axis=tuple(int(a) % x.ndim for a in raw)))]


def unsqueeze(layer: Layer, ins: list[Array]) -> list[Array]:
    """Unsqueeze: a dim of size 1 inserted at each axis (of the result's rank)."""
    raw = _axes(layer, ins) or []
    x = ins[0]
    rank = x.ndim + len(raw)
    for a in sorted(int(a) % rank for a in raw):
        x = np.expand_dims(x, a)
    return [np.asarray(x)]


def _axes(layer: Layer, ins: list[Array]) -> list[int] | None:
    given = layer.attrs.get("axes")
    if isinstance(given, (list, tuple)):
        return [int(v) for v in given]
    if len(ins) > 1:
        return [int(v) for v in np.asarray(ins[1]).ravel()]
    return None


def _float32(x: Array) -> bool:
    return x.dtype.kind == "f" or x.dtype.name == "bfloat16"


def abs_(layer: Layer, ins: list[Array]) -> list[Array]:
    return [np.asarray(np.abs(ins[0]))]


def sign(layer: Layer, ins: list[Array]) -> list[Array]:
    """openvino's Sign: NaN stays NaN, +-0 gives +0 (measured)."""
    x = ins[0]
    out = np.sign(x)
    if out.dtype.kind == "f":
        out = np.where(out == 0, out.dtype.type(0), out)
    return [np.asarray(out.astype(x.dtype))]


def relu(layer: Layer, ins: list[Array]) -> list[Array]:
    """openvino's ReLU: NaN gives 0, -0 gives +0 (measured)."""
    x = ins[0]
    return [np.asarray(np.where(x > 0, x, x.dtype.type(0)).astype(x.dtype))]


def sqrt(layer: Layer, ins: list[Array]) -> list[Array]:
    with np.errstate(invalid="ignore"):
        return [np.asarray(np.sqrt(ins[0]).astype(ins[0].dtype))]


def _broadcast(layer: Layer, a: Array, b: Array) -> None:
    mode = layer.data.get("auto_broadcast", "numpy").strip().lower()
    if mode == "none" and a.shape != b.shape:
        raise InputError(
            f"{layer.type} with auto_broadcast=none takes inputs of one shape; got "
            f"{list(a.shape)} and {list(b.shape)}"
        )
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise InputError(
            f"{layer.type}: shapes {list(a.shape)} and {list(b.shape)} do not broadcast"
        ) from None


def multiply(layer: Layer, ins: list[Array]) -> list[Array]:
    a, b = ins[0], ins[1]
    _broadcast(layer, a, b)
    with np.errstate(all="ignore"):
        return [np.asarray(np.multiply(a, b).astype(a.dtype))]


def power(layer: Layer, ins: list[Array]) -> list[Array]:
    """openvino's Power on float32 (measured): small integer exponents and 0.5 by
    multiplication and the square root, anything else by the C library's powf."""
    from ..kernel.libm import power_rules, powf

    x, e = ins[0], ins[1]
    _broadcast(layer, x, e)
    if not _float32(x) or x.dtype.itemsize > 4:
        with np.errstate(all="ignore"):
            return [np.asarray(np.power(x, e.astype(x.dtype)).astype(x.dtype))]
    xf = x.astype(np.float32)
    if e.size == 1:
        shape = np.broadcast_shapes(x.shape, e.shape)
        out = np.broadcast_to(power_rules(xf, float(e.reshape(-1)[0])), shape)
    else:
        out = powf(xf, e.astype(np.float32))
    return [np.asarray(np.asarray(out).astype(x.dtype))]


def convert_like(layer: Layer, ins: list[Array]) -> list[Array]:
    """ConvertLike: the first input converted as Convert would to the second's type."""
    target = element_type_of_numpy(ins[1].dtype.name)
    if target is None:
        raise SpecError(f"ConvertLike to {ins[1].dtype.name} is not supported")
    return [convert(ins[0], target)]


def reshape(layer: Layer, ins: list[Array]) -> list[Array]:
    """Reshape-1: the target shape is the second input; with special_zero, a 0 copies the
    input's dim at that position; one -1 takes what is left."""
    x = ins[0]
    target = [int(v) for v in np.asarray(ins[1]).reshape(-1)]
    special = layer.data.get("special_zero", "false").strip().lower() == "true"
    if special:
        target = [x.shape[i] if v == 0 and i < x.ndim else v for i, v in enumerate(target)]
    if target.count(-1) > 1:
        raise SpecError(f"Reshape target {target} has more than one -1")
    try:
        return [np.asarray(x.reshape(target))]
    except ValueError:
        raise InputError(
            f"Reshape of {list(x.shape)} to {target}: the element counts differ"
        ) from None


def split(layer: Layer, ins: list[Array]) -> list[Array]:
    """Split-1: `num_splits` equal parts along the axis the second input names."""
    x = ins[0]
    axis = int(np.asarray(ins[1]).reshape(-1)[0])
    parts = int(layer.data.get("num_splits", "1"))
    if not -x.ndim <= axis < x.ndim:
        raise SpecError(f"Split axis {axis} is outside the rank-{x.ndim} input")
    if parts < 1 or x.shape[axis] % parts:
        raise SpecError(
            f"Split: dim {x.shape[axis]} of axis {axis} does not divide into {parts} parts"
        )
    return [np.asarray(p) for p in np.split(x, parts, axis=axis)]


def concat(layer: Layer, ins: list[Array]) -> list[Array]:
    axis = int(layer.data.get("axis", "0"))
    try:
        return [np.asarray(np.concatenate(ins, axis=axis))]
    except (ValueError, np.exceptions.AxisError) as e:
        raise InputError(f"Concat on axis {axis}: {e}") from None


def _entries(domain: Domain, role: Role, *names: str, **executed: Any) -> list[OpSpec]:
    """One entry per op of `domain` in `role`: `names` need no code of their own, `executed`
    maps an op to the function that computes it."""
    ops = {**dict.fromkeys(names), **executed}
    return [
        OpSpec(domain, name, 1, kind="glue", role=role, source="glue", execute=run)
        for name, run in ops.items()
    ]


GLUE_OPS = (
    *_entries("openvino", "parameter", "Parameter"),
    *_entries("openvino", "const", "Const"),
    *_entries("openvino", "convert", "Convert"),
    *_entries("openvino", "result", "Result"),
    *_entries(
        "openvino",
        "reshape",
        Squeeze=squeeze,
        Unsqueeze=unsqueeze,
        Reshape=reshape,
        Split=split,
        Concat=concat,
    ),
    *_entries(
        "openvino",
        "elementwise",
        Abs=abs_,
        Sign=sign,
        ReLU=relu,
        Sqrt=sqrt,
        Multiply=multiply,
        Power=power,
        ConvertLike=convert_like,
    ),
    *_entries("openvino", "identity", "Identity"),
    *_entries("ai.onnx", "identity", "Identity", "Dropout"),
    *_entries("ai.onnx", "reshape", Squeeze=squeeze, Unsqueeze=unsqueeze),
)
REGISTRY.add(*GLUE_OPS)
