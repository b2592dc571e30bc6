"""com.microsoft QLinearGlobalAveragePool: executes a QGlobalPlan with onnxruntime's x86 MLAS
arithmetic (exact int32 sums, a float32 scale, half-to-even rounding)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InputError, SpecError
from ..families.qglobal import QGlobalPlan

Array = npt.NDArray[Any]
F32 = np.float32


def _scalar(value: Array | None, name: str, dtype: Any) -> Any:
    if value is None:
        raise InputError(f"QLinearGlobalAveragePool needs its input {name}")
    a = np.asarray(value)
    if a.size != 1:
        raise InputError(f"Input {name} must be a scalar or 1D tensor of size 1")
    if np.dtype(dtype).kind == "f":
        return F32(a.reshape(-1)[0])
    return int(a.reshape(-1)[0])


def qlinear_global_average(ins: list[Array | None], plan: QGlobalPlan) -> Array:
    x = ins[0]
    assert x is not None
    x_scale = _scalar(ins[1] if len(ins) > 1 else None, "x_scale", F32)
    x_zp = _scalar(ins[2] if len(ins) > 2 else None, "x_zero_point", x.dtype)
    y_scale = _scalar(ins[3] if len(ins) > 3 else None, "y_scale", F32)
    y_zp = _scalar(ins[4] if len(ins) > 4 else None, "y_zero_point", x.dtype)
    info = np.iinfo(x.dtype)
    size = plan.size
    with np.errstate(all="ignore"):
        scale = F32(x_scale / F32(y_scale * F32(size)))
    if size >= 0x1000000 or not scale >= F32(2.0**-32) or scale >= F32(256.0):
        raise SpecError("QLinearGlobalAveragePool parameter out of computation range!")
    planes = np.moveaxis(x, -1, 1) if plan.channels_last else x
    n, c = planes.shape[:2]
    acc = planes.reshape(n, c, size).astype(np.int64).sum(-1) - x_zp * size
    value = (acc.astype(np.int32).astype(F32) * scale).astype(F32)
    value = np.clip(value, F32(info.min - y_zp), F32(info.max - y_zp))
    y = (np.rint(value).astype(np.int64) + y_zp).astype(x.dtype)
    y = y.reshape((n, c) + (1,) * (x.ndim - 2))
    return np.asarray(np.moveaxis(y, 1, -1) if plan.channels_last else y)
