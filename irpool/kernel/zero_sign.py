"""The sign of a zero maximum: the first zero tap's, as the runtimes' scans keep it.

openvino's CPU plugin, onnxruntime's reference loop and PyTorch scan a window in row-major
order and keep a tap only when it is strictly greater than the maximum so far (the NaN rules
differ, not this).  A window whose maximum is zero therefore keeps the first zero tap it meets,
+0.0 or -0.0.  The numpy core folds a window in another order (axis by axis, int16 keys for
half types, where both zeros are one key), so where the input holds a -0.0 and a maximum is
zero its sign is set here from the first zero tap; elsewhere nothing is done (two cheap
checks: a count of the zero maxima, then a search of the chunk for a -0.0).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import numpy.typing as npt

from ..geometry import PoolPlan

Array = npt.NDArray[Any]

SCAN_RULES = ("ignore", "first", "propagate")
"""The NaN rules of runtimes that keep the first maximal tap in row-major order (the MLAS
kernels fold with maxps, which keeps the later of two equal values: not fixed here)."""

FLOAT_NAMES = ("float64", "float32", "float16", "bfloat16")

_UNSIGNED = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def _bits(a: Array) -> Array:
    return a.view(_UNSIGNED[a.dtype.itemsize])


def first_zero_signs(raw: Array, plan: PoolPlan, values: Array) -> None:
    """Give each zero maximum of `values` (planes, *out), computed from the chunk `raw`
    (planes, *spatial) of the plan's dtype, the sign of its window's first zero tap."""
    if plan.reduce != "max" or plan.nan_rule not in SCAN_RULES or plan.dtype not in FLOAT_NAMES:
        return
    out_bits = _bits(values)
    width = 8 * values.dtype.itemsize
    sign = out_bits.dtype.type(1 << (width - 1))
    magnitude = out_bits.dtype.type((1 << (width - 1)) - 1)
    if plan.dtype == "bfloat16":
        some_zero = np.count_nonzero(out_bits & magnitude) < out_bits.size
    else:
        some_zero = np.count_nonzero(values) < values.size
    if not some_zero:
        return
    in_bits = _bits(raw)
    if not bool((in_bits == sign).any()):
        return  # no -0.0 in the chunk: every zero maximum is the +0.0 the core gives
    where = np.nonzero((out_bits & magnitude) == 0)
    planes, outs = where[0], where[1:]
    first = np.zeros(planes.size, dtype=bool)  # a zero tap was met (scanning backwards)
    negative = np.zeros(planes.size, dtype=bool)
    for taps in reversed(list(itertools.product(*(range(a.window) for a in plan.axes)))):
        inside = np.ones(planes.size, dtype=bool)
        position = []
        for t, j, a in zip(taps, outs, plan.axes, strict=True):
            pos = j * a.stride - a.pad_begin + t * a.dilation
            inside &= (pos >= 0) & (pos < a.size)
            position.append(np.clip(pos, 0, a.size - 1))
        tap = in_bits[(planes, *position)]
        zero = inside & ((tap & magnitude) == 0)
        first |= zero
        negative = np.where(zero, (tap & sign) != 0, negative)
    # a zero maximum with no zero tap (a subnormal flushed to a zero of its sign) keeps its sign
    target = out_bits[where]
    target[first] &= magnitude
    target[negative & first] |= sign
    out_bits[where] = target
