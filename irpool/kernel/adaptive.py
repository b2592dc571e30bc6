"""Adaptive pooling: executes an AdaptivePlan (windows, divisions and the max rule are the
plan's; nothing is decided here).

Every output's window is gathered tap by tap, all outputs at once: per axis, the positions
start + t (t < the longest window) clamped into the input, with a mask of the taps that belong
to the window; taps are visited in row-major window order, so sums run in the order the plan's
runtime adds them.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import numpy.typing as npt

from ..families.adaptive import AdaptiveAxis, AdaptivePlan
from .lowp import integers_as_float32, to_compute

Array = npt.NDArray[Any]


def _positions(a: AdaptiveAxis) -> tuple[Array, Array]:
    """(positions, in-window mask), both (out, longest): tap t of window i sits at start_i + t."""
    first, last = a.windows()
    starts, ends = first[:, None], last[:, None]
    taps = np.arange(max(int((last - first).max(initial=0)), 1), dtype=np.int64)[None, :]
    pos = starts + taps
    valid = pos < ends
    return np.minimum(pos, max(a.size - 1, 0)), valid


def _compute_input(x: Array, plan: AdaptivePlan) -> Array:
    cdt = np.dtype(plan.compute)
    if x.dtype.kind in "iu":
        return integers_as_float32(x) if plan.narrow_64bit else np.asarray(x.astype(cdt))
    return np.asarray(to_compute(np.ascontiguousarray(x), plan.dtype, cdt))


def store_rounded(values: Array, dtype: np.dtype[Any]) -> Array:
    """float32 results back to an integer type as openvino's reorders convert them: half to
    even, saturating (32- and 64-bit types at the int32 range a float32 holds: the top is
    2147483520), NaN to the type's lowest (measured)."""
    v = values.astype(np.float64)
    if dtype.itemsize >= 4:
        lo, hi = -(2.0**31), 2147483520.0
        width = np.dtype(np.int32)
    else:
        info = np.iinfo(dtype)
        lo, hi = float(info.min), float(info.max)
        width = dtype
    r = np.clip(np.rint(np.where(np.isnan(v), lo, v)), lo, hi)
    return np.asarray(r.astype(np.int64).astype(width).astype(dtype))


def adaptive_pool(x: Array, plan: AdaptivePlan) -> list[Array]:
    """Values (and, for max with indices, the indices) of an adaptive pooling plan."""
    out_dtype = x.dtype
    if tuple(x.shape) != plan.input_shape:
        from ..errors import InputError

        raise InputError(
            f"input shape {list(x.shape)} does not match the plan's {list(plan.input_shape)}"
        )
    shape = plan.output_shape
    index_dtype = np.dtype(plan.index_dtype)
    if 0 in shape:
        outs = [np.zeros(shape, out_dtype)]
        return [*outs, np.zeros(shape, index_dtype)] if plan.indices else outs
    if plan.as_reduce is not None and not plan.indices:
        from .reduction import reduce

        return [reduce(x, plan.as_reduce)]
    xc = _compute_input(x, plan)
    cdt = xc.dtype
    gathered = [_positions(a) for a in plan.axes]
    strides = [
        int(np.prod(plan.input_shape[3 + k :], dtype=np.int64)) for k in range(len(plan.axes))
    ]
    nd = len(plan.axes)
    acc: Array | None = None
    idx: Array | None = None
    with np.errstate(invalid="ignore", over="ignore"):
        for tap in itertools.product(*(range(max(a.longest, 1)) for a in plan.axes)):
            rows = [g[0][:, t] for g, t in zip(gathered, tap, strict=True)]
            valid: Array = np.ones((1,) * nd, dtype=bool)
            flat: Array = np.zeros((1,) * nd, dtype=np.int64)
            for k, ((_, ok), t) in enumerate(zip(gathered, tap, strict=True)):
                shape_k = [1] * nd
                shape_k[k] = -1
                valid = valid & ok[:, t].reshape(shape_k)
                flat = flat + rows[k].reshape(shape_k) * strides[k]
            where: tuple[Any, ...] = (slice(None), slice(None), *np.ix_(*rows))
            values = xc[where]
            if plan.reduce == "mean":
                term = np.where(valid, values, cdt.type(0))
                acc = term if acc is None else acc + term
                continue
            flat_b = np.broadcast_to(flat, values.shape)
            if acc is None or idx is None:  # tap 0 belongs to every window
                if plan.max_rule == "first_strict":
                    acc, idx = values.copy(), flat_b.copy()
                else:
                    acc = np.where(np.isnan(values), values, np.maximum(values, -np.inf))
                    idx = flat_b.copy()
                continue
            if plan.max_rule == "first_strict":
                take = valid & (acc < values)
            else:
                take = valid & ((values > acc) | np.isnan(values))
            acc = np.where(take, values, acc)
            idx = np.where(take, flat_b, idx)
        assert acc is not None
        if plan.reduce == "mean":
            acc = _divide(acc.astype(cdt), plan)
    result = np.asarray(acc, dtype=cdt).reshape(shape)
    if out_dtype.kind in "iu":
        values_out = store_rounded(result, out_dtype)
    else:
        values_out = np.asarray(result.astype(out_dtype))
    if plan.as_reduce is not None:  # the indices are not read: the values are ReduceMax's
        from .reduction import reduce

        values_out = reduce(x, plan.as_reduce)
    if plan.indices:
        assert idx is not None
        return [values_out, np.asarray(np.broadcast_to(idx, shape).astype(index_dtype))]
    return [values_out]


def _divide(sums: Array, plan: AdaptivePlan) -> Array:
    """The plan's division of the window sums: once by the window volume, or axis by axis."""
    cdt = sums.dtype
    nd = len(plan.axes)
    lengths = []
    for k, a in enumerate(plan.axes):
        shape_k = [1] * nd
        shape_k[k] = -1
        lengths.append(np.asarray(a.lengths, dtype=np.int64).reshape(shape_k))
    if plan.division == "once":
        volume: Array = np.ones((1,) * nd, dtype=np.int64)
        for length in lengths:
            volume = volume * length
        return np.asarray(sums / volume.astype(cdt))
    for length in lengths:
        sums = np.asarray(sums / length.astype(cdt))
    return sums
