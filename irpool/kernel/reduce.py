"""Whole-plane pooling (one window per plane) as a reduction over a transposed copy."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from ..geometry import PoolPlan
from .lowp import copy_compute

Array = npt.NDArray[Any]


def global_pool(
    raw: Array, plan: PoolPlan, name: str, cdt: np.dtype[Any], lowest: float | int
) -> Array:
    """One window per plane: a reduction over a transposed copy, summed in row-major order."""
    planes = raw.shape[0]
    size = math.prod(raw.shape[1:])
    column = np.empty((size, planes), cdt)
    copy_compute(column, raw.reshape(planes, size).T, name, cdt)
    shape = (planes,) + (1,) * len(plan.axes)
    if plan.reduce == "mean":
        if planes == 1:
            # one plane is one contiguous run, which add.reduce sums pairwise from 8 values
            # up; the plan's order (sum_order, row_major) adds the taps one after the other,
            # and a cumulative sum does (bit-identical to openvino, measured)
            return np.asarray(np.cumsum(column[:, 0], dtype=cdt)[-1:]).reshape(shape)
        # add.reduce over the first axis of a C-ordered array adds the rows in order
        return np.asarray(np.add.reduce(column, axis=0, dtype=cdt)).reshape(shape)
    if cdt.kind == "f":
        return np.asarray(np.fmax(np.fmax.reduce(column, axis=0), lowest)).reshape(shape)
    return np.asarray(np.maximum.reduce(column, axis=0)).reshape(shape)
