"""Whole-plane pooling (one window per plane) as a reduction over transposed copies."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from ..geometry import PoolPlan
from .lowp import copy_compute

Array = npt.NDArray[Any]

GLOBAL_BLOCK = 256
"""Planes per transposed copy: the (taps, planes) block stays in cache while it is reduced
(gap7: 2.1x -> 1.2x openvino against one copy of the whole 2 MiB chunk)."""


def global_pool(
    raw: Array, plan: PoolPlan, name: str, cdt: np.dtype[Any], lowest: float | int
) -> Array:
    """One window per plane, summed in row-major order: per block of planes, a transposed
    copy (taps, planes) whose rows np.add.reduce adds one after the other (the outer axis of a
    C-ordered array is never summed pairwise)."""
    planes = raw.shape[0]
    size = math.prod(raw.shape[1:])
    flat = raw.reshape(planes, size)
    result = np.empty(planes, cdt)
    width = min(planes, GLOBAL_BLOCK)
    column = np.empty((size, width), cdt)
    starts = list(range(0, planes, width))
    if len(starts) > 1 and planes - starts[-1] == 1:
        starts.pop()  # no block of one plane (below), the last block takes it
        column = np.empty((size, width + 1), cdt)
    for i, b0 in enumerate(starts):
        b1 = starts[i + 1] if i + 1 < len(starts) else planes
        block = column[:, : b1 - b0]
        copy_compute(block, flat[b0:b1].T, name, cdt)
        if plan.reduce == "mean" and b1 - b0 == 1:
            # a single column is one contiguous run, which add.reduce would sum pairwise; a
            # cumulative sum adds the taps one after the other
            result[b0:b1] = np.cumsum(block[:, 0], dtype=cdt)[-1:]
        elif plan.reduce == "mean":
            np.add.reduce(block, axis=0, dtype=cdt, out=result[b0:b1])
        elif cdt.kind == "f":
            np.fmax(np.fmax.reduce(block, axis=0), lowest, out=result[b0:b1])
        else:
            np.maximum.reduce(block, axis=0, out=result[b0:b1])
    if plan.reduce == "mean" and cdt.kind == "f":
        # the sums above start from the first tap, openvino's from +0.0: the same value except
        # where every tap is -0.0 (+0.0 then)
        result += cdt.type(0)
    return result.reshape((planes,) + (1,) * len(plan.axes))
