"""The glue `run` executes between pooling layers: Parameter, Const, Convert, Result, and the
shape-only ops (Squeeze, Unsqueeze) and pass-throughs (Identity, Dropout) of ONNX models.

Each is one registry entry with a role (how the graph walk treats it) and, where it computes
something from its inputs, the function that does.  What Convert computes was measured with
openvino 2026.4.1 (docs/semantics.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..model import Layer, numpy_dtype
from .registry import REGISTRY, OpSpec, Role

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


def _entry(domain: str, family: str, role: Role, **kw: Any) -> OpSpec:
    return OpSpec(domain, family, 1, kind="glue", role=role, source="glue", **kw)  # type: ignore[arg-type]


GLUE_OPS = (
    _entry("openvino", "Parameter", "parameter"),
    _entry("openvino", "Const", "const"),
    _entry("openvino", "Convert", "convert"),
    _entry("openvino", "Result", "result"),
    _entry("openvino", "Squeeze", "reshape", execute=squeeze),
    _entry("openvino", "Unsqueeze", "reshape", execute=unsqueeze),
    _entry("openvino", "Identity", "identity"),
    _entry("ai.onnx", "Identity", "identity"),
    _entry("ai.onnx", "Dropout", "identity"),
    _entry("ai.onnx", "Squeeze", "reshape", execute=squeeze),
    _entry("ai.onnx", "Unsqueeze", "reshape", execute=unsqueeze),
)
REGISTRY.add(*GLUE_OPS)
