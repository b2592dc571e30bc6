"""Constant folding as openvino's core does it when a model is compiled.

A Convert or a MaxPool (any version) whose input is a constant never runs in the CPU plugin: the
core evaluates it once with its reference implementation and the plugin stores the resulting
constant (ops/elements.py: `fold_convert`, `store_constant`).  AvgPool is not folded: it runs on
the stored constant.  Measured with openvino 2026.4.1 (docs/semantics.md "Constant folding").
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import numpy.typing as npt

from ..geometry import PoolPlan
from ..model import numpy_dtype
from .elements import FLOATS, FLT_MAX, clamp_keep_nan

Array = npt.NDArray[Any]


def _compute_type(et: str) -> np.dtype[Any]:
    if et in FLOATS:
        # f16 and bf16 constants are evaluated in float32, and so are f64 ones, clamped to
        # +-FLT_MAX first (measured: 16777217.0 gives 16777216, 1e300 gives FLT_MAX)
        return np.dtype(np.float32)
    if et in ("u64", "u32", "u16", "u8", "boolean"):
        return np.dtype(np.uint64)
    return np.dtype(np.int64)


def fold_max_pool(x: Array, plan: PoolPlan, et: str) -> Array:
    """The values of a MaxPool of the constant `x` (its declared type `et`), folded: every
    window starts from the lowest finite value of the type it is evaluated in (float32 for
    f32/f16/bf16 and for f64 clamped to +-FLT_MAX, or the 64-bit integer), and a tap replaces
    the maximum only when it
    is strictly greater (a NaN never wins, the first of equal taps stays: -0.0 before +0.0).
    bf16 results are rounded to nearest even (-FLT_MAX becomes -inf, subnormals are kept), as
    the core converts them back; f16 ones are returned in float32, in which the plugin keeps
    them (a Result rounds them to f16, a Convert to f32 after it keeps -FLT_MAX)."""
    cdt = _compute_type(et)
    if et == "f64":
        x = clamp_keep_nan(np.asarray(x, dtype=np.float64), -FLT_MAX, FLT_MAX)
    values = np.asarray(x).astype(cdt)
    if cdt.kind == "f":
        start: Any = np.finfo(cdt).min
    else:
        start = np.iinfo(cdt).min if et != "boolean" else 0
    best = np.full(plan.output_shape, start, dtype=cdt)
    positions = [np.arange(a.out, dtype=np.int64) * a.stride - a.pad_begin for a in plan.axes]
    for taps in itertools.product(*(range(a.window) for a in plan.axes)):
        index = []
        inside = np.ones((1,) * len(plan.axes), dtype=bool)
        for axis, (a, start_at, t) in enumerate(zip(plan.axes, positions, taps, strict=True)):
            at = start_at + t * a.dilation
            ok = (at >= 0) & (at < a.size)
            shape = [1] * len(plan.axes)
            shape[axis] = a.out
            inside = inside & ok.reshape(shape)
            index.append(np.clip(at, 0, a.size - 1))
        where: tuple[Any, ...] = (slice(None), slice(None), *np.ix_(*index))
        tap = values[where]
        np.copyto(best, tap, where=inside & (tap > best))
    if et == "f16":
        return best  # openvino holds it in float32 (the caller keeps it so)
    return np.asarray(best.astype(numpy_dtype(et)))
