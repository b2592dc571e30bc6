"""onnxruntime's MLAS max kernels, emulated in their own order of operations (the NaN rules of
the plan's `mlas_*` policies)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..geometry import AxisPlan, PoolPlan

Array = npt.NDArray[Any]


def _maxps(acc: Array, v: Array) -> Array:
    """maxps(acc, v): v where either is NaN, else the larger."""
    return np.asarray(np.where(np.isnan(acc), v, np.maximum(acc, v)))


def _std_max(acc: Array, v: Array) -> Array:
    """std::max(acc, v): v only where acc < v."""
    return np.asarray(np.where(acc < v, v, acc))


def mlas_floor(values: Array, plan: PoolPlan, lowest: float | int) -> None:
    """NaN-free windows: the maximum, raised to lowest() where the kernel starts from it."""
    if plan.nan_rule != "mlas_2d":
        np.fmax(values, lowest, out=values)
        return
    axis = plan.axes[-1]
    start = np.arange(axis.out) * axis.stride - axis.pad_begin
    padded = (start < 0) | (start + axis.window > axis.size)
    if padded.any():
        values[..., padded] = np.fmax(values[..., padded], lowest)


def _maxps_fold(seq: Array, start: float | int) -> Array:
    """maxps folded over axis 1 from `start`: NaN where the last element is NaN, else the
    maximum of the elements after the last NaN (with `start` when there is no NaN)."""
    shape = seq.shape[:1] + seq.shape[2:]
    if seq.shape[1] == 0:
        return np.full(shape, start, seq.dtype)
    nan = np.isnan(seq)
    after_last_nan = np.cumsum(nan[:, ::-1], axis=1)[:, ::-1] == 0
    best = np.max(np.where(after_last_nan, seq, -np.inf), axis=1)
    result = np.where(nan.any(axis=1), best, np.maximum(best, start))
    return np.asarray(np.where(nan[:, -1], np.nan, result).astype(seq.dtype))


def _mlas_global(chunk: Array, lowest: float | int) -> Array:
    """MlasPoolGlobalKernel: four lanes folded with maxps over the plane, combined as
    maxps(maxps(l0, l2), maxps(l1, l3)), then the last size % 4 elements with std::max."""
    planes = chunk.shape[0]
    flat = chunk.reshape(planes, -1)
    whole = flat.shape[1] // 4 * 4
    lanes = _maxps_fold(flat[:, :whole].reshape(planes, -1, 4), lowest)
    total = _maxps(_maxps(lanes[:, 0], lanes[:, 2]), _maxps(lanes[:, 1], lanes[:, 3]))
    for k in range(whole, flat.shape[1]):
        total = _std_max(total, flat[:, k])
    return total.reshape((planes,) + (1,) * (chunk.ndim - 1))


def _fold_columns(cols: Array, v: Array, vector: int) -> Array:
    """One more row into the column folds: maxps for the columns MLAS reads four at a time,
    std::max for the last width % 4 ones."""
    new = np.empty_like(cols)
    new[..., :vector] = _maxps(cols[..., :vector], v[..., :vector])
    new[..., vector:] = _std_max(cols[..., vector:], v[..., vector:])
    return new


def _mlas_last_axis(cols: Array, axis: AxisPlan, lowest: float | int) -> Array:
    """The vector kernels' pass along the last axis: the folded columns padded with lowest()
    on both sides, each window folded with maxps from its first tap."""
    span = (axis.out - 1) * axis.stride + 1
    right = max(0, span + axis.window - 1 - axis.pad_begin - axis.size)
    widths = [(0, 0)] * (cols.ndim - 1) + [(axis.pad_begin, right)]
    buf = np.pad(cols, widths, constant_values=lowest)
    acc = buf[..., 0 : span : axis.stride]
    for t in range(1, axis.window):
        acc = _maxps(acc, buf[..., t : t + span : axis.stride])
    return acc


def _mlas_2d(chunk: Array, plan: PoolPlan, lowest: float | int) -> Array:
    """MlasPool2DVectorKernel: per output row, each input column folded over the window's rows
    inside the input, starting from the first of them; then the last-axis pass."""
    ah, aw = plan.axes
    starts = np.arange(ah.out) * ah.stride - ah.pad_begin
    first = np.maximum(starts, 0)
    ends = np.minimum(starts + ah.window, ah.size)
    cols = chunk[:, first, :]
    vector = aw.size // 4 * 4
    for offset in range(1, ah.window):
        valid = first + offset < ends
        if not valid.any():
            break
        v = chunk[:, np.minimum(first + offset, ah.size - 1), :]
        cols = np.where(valid[None, :, None], _fold_columns(cols, v, vector), cols)
    return _mlas_last_axis(cols, aw, lowest)


def _mlas_3d(chunk: Array, plan: PoolPlan, lowest: float | int) -> Array:
    """MlasPool3DVectorKernel: each input column folded from lowest() over the window's planes
    and rows inside the input (planes outer); then the last-axis pass."""
    ad, ah, aw = plan.axes
    d0 = np.arange(ad.out) * ad.stride - ad.pad_begin
    h0 = np.arange(ah.out) * ah.stride - ah.pad_begin
    cols = np.full((chunk.shape[0], ad.out, ah.out, aw.size), lowest, chunk.dtype)
    vector = aw.size // 4 * 4
    for td in range(ad.window):
        d = d0 + td
        for th in range(ah.window):
            h = h0 + th
            valid = ((d >= 0) & (d < ad.size))[:, None] & ((h >= 0) & (h < ah.size))[None, :]
            if not valid.any():
                continue
            rows = (np.clip(d, 0, ad.size - 1)[:, None], np.clip(h, 0, ah.size - 1)[None, :])
            v = chunk[:, rows[0], rows[1], :]
            cols = np.where(valid[None, :, :, None], _fold_columns(cols, v, vector), cols)
    return _mlas_last_axis(cols, aw, lowest)


def mlas_max(chunk: Array, plan: PoolPlan, lowest: float | int) -> Array:
    """Max pooling of a chunk (compute type) exactly as the plan's MLAS kernel computes it."""
    if plan.nan_rule == "mlas_global":
        return _mlas_global(chunk, lowest)
    if plan.nan_rule == "mlas_2d":
        return _mlas_2d(chunk, plan, lowest)
    return _mlas_3d(chunk, plan, lowest)
