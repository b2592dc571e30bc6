"""Lp pooling: executes an LpPlan under the rule of its convention (onnxruntime's formula,
openvino's decomposition, PyTorch's signed formula); the plan decides every number."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import numpy.typing as npt

from ..families.lp import LpPlan
from ..geometry import PoolPlan
from .libm import pow_to_float, power_rules, powf

Array = npt.NDArray[Any]
F32 = np.float32


def _taps(plan: PoolPlan, dtype: Any) -> Any:
    """Per window tap (row-major window order): (positions per axis clamped into the input,
    the mask of windows whose tap lies inside the input)."""
    axes = plan.axes
    nd = len(axes)
    for tap in itertools.product(*(range(a.window) for a in axes)):
        rows = []
        valid: Array = np.ones((1,) * nd, dtype=bool)
        for k, (a, t) in enumerate(zip(axes, tap, strict=True)):
            pos = np.arange(a.out, dtype=np.int64) * a.stride - a.pad_begin + t * a.dilation
            ok = (pos >= 0) & (pos < a.size)
            shape = [1] * nd
            shape[k] = -1
            valid = valid & ok.reshape(shape)
            rows.append(np.clip(pos, 0, max(a.size - 1, 0)))
        yield rows, valid


def window_sums(t: Array, plan: PoolPlan) -> Array:
    """Sum over the taps inside the input of each window, in row-major window order from +0,
    in t's type."""
    out = np.zeros(plan.output_shape, t.dtype)
    if out.size == 0:
        return out
    zero = t.dtype.type(0)
    for rows, valid in _taps(plan, t.dtype):
        where: tuple[Any, ...] = (slice(None), slice(None), *np.ix_(*rows))
        out = out + np.where(valid, t[where], zero)
    return np.asarray(out.astype(t.dtype))


def window_counts(plan: PoolPlan) -> Array:
    """Taps inside the input of each window."""
    count = np.zeros(plan.output_shape[2:], np.int64)
    for _, valid in _taps(plan, np.float32):
        count = count + valid
    return count


def lp_pool(x: Array, plan: LpPlan) -> Array:
    """The output of an Lp pooling plan, in x's dtype."""
    out_dtype = x.dtype
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        if plan.rule == "onnxruntime":
            terms = pow_to_float(np.abs(x.astype(F32)), plan.p)
            sums = window_sums(terms, plan.window)
            y = powf(sums, float(F32(1) / F32(plan.p)))
        elif plan.rule == "openvino":
            terms = power_rules(np.abs(x.astype(F32)), plan.p)
            if plan.sum_plan is not None:
                from .reduction import reduce

                m = reduce(terms, plan.sum_plan)
            else:
                from . import pool

                assert plan.average is not None
                m, _ = pool(terms, plan.average)
                m = np.asarray((m * F32(plan.scale)).astype(F32))
            y = m if plan.p == 1 else power_rules(m, float(F32(1.0 / plan.p)))
        else:
            # PyTorch's float32 steps: x.pow(p) (small integer powers by multiplication),
            # avg_pool (row-major sum, / taps inside), * prod(k), .pow(1 / p)
            terms = _torch_pow(x.astype(F32), plan.p)
            sums = window_sums(terms, plan.window)
            counts = np.maximum(window_counts(plan.window), 1).astype(F32)
            mean = np.asarray((sums / counts).astype(F32))
            y = _torch_pow(np.asarray((mean * F32(plan.scale)).astype(F32)), 1.0 / plan.p)
    return np.asarray(np.asarray(y).astype(out_dtype))


def _torch_pow(x: Array, exponent: float) -> Array:
    """torch.pow(float32 tensor, scalar): 2 and 3 by multiplication, 0.5 the square root,
    others powf (its scalar-exponent fast paths)."""
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        if exponent == 2:
            return np.asarray(x * x)
        if exponent == 3:
            return np.asarray(x * x * x)
        if exponent == 0.5:
            return np.asarray(np.sqrt(x))
        if exponent == 1:
            return np.asarray(x.copy())
    return powf(x, exponent)
