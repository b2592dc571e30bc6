"""The one pooling core: values and, for max, indices of any PoolPlan, with numpy only.

How it works (see docs/kernel.md for the measurements behind each choice):

* The input is viewed as planes (N*C, *spatial) and processed a chunk of planes at a time, so a
  large input is never copied or padded whole.
* No padding is materialised.  For each tap of the window (in row-major order over the window)
  the set of output cells whose tap lies inside the input is a box; the tap contributes to that
  box with one strided numpy operation.  Padding therefore never enters a sum or a max.
* Sums run tap by tap in row-major window order, so each output is accumulated in exactly the
  order openvino's CPU plugin uses (bit-identical float32 means, measured).
* The divisor of every window is a product of per-axis counts, so it is an outer product of
  small vectors resolved from the plan's divisor rule.
* Max indices: after the values, the first tap (in scan order) equal to the window's maximum is
  found by a reverse scan over the taps; index = window base + tap offset, then the plan's
  index layout (flat over the tensor, per (N, C) plane, row- or column-major) is applied.
* float16 and bfloat16 are computed in float32 and rounded back to nearest-even once; float64
  and int64 are narrowed to float32 / int32 when the plan says so (openvino's CPU plugin does).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from .errors import InputError
from .geometry import AxisPlan, PoolPlan

CHUNK_BYTES = 2 << 20
"""Target size of the float32 working copy of one chunk of planes."""

F32_MAX = float(np.finfo(np.float32).max)

Array = npt.NDArray[Any]


def bfloat16() -> np.dtype[Any] | None:
    """numpy dtype of ml_dtypes.bfloat16, or None when ml_dtypes is not installed."""
    try:
        import ml_dtypes
    except ImportError:
        return None
    dtype: np.dtype[Any] = np.dtype(ml_dtypes.bfloat16)
    return dtype


FLOAT_NAMES = ("float64", "float32", "float16", "bfloat16")
INT_NAMES = ("int8", "uint8", "int32", "int64")


@dataclass(frozen=True)
class _Tap:
    """One tap of one axis: the output range it reaches and the input slice feeding it."""

    t: int
    out: slice
    src: slice


@dataclass(frozen=True)
class _Taps:
    """All taps of a plan in row-major window order, with their flat window numbers."""

    number: tuple[int, ...]
    out: tuple[tuple[slice, ...], ...]
    src: tuple[tuple[slice, ...], ...]


def _axis_taps(axis: AxisPlan) -> list[_Tap]:
    taps = []
    for t in range(axis.window):
        lo, hi = axis.tap_range(t)
        if lo >= hi:
            continue
        start = lo * axis.stride - axis.pad_begin + t * axis.dilation
        stop = start + (hi - lo - 1) * axis.stride + 1
        taps.append(_Tap(t, slice(lo, hi), slice(start, stop, axis.stride)))
    return taps


@lru_cache(maxsize=64)
def _taps(axes: tuple[AxisPlan, ...]) -> _Taps:
    per_axis = [_axis_taps(a) for a in axes]
    windows = [a.window for a in axes]
    numbers, outs, srcs = [], [], []
    for combo in itertools.product(*per_axis):
        flat = 0
        for tap, k in zip(combo, windows, strict=True):
            flat = flat * k + tap.t
        numbers.append(flat)
        outs.append((slice(None), *(tap.out for tap in combo)))
        srcs.append((slice(None), *(tap.src for tap in combo)))
    return _Taps(tuple(numbers), tuple(outs), tuple(srcs))


def _outer(vectors: Sequence[Array]) -> Array:
    """Outer product of per-axis vectors, shaped like the spatial output."""
    result = vectors[0]
    for v in vectors[1:]:
        result = np.multiply.outer(result, v)
    return np.asarray(result)


def in_input_counts(axis: AxisPlan) -> Array:
    """Per window j: taps inside the input."""
    j = np.arange(axis.out)[:, None]
    pos = j * axis.stride - axis.pad_begin + np.arange(axis.window)[None, :] * axis.dilation
    return np.asarray(((pos >= 0) & (pos < axis.size)).sum(axis=1))


def declared_counts(axis: AxisPlan) -> Array:
    """Per window j: taps inside the declared pads (ceil overhang beyond pad_end not counted)."""
    j = np.arange(axis.out)[:, None]
    pos = j * axis.stride - axis.pad_begin + np.arange(axis.window)[None, :] * axis.dilation
    inside = (pos >= -axis.pad_begin) & (pos < axis.size + axis.pad_end)
    return np.asarray(inside.sum(axis=1))


def openvino_extents(axis: AxisPlan) -> Array:
    """Per window j: min(start + k_eff, n) - max(start, 0), which is 0 or negative exactly when
    the window has no tap in the input (openvino CPU divides an empty window's zero sum by it)."""
    start = np.arange(axis.out) * axis.stride - axis.pad_begin
    return np.minimum(start + axis.k_eff, axis.size) - np.maximum(start, 0)


def divisor(plan: PoolPlan) -> Array | float:
    """The divisor of every window, shaped like the spatial output (or a scalar)."""
    if plan.divisor == "full":
        return float(math.prod(a.window for a in plan.axes))
    vectors = []
    for axis in plan.axes:
        counts = in_input_counts(axis) if plan.divisor == "in_input" else declared_counts(axis)
        counts = counts.astype(np.float64)
        if plan.empty == "openvino" and plan.divisor == "in_input" and axis.dilation == 1:
            # an empty window divides by the clamped extent on undilated axes (openvino CPU);
            # dilated axes count taps, so there the divisor stays 0
            counts = np.where(counts > 0, counts, openvino_extents(axis))
        vectors.append(counts)
    return _outer(vectors)


def empty_windows(plan: PoolPlan) -> Array | None:
    """Mask of windows without any tap inside the input (spatial output shape), or None."""
    per_axis = [in_input_counts(a) == 0 for a in plan.axes]
    if not any(v.any() for v in per_axis):
        return None
    mask = per_axis[0]
    for v in per_axis[1:]:
        mask = np.logical_or.outer(mask, v)
    return np.asarray(mask)


# -- dtypes ------------------------------------------------------------------------------------


def _dtype_name(dtype: np.dtype[Any]) -> str:
    bf = bfloat16()
    return "bfloat16" if bf is not None and dtype == bf else dtype.name


def compute_dtype(dtype: np.dtype[Any], plan: PoolPlan) -> np.dtype[Any]:
    """The dtype the core works in for an input dtype under a plan."""
    name = _dtype_name(dtype)
    if name in ("float16", "bfloat16", "float32"):
        return np.dtype(np.float32)
    if name == "float64":
        return np.dtype(np.float32 if plan.narrow_64bit else np.float64)
    if name == "int64" and plan.narrow_64bit:
        return np.dtype(np.int32)
    if plan.reduce == "mean":
        return np.dtype(np.int64 if plan.int_mean == "trunc" else np.int32)
    return dtype


def _to_compute(chunk: Array, name: str, cdt: np.dtype[Any]) -> Array:
    if name == "bfloat16":
        return (chunk.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    if name == "float64" and cdt == np.float32:
        return np.clip(chunk, -F32_MAX, F32_MAX).astype(np.float32)
    if chunk.dtype == cdt:
        return chunk
    return chunk.astype(cdt)


def _int_range(dtype: np.dtype[Any]) -> tuple[int, int]:
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def _lowest(dtype: np.dtype[Any]) -> float | int:
    if dtype.kind == "f":
        return float(np.finfo(dtype).min)
    return int(np.iinfo(dtype).min)


def max_start(name: str, compute: np.dtype[Any], plan: PoolPlan) -> tuple[float | int, float | int]:
    """(start value of every max, value of a window without taps in the input).

    The start is the lowest finite value of the compute type, as openvino's CPU plugin starts
    (float16 outputs then show -inf where nothing beats it).  For bfloat16 input with an empty
    window somewhere in the layer, that plugin switches to bfloat16's own lowest value for every
    window (measured).  With the '-inf' rule an empty window is -inf.
    """
    lowest = _lowest(compute)
    if name == "bfloat16" and plan.empty == "lowest" and empty_windows(plan) is not None:
        lowest = BF16_LOWEST
    if plan.empty == "-inf" and compute.kind == "f":
        return lowest, -math.inf
    return lowest, lowest


BF16_LOWEST = float(np.array([0xFF7F0000], dtype=np.uint32).view(np.float32)[0])


# -- the core ----------------------------------------------------------------------------------


def check_input(x: Array, plan: PoolPlan) -> str:
    """The dtype name of x if the core supports it for the plan; raise otherwise."""
    name = _dtype_name(x.dtype)
    allowed = FLOAT_NAMES + INT_NAMES
    if name not in allowed:
        raise InputError(f"dtype {name} is not supported; expected one of {', '.join(allowed)}")
    if tuple(x.shape) != plan.input_shape:
        raise InputError(
            f"input shape {list(x.shape)} does not match the plan's {list(plan.input_shape)}"
        )
    return name


def pool(x: Array, plan: PoolPlan) -> tuple[Array, Array | None]:
    """Pool x (N, C, *spatial) as the plan says: (values, indices or None)."""
    name = check_input(x, plan)
    cdt = compute_dtype(x.dtype, plan)
    out = np.empty(plan.output_shape, dtype=x.dtype)
    want_indices = plan.indices and plan.reduce == "max"
    idx = np.empty(plan.output_shape, dtype=np.dtype(plan.index_dtype)) if want_indices else None
    planes = plan.input_shape[0] * plan.input_shape[1]
    spatial_in = plan.input_shape[2:]
    spatial_out = plan.output_shape[2:]
    xs = x.reshape((planes, *spatial_in))
    out_s = out.reshape((planes, *spatial_out))
    idx_s = idx.reshape((planes, *spatial_out)) if idx is not None else None
    plane_size = max(1, math.prod(spatial_in)) * max(cdt.itemsize, 4)
    rows = max(1, CHUNK_BYTES // plane_size)
    taps = _taps(plan.axes)
    direct = cdt == x.dtype and name != "bfloat16"
    lowest, empty_value = max_start(name, cdt, plan)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        for p0 in range(0, planes, rows):
            p1 = min(planes, p0 + rows)
            chunk = _to_compute(xs[p0:p1], name, cdt)
            acc = out_s[p0:p1] if direct else np.empty((p1 - p0, *spatial_out), cdt)
            if plan.reduce == "mean":
                _mean(chunk, acc, plan, taps, out.dtype)
            else:
                _max(chunk, acc, plan, taps, lowest, empty_value)
                if idx_s is not None:
                    idx_s[p0:p1] = _indices(chunk, acc, plan, taps, p0, lowest)
            if not direct:
                if out.dtype.kind in "iu" and acc.dtype.kind in "iu":
                    acc = np.clip(acc, *_int_range(out.dtype))
                _store(acc, out_s[p0:p1], name)
    return out, idx


def _store(acc: Array, dst: Array, name: str) -> None:
    """Write computed values to the output dtype (nearest even for floats; float64 outputs
    computed in float32 saturate at +-FLT_MAX, as openvino converts them)."""
    if name == "float64" and acc.dtype == np.float32:
        acc = np.clip(acc, -F32_MAX, F32_MAX)
    dst[...] = acc.astype(dst.dtype)


def _float_to_int(result: Array, dtype: np.dtype[Any]) -> Array:
    """A float mean to an integer type, as openvino's CPU plugin converts: saturating, and a
    NaN (an empty window, 0/0) becomes 0 for 8-bit types and INT32_MIN for 32/64-bit ones."""
    info = np.iinfo(dtype)
    nan_value = 0 if info.bits == 8 else np.iinfo(np.int32).min
    result = np.where(np.isnan(result), nan_value, result)
    return np.clip(result, info.min, info.max)


def _run_taps(acc: Array, chunk: Array, taps: _Taps, op: Callable[..., Any]) -> None:
    for o, s in zip(taps.out, taps.src, strict=True):
        view = acc[o]
        op(view, chunk[s], out=view)


def _mean(chunk: Array, acc: Array, plan: PoolPlan, taps: _Taps, out_dtype: np.dtype[Any]) -> None:
    work = acc if acc.dtype == chunk.dtype else np.empty(acc.shape, chunk.dtype)
    work.fill(0)
    _run_taps(work, chunk, taps, np.add)
    div = divisor(plan)
    if work.dtype.kind == "f":
        np.divide(work, np.asarray(div, dtype=work.dtype), out=work)
        result = work
    elif plan.int_mean == "trunc":
        d = np.asarray(div, dtype=np.int64)
        q = np.abs(work) // np.where(d == 0, 1, d)
        result = np.where(d == 0, 0, np.sign(work) * q)
    else:
        # openvino CPU: the int32 sum in float32, times the float32 reciprocal of the count,
        # rounded half to even (measured: the reciprocal, not a division, decides x.5 cases)
        recip = np.float32(1) / np.asarray(div, dtype=np.float32)
        result = np.rint(work.astype(np.float32) * recip)
    if plan.empty in ("zero", "nan") and plan.divisor != "full":
        zero = np.asarray(div) == 0
        if zero.any():
            result[:, zero] = np.nan if plan.empty == "nan" and work.dtype.kind == "f" else 0
    if result is not acc:
        if acc.dtype.kind in "iu" and result.dtype.kind == "f":
            result = _float_to_int(result, out_dtype)
        acc[...] = result


def _max(
    chunk: Array,
    acc: Array,
    plan: PoolPlan,
    taps: _Taps,
    lowest: float | int,
    empty_value: float | int,
) -> None:
    if chunk.dtype.kind != "f":
        acc.fill(lowest)
        _run_taps(acc, chunk, taps, np.maximum)
    elif plan.nan_max == "ignore":
        # openvino: start from lowest() and keep a tap only when greater, so NaN never wins and
        # -inf windows give lowest(); np.fmax does both
        acc.fill(lowest)
        _run_taps(acc, chunk, taps, np.fmax)
    else:
        acc.fill(-np.inf)
        _run_taps(acc, chunk, taps, np.fmax if plan.nan_max == "first" else np.maximum)
        if plan.nan_max == "first" and np.isnan(chunk).any():
            first = _first_tap_values(chunk, plan)
            acc[np.isnan(first)] = np.nan
    mask = empty_windows(plan)
    if mask is not None:
        acc[:, mask] = empty_value


def _first_positions(axis: AxisPlan) -> Array:
    """Per window: input position of its first tap inside the input (clamped when none)."""
    j = np.arange(axis.out)
    start = j * axis.stride - axis.pad_begin
    t = np.where(start < 0, -(start // axis.dilation), 0)
    pos = start + t * axis.dilation
    return np.asarray(np.clip(pos, 0, axis.size - 1))


def _first_tap_values(chunk: Array, plan: PoolPlan) -> Array:
    index: tuple[Any, ...] = (slice(None), *np.ix_(*[_first_positions(a) for a in plan.axes]))
    return np.asarray(chunk[index])


def _strides(plan: PoolPlan) -> list[int]:
    sizes = [a.size for a in plan.axes]
    if plan.column_major:
        return [math.prod(sizes[:i]) for i in range(len(sizes))]
    return [math.prod(sizes[i + 1 :]) for i in range(len(sizes))]


def _indices(
    chunk: Array, acc: Array, plan: PoolPlan, taps: _Taps, p0: int, lowest: float | int
) -> Array:
    n_taps = math.prod(a.window for a in plan.axes)
    tap_dtype = np.int16 if n_taps < 32000 else np.int32
    found = np.full(acc.shape, -1, dtype=tap_dtype)
    for number, o, s in zip(
        reversed(taps.number), reversed(taps.out), reversed(taps.src), strict=True
    ):
        np.copyto(found[o], number, where=np.equal(chunk[s], acc[o]))
    floating = chunk.dtype.kind == "f"
    if floating and plan.nan_max != "ignore" and np.isnan(chunk).any():
        nan_value = np.isnan(acc)
        if plan.nan_max == "propagate":
            last = np.full(acc.shape, -1, dtype=tap_dtype)
            for number, o, s in zip(taps.number, taps.out, taps.src, strict=True):
                np.copyto(last[o], number, where=np.isnan(chunk[s]))
            found = np.where(nan_value, last, found)
        else:
            found = np.where(nan_value, _first_tap_numbers(plan), found)
    if plan.nan_max == "ignore":
        # openvino starts from the lowest value and its first element and replaces them only
        # when a tap is strictly greater, so a window whose maximum is lowest() points at 0
        found[acc <= lowest] = -1
    strides = _strides(plan)
    lut = np.zeros(n_taps + 1, dtype=np.int64)  # lut[-1] (no tap) stays 0
    for flat in range(n_taps):
        rest, offset = flat, 0
        for axis, stride in zip(reversed(plan.axes), reversed(strides), strict=True):
            rest, t = divmod(rest, axis.window)
            offset += t * axis.dilation * stride
        lut[flat] = offset
    base_axes = [
        (np.arange(a.out) * a.stride - a.pad_begin) * st
        for a, st in zip(plan.axes, strides, strict=True)
    ]
    base = base_axes[0]
    for v in base_axes[1:]:
        base = np.add.outer(base, v)
    spatial = np.where(found >= 0, base + lut[found], 0)
    plane_size = math.prod(a.size for a in plan.axes)
    planes = np.arange(p0, p0 + acc.shape[0], dtype=np.int64) * plane_size
    flat_index = spatial + planes.reshape((-1,) + (1,) * len(plan.axes))
    if plan.index_axis > 0:
        flat_index %= math.prod(plan.input_shape[plan.index_axis :])
    return np.asarray(flat_index)


def _first_tap_numbers(plan: PoolPlan) -> Array:
    numbers = []
    for a in plan.axes:
        start = np.arange(a.out) * a.stride - a.pad_begin
        numbers.append(np.where(start < 0, -(start // a.dilation), 0))
    result = numbers[0]
    for axis, v in zip(plan.axes[1:], numbers[1:], strict=True):
        result = np.add.outer(result * axis.window, v)
    return np.asarray(result)
