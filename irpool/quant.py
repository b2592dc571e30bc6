"""com.microsoft QLinearAveragePool: dequantise, pool in float32 with the same kernel, requantise.

    x_f = x_scale * (x - x_zero_point)                     (float32; padding is a real 0.0)
    y_f = sum(window of x_f) / divisor                      (divisor: the full kernel volume with
                                                              count_include_pad, else the taps
                                                              inside the input; measured, D10)
    y   = clamp(int32(round_half_even(y_f / y_scale + y_zero_point)))

as onnxruntime's kernel computes it (qlinear_pool.cc: a division by y_scale, not a
multiplication; everything in float32; the int32 conversion is x86's truncating one, so NaN,
+-inf and values beyond the int32 range become INT32_MIN and clamp to the type's minimum: a
y_scale of 0 or NaN gives 0 for u8 and -128 for i8, measured with onnxruntime 1.32).  u8 and i8;
`channels_last=1` means NHWC input and output.  Scales and zero points are per tensor.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from .errors import InputError
from .geometry import PoolPlan
from .kernel import pool
from .ops.elements import cvtt_i32

Array = npt.NDArray[Any]


def _scalar(value: Array | float | int | None, name: str, default: float | int) -> Any:
    if value is None:
        return default
    arr = np.asarray(value)
    if arr.size != 1:
        raise InputError(f"{name} has {arr.size} values; QLinearAveragePool takes one per tensor")
    return arr.reshape(()).item()


def qlinear_average_pool(
    x: Array,
    x_scale: Array | float,
    x_zero_point: Array | int | None,
    y_scale: Array | float,
    y_zero_point: Array | int | None,
    used: PoolPlan,
    channels_last: bool = False,
) -> Array:
    """QLinearAveragePool of x (u8 or i8); `used` is the float32 plan of its pooling (N, C,
    *spatial; the op's entry sets its divisor rule)."""
    if x.dtype not in (np.uint8, np.int8):
        raise InputError(f"QLinearAveragePool takes uint8 or int8 input, not {x.dtype}")
    data = np.moveaxis(x, -1, 1) if channels_last else x
    zero_x = np.int32(_scalar(x_zero_point, "x_zero_point", 0))
    zero_y = np.float32(_scalar(y_zero_point, "y_zero_point", 0))
    scale_x = np.float32(_scalar(x_scale, "x_scale", 1.0))
    scale_y = np.float32(_scalar(y_scale, "y_scale", 1.0))
    real = (data.astype(np.int32) - zero_x).astype(np.float32) * scale_x
    values, _ = pool(real, used)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        quantized = np.rint(values / scale_y + zero_y)
    # static_cast<int32_t> is x86's truncating conversion: NaN, +-inf and anything outside the
    # int32 range become INT32_MIN, which the clamp then turns into the type's minimum
    info = np.iinfo(x.dtype)
    result = np.clip(cvtt_i32(quantized), info.min, info.max).astype(x.dtype)
    return np.moveaxis(result, 1, -1) if channels_last else result
