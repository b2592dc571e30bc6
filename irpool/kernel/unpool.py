"""Max unpooling: executes an UnpoolPlan (the output shape and the index layout are the
plan's); the checks on the indices are the runtimes' own, with their words."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InputError
from ..families.unpool import UnpoolPlan

Array = npt.NDArray[Any]


def max_unpool(x: Array, indices: Array, plan: UnpoolPlan) -> Array:
    """Y: zeros of the plan's output shape with x's values at their indices."""
    if indices.shape != x.shape:
        raise InputError(
            "Index tensor shape should be same as that of the input data tensor to unpool. "
            f"Got {list(indices.shape)} for {list(x.shape)}"
        )
    if indices.dtype.kind not in "iu":
        raise InputError(f"MaxUnpool takes int64 indices, not {indices.dtype.name}")
    idx = indices.astype(np.int64)
    if plan.layout == "tensor":
        size = math.prod(plan.output_shape)
        flat = idx.reshape(-1)
        bad = (flat < 0) | (flat >= size)
        if bad.any():
            got = int(flat[int(np.argmax(bad))])
            raise InputError(f"Index value out of bounds. Got: {got}. Valid range is [0, {size}).")
        y = np.zeros(size, x.dtype)
        y[flat] = x.reshape(-1)  # numpy assigns repeated indices in order: the later one wins
        return y.reshape(plan.output_shape)
    planes = plan.input_shape[0] * plan.input_shape[1]
    plane = math.prod(plan.output_shape[2:])
    per = idx.reshape(planes, -1)
    bad = (per < 0) | (per >= plane)
    if bad.any():
        got = int(per[bad][-1])
        sizes = "x".join(str(s) for s in plan.output_shape[2:])
        raise InputError(f"Found an invalid max index: {got} (output volumes are of size {sizes})")
    y = np.zeros((planes, plane), x.dtype)
    rows = np.repeat(np.arange(planes), per.shape[1])
    y[rows, per.reshape(-1)] = x.reshape(-1)
    return y.reshape(plan.output_shape)
