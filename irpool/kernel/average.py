"""Average pooling: window sums in openvino's row-major tap order, then the plan's divisor."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from ..geometry import PoolPlan
from .lowp import float_to_int
from .scratch import Scratch
from .windows import Layout, accumulate, divisor_cached, fill_phases, taps_of

Array = npt.NDArray[Any]


def sum_chunk(raw: Array, lay: Layout, name: str, cdt: np.dtype[Any], work: Scratch) -> Array:
    """Window sums of a chunk, taps added in row-major window order starting from +0."""
    buffers = fill_phases(raw, lay, name, cdt, 0, work)
    if cdt.kind == "f":
        zero = cdt.type(0)
        first: Callable[[Array, Array], Any] = lambda src, acc: np.add(src, zero, out=acc)  # noqa: E731
    else:
        first = lambda src, acc: np.copyto(acc, src)  # noqa: E731
    _, values = accumulate(buffers, lay, raw.shape[0], cdt, first, np.add, work)
    return values


def direct_sum_chunk(raw: Array, plan: PoolPlan, cdt: np.dtype[Any], work: Scratch) -> Array:
    """Window sums in row-major tap order from strided slices of the chunk itself; a tap in the
    padding adds +0 to a sum that starts at +0, which changes nothing, so it is skipped."""
    taps = taps_of(plan.axes)
    acc = work.take("acc", (raw.shape[0], *(a.out for a in plan.axes)), cdt)
    first = True
    for out, src in zip(taps.out, taps.src, strict=True):
        region = acc[out]
        if first and region.shape == acc.shape:
            np.add(raw[src], cdt.type(0), out=acc)
        else:
            if first:
                acc.fill(0)
            np.add(region, raw[src], out=region)
        first = False
    if first:
        acc.fill(0)
    return acc


def mean_values(
    work: Array,
    plan: PoolPlan,
    out_dtype: np.dtype[Any],
    rows: slice = slice(None),
    scratch: Scratch | None = None,
    dst: Array | None = None,
) -> Array:
    """Sums to means under the plan's divisor, integer rounding and empty-window rules;
    `rows` selects the output rows of the first spatial axis the sums belong to."""
    div = divisor_cached(plan)
    if isinstance(div, np.ndarray):
        div = div[rows]
    if work.dtype.kind == "f":
        if dst is not None and dst.dtype == work.dtype:
            into: Array | None = dst  # the means go straight to the output
        else:
            into = None if scratch is None else scratch.take("mean", work.shape, work.dtype)
        result = np.divide(work, np.asarray(div, dtype=work.dtype), out=into)
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
    if out_dtype.kind in "iu" and result.dtype.kind == "f":
        result = float_to_int(result, out_dtype)
    return np.asarray(result)
