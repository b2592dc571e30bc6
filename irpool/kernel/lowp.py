"""Element types: the compute type of a plan, conversions in and out of it (bfloat16 through
its bits, float64 saturated to float32, integers rounded as openvino converts them), and the
order-preserving int16 keys of float16/bfloat16 values."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from .halves import f16_to_f32, f32_to_bf16, f32_to_bf16_half_up_if_odd, f32_to_f16
from .scratch import Scratch

Array = npt.NDArray[Any]

F32_MAX = float(np.finfo(np.float32).max)
I32_TOP_F32 = 2147483520
"""The largest float32 below 2^31."""


def to_compute(chunk: Array, name: str, cdt: np.dtype[Any]) -> Array:
    if name == "bfloat16":
        return (chunk.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    if name == "float64" and cdt == np.float32:
        return np.clip(chunk, -F32_MAX, F32_MAX).astype(np.float32)
    if name == "float16" and cdt == np.float32:
        wide = np.empty(chunk.shape, np.float32)
        f16_to_f32(wide, chunk)
        return wide
    if chunk.dtype == cdt:
        return chunk
    return chunk.astype(cdt)


def widen(raw: Array, name: str, work: Scratch) -> tuple[Array, str]:
    """float16 data as float32 in one contiguous pass of integer operations (a copy into the
    scratch), and the name of its new dtype; other data as it is.  A float16 chunk converted
    this way first and then copied as float32 costs a fraction of converting the strided
    views the kernel reads (f16_avg: 2.7 ms -> see docs/performance.md)."""
    if name != "float16":
        return raw, name
    wide = work.take("wide", raw.shape, np.dtype(np.float32))
    f16_to_f32(wide.reshape(-1), np.ascontiguousarray(raw).reshape(-1))
    return wide, "float32"


def _int_range(dtype: np.dtype[Any]) -> tuple[int, int]:
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def copy_compute(dst: Array, src: Array, name: str, cdt: np.dtype[Any]) -> None:
    """dst[...] = src in the compute type (bfloat16 via its bits, float64 saturated to float32
    when narrowed, integers wrapped)."""
    if name == "bfloat16":
        np.multiply(src.view(np.uint16), 65536, out=dst.view(np.uint32), dtype=np.uint32)
    elif name == "float64" and cdt == np.float32:
        np.clip(src, -F32_MAX, F32_MAX, out=dst, casting="same_kind")
    elif name == "float16" and cdt == np.float32:
        f16_to_f32(dst, src)
    else:
        np.copyto(dst, src, casting="unsafe")


HALF_NAN_KEY = -0x7FFF
"""Key of a NaN in `half_keys`: below every number, -inf included."""


def half_keys(raw: Array, work: Scratch, fix_nan: bool) -> Array:
    """float16/bfloat16 bit patterns as int16 keys with the order of the numbers: +m for
    positives, -m for negatives (so +0 and -0 tie).  A NaN with the sign bit set is below -inf
    already; with `fix_nan`, one without it is moved to HALF_NAN_KEY too (else it is above
    +inf).  Four in-place integer passes instead of a where() with temporaries: about 2.4x
    faster (measured on a 16x112x112 chunk)."""
    bits = raw.view(np.int16)
    keys = work.take("keys", bits.shape, np.dtype(np.int16))
    sign = work.take("sign", bits.shape, np.dtype(np.int16))
    np.right_shift(bits, 15, out=sign)  # 0 or -1
    np.bitwise_and(sign, np.int16(0x7FFF), out=keys)
    np.bitwise_xor(bits, keys, out=keys)  # -(m + 1) for negatives
    np.subtract(keys, sign, out=keys)  # -m
    if fix_nan:
        infinity = 0x7C00 if raw.dtype.name == "float16" else 0x7F80
        keys[keys > infinity] = HALF_NAN_KEY
    return keys


def half_bits(values: Array, work: Scratch) -> Array:
    """Inverse of `half_keys` for keys of numbers (key 0 gives +0), in place: for a negative
    key -m, -m - 1 is ~m, and flipping its 15 low bits gives 0x8000 | m."""
    sign = work.take("bits_sign", values.shape, np.dtype(np.int16))
    np.right_shift(values, 15, out=sign)
    np.add(values, sign, out=values)
    np.bitwise_and(sign, np.int16(0x7FFF), out=sign)
    np.bitwise_xor(values, sign, out=values)
    return values


def flush_subnormals(values: Array) -> Array:
    """float32 (or bfloat16) values with their subnormals as zeros of their sign, in place."""
    if values.dtype == np.float32:
        bits = values.view(np.uint32)
        low = (bits & np.uint32(0x7F800000)) == 0
        bits[low] &= np.uint32(0x80000000)
    else:
        half = values.view(np.uint16)
        low = (half & np.uint16(0x7F80)) == 0
        half[low] &= np.uint16(0x8000)
    return values


def store(
    acc: Array, dst: Array, name: str, flush: bool = False, bf16_round: str = "nearest_even"
) -> None:
    """Write computed values to the output dtype (nearest even for floats; with `flush`,
    float32 subnormals become zeros before bfloat16 rounding, as openvino's CPU plugin
    converts on AVX-512; `bf16_round` half_up_if_odd: bfloat16 as that plugin rounds without
    AVX-512 (PoolPlan.bf16_round); float64 outputs computed in float32 saturate at +-FLT_MAX,
    as openvino converts them; integers saturate)."""
    if flush and name == "bfloat16" and acc.dtype == np.float32:
        acc = flush_subnormals(np.array(acc))
    if name == "float64" and acc.dtype == np.float32:
        acc = np.clip(acc, -F32_MAX, F32_MAX)
    elif dst.dtype.kind in "iu" and acc.dtype.kind in "iu" and acc.dtype != dst.dtype:
        acc = np.clip(acc, *_int_range(dst.dtype))
    elif acc.dtype == np.float32 and name in ("float16", "bfloat16"):
        if name == "float16":
            narrow = f32_to_f16
        elif bf16_round == "half_up_if_odd":
            narrow = f32_to_bf16_half_up_if_odd
        else:
            narrow = f32_to_bf16
        narrow(dst, acc, np.empty(acc.shape, np.uint32))
        return
    np.copyto(dst, acc, casting="unsafe")


def float_to_int(result: Array, dtype: np.dtype[Any]) -> Array:
    """A float mean to an integer type, as openvino's CPU plugin converts: saturating (int32 at
    2147483520), and a NaN (an empty window, 0/0) becomes 0 for 8-bit types and INT32_MIN for
    32/64-bit ones."""
    info = np.iinfo(dtype)
    nan_value = 0 if info.bits == 8 else np.iinfo(np.int32).min
    result = np.where(np.isnan(result), nan_value, result)
    # a float32 result reaches int32 through a reorder that saturates at the largest float32
    # below 2^31 (measured)
    top = I32_TOP_F32 if dtype == np.int32 else info.max
    return np.clip(result, info.min, top)


def integers_as_float32(x: Array) -> Array:
    """An integer tensor as openvino's float32 path sees it (64-bit integers wrap to 32)."""
    if x.dtype.itemsize == 8:
        x = x.astype(np.int32)
    return np.asarray(x.astype(np.float32))


def round_to_integer(values: Array, dtype: np.dtype[Any]) -> Array:
    """Float results back to an integer type as openvino converts them: half to even,
    saturating (64-bit types at 32 bits, the width they were computed in; int32 at 2147483520,
    the largest float32 below 2^31), NaN to 0 for 8-bit types and INT32_MIN otherwise
    (float_to_int)."""
    width = np.dtype(np.int32) if dtype.itemsize == 8 else dtype
    with np.errstate(invalid="ignore"):
        rounded = float_to_int(np.rint(values.astype(np.float64)), width)
    return np.asarray(rounded.astype(dtype))
