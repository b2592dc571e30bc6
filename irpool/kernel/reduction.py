"""Reductions (Reduce*, global pooling): executes a ReducePlan in the order of operations the
plan names (openvino's JIT schedule, onnxruntime's MLAS global kernel, or one sequential fold).

Folds are vectorised over the outputs: a strictly sequential float32 sum is np.add.accumulate
(np.sum is pairwise), and the x86 MAXPS fold `d = d > s ? d : s` has a closed form (the
maximum of the elements after the last NaN, the later of equal zeros).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from ..families.reduce import ReducePlan
from ..ops.elements import bf16_odd_round

Array = npt.NDArray[Any]
F32 = np.float32
LOWEST32 = F32(np.finfo(np.float32).min)
INT32_MIN = -(2**31)


def seq_sum(a: Array, start: Array | None = None) -> Array:
    """float32 sum of each row of a (..., n), one element at a time from +0.0 (or `start`)."""
    a = np.asarray(a, F32)
    init = np.zeros((*a.shape[:-1], 1), F32) if start is None else np.asarray(start, F32)[..., None]
    if a.shape[-1] == 0:
        return np.asarray(init[..., 0].copy())
    return np.asarray(np.add.accumulate(np.concatenate([init, a], axis=-1), axis=-1)[..., -1])


def maxps(a: Array, b: Array) -> Array:
    """x86 MAXPS: a > b ? a : b (a NaN in either operand gives b; of two zeros, b)."""
    return np.asarray(np.where(a > b, a, b))


def stdmax(a: Array, b: Array) -> Array:
    """std::max(a, b) = a < b ? b : a: a NaN `a` is kept, a NaN `b` never taken."""
    return np.asarray(np.where(a < b, b, a))


def maxps_fold(start: Array, seq: Array) -> Array:
    """d = start; for s in each row of seq: d = maxps(d, s).  A NaN becomes the running value
    and is replaced by the next element, so the result is NaN only when the last element is;
    after the last NaN the fold restarts at the next element (not at `start`); of equal values
    the later wins (seen only in the sign of a zero maximum)."""
    seq = np.asarray(seq, F32)
    start_b = np.broadcast_to(np.asarray(start, F32), seq.shape[:-1])
    n = seq.shape[-1]
    if n == 0:
        return np.asarray(start_b.copy())
    ext = np.concatenate([start_b[..., None], seq], axis=-1)
    nan = np.isnan(ext)
    rev = nan[..., ::-1]
    last_nan = np.where(rev.any(axis=-1), n - rev.argmax(axis=-1), -1)
    live = np.arange(n + 1) > last_nan[..., None]
    m = np.where(live, ext, -np.inf).max(axis=-1).astype(F32)
    zero = live & (ext == 0)
    if zero.any():
        last_zero = np.where(zero.any(-1), n - zero[..., ::-1].argmax(axis=-1), 0)
        value = np.take_along_axis(ext, last_zero[..., None], axis=-1)[..., 0]
        m = np.where(m == 0, value, m)
    return np.asarray(np.where(last_nan == n, ext[..., -1], m).astype(F32))


def _tree(lanes: Array, op: Callable[[Array, Array], Array]) -> Array:
    """The plugin's horizontal reduction of its lanes (the last axis): 16 lanes (AVX-512)
    ((0-3 op 4-7) op (8-11 op 12-15)), 8 lanes (AVX2) (0-3 op 4-7); then lanes
    (0 op 1) op (2 op 3) of that."""
    n = lanes.shape[-1]
    if n == 16:
        a = op(lanes[..., 0:4], lanes[..., 4:8])
        b = op(lanes[..., 8:12], lanes[..., 12:16])
        t = op(a, b)
    elif n == 8:
        t = op(lanes[..., 0:4], lanes[..., 4:8])
    else:
        raise ValueError(f"no horizontal reduction of {n} lanes is modelled")
    return op(op(t[..., 0], t[..., 1]), op(t[..., 2], t[..., 3]))


Store = Callable[[Array], Array] | None


def _fold(
    rows: Array,
    is_max: bool,
    chunk: int,
    lanes: int,
    acc: Array,
    lane_init: Any,
    store: Store = None,
    scalar_mode: Array | None = None,
) -> Array:
    """rows (K, R): each output's elements in visiting order, folded into acc (K,).

    chunk 0 or < lanes: sequential (a max in scalar mode still takes the tree step of its untouched
    lanes first, which turns a running -inf into lowest()).  Otherwise R is a whole number of
    chunks, each folded by `lanes` lanes (lane l: elements l, l + lanes, ... of its first
    chunk // lanes * lanes), the tree combined with the running value (tree first), then the
    rest one by one.  `store` is where the plugin writes the running value to an integer
    output buffer."""
    k, r = rows.shape
    if chunk == 0 or chunk < lanes:
        if is_max and scalar_mode is not None and chunk > 0:
            for s0 in range(0, r, chunk):
                acc = np.where(scalar_mode, maxps(np.full(k, lane_init, F32), acc), acc)
                acc = maxps_fold(acc, rows[:, s0 : s0 + chunk])
                if store is not None:
                    acc = store(acc)
            return acc
        out = maxps_fold(acc, rows) if is_max else seq_sum(rows, acc)
        return out if store is None else store(out)
    count = r // chunk
    whole = chunk // lanes * lanes
    chunks = rows.reshape(k, count, chunk)
    blocks = chunks[:, :, :whole].reshape(k, count, whole // lanes, lanes)
    per_lane = np.swapaxes(blocks, -1, -2)  # (k, count, lanes, blocks)
    if is_max:
        folded = maxps_fold(np.full(per_lane.shape[:-1], lane_init, F32), per_lane)
    else:
        folded = seq_sum(per_lane)
    op = maxps if is_max else (lambda a, b: np.asarray(np.add(a, b, dtype=F32)))
    trees = _tree(folded, op)  # (k, count)
    if is_max or store is not None:
        write = store if store is not None else (lambda v: v)
        for j in range(count):
            acc = write(op(trees[:, j], acc))
            tail = chunks[:, j, whole:]
            acc = write(maxps_fold(acc, tail) if is_max else seq_sum(tail, acc))
        return acc
    # tree + running value, then the tail one by one: one fold over [tree_0, tail_0, tree_1, ...]
    seq = np.concatenate([trees[:, :, None], chunks[:, :, whole:]], axis=2).reshape(k, -1)
    return seq_sum(seq, acc)


def _trunc_store(v: Array, acc_dtype: np.dtype[Any], scalar: Array | None = None) -> Array:
    """The plugin's integer store of a float32 running value: truncated toward zero (NaN and
    out-of-range give INT32_MIN), then for 8-bit buffers packed: int8 saturates; uint8's vector
    store saturates to [0, 255], its scalar store (packusdw then packuswb) turns 32768 and more
    into 0.  `scalar` marks the outputs written by the scalar store."""
    t = np.trunc(np.asarray(v, np.float64))
    bad = ~np.isfinite(t) | (t > 2**31 - 1) | (t < INT32_MIN)
    t = np.where(bad, INT32_MIN, t)
    if acc_dtype == np.int8:
        t = np.clip(t, -128, 127)
    elif acc_dtype == np.uint8:
        vector = np.clip(t, 0, 255)
        packed = np.where(t >= 32768, 0, np.clip(t, 0, 255))
        t = vector if scalar is None else np.where(scalar, packed, vector)
    return np.asarray(t.astype(F32))


def _scalar_mask(plan: ReducePlan) -> Array:
    """The outputs (in row order) the plugin writes with its scalar store."""
    out5 = [1 if r else d for d, r in zip(plan.view, plan.reduced, strict=True)]
    idx = np.indices(out5).reshape(5, -1)
    flat = np.zeros(idx.shape[1], np.int64)
    for a in plan.scalar_axes:
        flat = flat * out5[a] + idx[a]
    return np.asarray(flat >= plan.scalar_from)


def _to_float32(x: Array) -> Array:
    """The float32 values openvino's CPU plugin reduces: f64 saturated at +-FLT_MAX."""
    if x.dtype == np.float64:
        big = float(np.finfo(F32).max)
        return np.asarray(np.clip(x, -big, big).astype(F32))
    return np.asarray(x.astype(F32))


def _wrap_int(v: Array, out: np.dtype[Any]) -> Array:
    return np.asarray(np.asarray(v, np.int64).astype(np.int32).astype(out))


def _empty(plan: ReducePlan, out: np.dtype[Any]) -> Array:
    """A reduction over a zero-size axis (measured): sums, norms and means 0 (onnxruntime,
    openvino; PyTorch: a NaN mean); max the lowest value of the output precision (openvino; a
    bfloat16 max without AVX-512 has a float32 output whose lowest() its Convert turns into
    -inf) or -inf."""
    shape = plan.output_shape
    if plan.kind != "max":
        fill = np.nan if plan.kind == "mean" and plan.empty == "nan_or_refuse" else 0
        return np.full(shape, fill, dtype=out)
    if plan.empty != "openvino":
        return np.full(shape, -np.inf, dtype=out)
    if out.name == "bfloat16" and plan.bf16_round == "half_up_if_odd":
        # a float32 output buffer (lowest()) through the Convert: -inf
        return np.full(shape, _bf16_half_up_if_odd(np.asarray(LOWEST32))).view(out)
    if out.name == "bfloat16":
        return np.full(shape, np.uint16(0xFF7F)).view(out)
    if out.kind == "f":
        with np.errstate(over="ignore"):
            return np.full(shape, np.finfo(F32).min, F32).astype(out)
    if out in (np.dtype(np.int8), np.dtype(np.uint8)):
        return np.full(shape, np.iinfo(out).min, out)
    return _wrap_int(np.full(shape, INT32_MIN, np.int64), out)


def reduce(x: Array, plan: ReducePlan) -> Array:
    """The output of a reduction plan."""
    out_dtype = x.dtype
    if x.size == 0 or math.prod(plan.output_shape) == 0 or plan.count == 0:
        return _empty(plan, out_dtype)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        if plan.order == "mlas_global":
            return _mlas_global(x, plan)
        if plan.order == "sequential":
            return _sequential(x, plan)
        return _openvino(x, plan)


def _rows(x: Array, axes: tuple[int, ...]) -> Array:
    """(outputs, reduced elements): each output's elements in row-major order."""
    keep = [i for i in range(x.ndim) if i not in axes]
    count = math.prod(x.shape[a] for a in axes)
    return np.asarray(np.transpose(x, keep + list(axes)).reshape(-1, count))


def _finish(res: Array, plan: ReducePlan, dtype: Any) -> Array:
    if plan.kind == "mean":
        return np.asarray((res / dtype(plan.count)).astype(dtype))
    if plan.kind == "l2":
        return np.asarray(np.sqrt(res).astype(dtype))
    return np.asarray(res.astype(dtype))


def _sequential(x: Array, plan: ReducePlan) -> Array:
    """One fold in row-major order in the compute type (PyTorch, onnxruntime's other paths)."""
    cdt = np.dtype(plan.compute)
    xf = np.asarray(x.astype(cdt))
    if plan.kind == "l1":
        xf = np.abs(xf)
    elif plan.kind == "l2":
        xf = xf * xf
    rows = _rows(xf, plan.axes)
    if plan.kind == "max":
        if plan.nan_max == "propagate":
            res = np.max(rows, axis=1)
        else:  # std::max from the first element
            res = rows[:, 0]
            for j in range(1, rows.shape[1]):
                res = stdmax(res, rows[:, j])
    else:
        acc = np.zeros((rows.shape[0], 1), cdt)
        res = np.add.accumulate(np.concatenate([acc, rows], axis=1), axis=1)[:, -1]
    res = _finish(np.asarray(res), plan, cdt.type)
    return np.asarray(res.reshape(plan.output_shape).astype(x.dtype))


def _mlas_global(x: Array, plan: ReducePlan) -> Array:
    """onnxruntime's MLAS global pooling kernel on float32 (f16 computed in float32)."""
    xf = np.asarray(x.astype(F32))
    n, c = xf.shape[:2]
    size = plan.count
    rows = xf.reshape(n * c, size)
    whole = size // 4 * 4
    per_lane = np.swapaxes(rows[:, :whole].reshape(n * c, whole // 4, 4), 1, 2)
    if plan.kind == "mean":
        lanes = seq_sum(per_lane)
        res = (lanes[:, 0] + lanes[:, 2]) + (lanes[:, 1] + lanes[:, 3])
        res = seq_sum(rows[:, whole:], res)
        res = (res / F32(size)).astype(F32)
    else:
        lanes = maxps_fold(np.full((n * c, 4), LOWEST32), per_lane)
        res = maxps(maxps(lanes[:, 0], lanes[:, 2]), maxps(lanes[:, 1], lanes[:, 3]))
        for k in range(whole, size):
            res = stdmax(res, rows[:, k])
    return np.asarray(res.reshape(plan.output_shape).astype(x.dtype))


def _openvino(x: Array, plan: ReducePlan) -> Array:
    """openvino's CPU plugin (JIT schedule or reference path), element types included."""
    in_dtype = x.dtype
    is_int = in_dtype.kind in "iu"
    xf, acc_dtype = ov_float32(x)
    if plan.kind == "l1":
        xf = np.abs(xf)
    elif plan.kind == "l2":
        xf = xf * xf
    fold = _OvFold(plan, is_int, acc_dtype)
    if plan.order == "ov_reference":
        rows = _rows(xf, plan.axes)
        if is_int:
            is_max = plan.kind == "max"
            res = seq_sum(rows) if not is_max else maxps_fold(np.full(len(rows), LOWEST32), rows)
        else:
            res = fold(rows, 0, plan.count)
    elif plan.two_stage:
        res = _two_stage(xf, plan, fold)
    else:
        view, red = plan.view, plan.reduced
        keep = [k for k in range(5) if not red[k]]
        reduced = [k for k in range(5) if red[k]]
        size = math.prod(view[k] for k in reduced)
        rows = np.transpose(xf.reshape(view), keep + reduced).reshape(-1, size)
        mask = _scalar_mask(plan) if (acc_dtype == np.uint8 or red[4]) else None
        res = fold(
            rows,
            plan.chunk,
            plan.segment,
            mask=mask if acc_dtype == np.uint8 else None,
            smode=mask if red[4] else None,
        )
    res = _finish(np.asarray(res, F32), plan, F32).reshape(plan.output_shape)
    return _ov_output(res, plan, in_dtype, acc_dtype)


def ov_float32(x: Array) -> tuple[Array, np.dtype[Any]]:
    """The float32 values the plugin folds, and the type of its output buffer (integer data:
    8-bit types their own, the others int32, 64-bit values wrapped to 32 bits first)."""
    in_dtype = x.dtype
    if in_dtype.kind not in "iu":
        return _to_float32(x), np.dtype(np.int32)
    narrow = in_dtype in (np.dtype(np.int8), np.dtype(np.uint8), np.dtype(np.int32))
    xi = x if narrow else x.astype(np.int64).astype(np.int32)
    acc_dtype = in_dtype if in_dtype.itemsize == 1 else np.dtype(np.int32)
    return np.asarray(xi.astype(F32)), acc_dtype


class _OvFold:
    """The plugin's fold of rows (see _fold) with its initial values; integer data stores the
    running value into the integer output after every `segment` elements."""

    def __init__(self, plan: ReducePlan, is_int: bool, acc_dtype: np.dtype[Any]) -> None:
        self.is_max = plan.kind == "max"
        self.is_int = is_int
        self.lanes = plan.lanes
        self.acc_dtype = acc_dtype
        # u8 outputs whose every store packs (AVX2), else the scalar-store mask decides
        self.packs = np.asarray(True) if plan.u8_vector_packs else None
        if is_int:
            self.lane_init: Any = F32(INT32_MIN) if self.is_max else F32(0)
            lowest_of: dict[Any, int] = {np.dtype(np.int8): -128, np.dtype(np.uint8): 0}
            first = lowest_of.get(acc_dtype, INT32_MIN)
            self.dst_init: Any = first if self.is_max else 0
        else:
            self.lane_init = LOWEST32 if self.is_max else F32(0)
            self.dst_init = self.lane_init

    def __call__(
        self,
        rows: Array,
        chunk: int,
        segment: int,
        acc: Array | None = None,
        mask: Array | None = None,
        smode: Array | None = None,
    ) -> Array:
        k, r = rows.shape
        if acc is None:
            acc = np.full(k, self.dst_init, F32)
        if not self.is_int:
            return _fold(rows, self.is_max, chunk, self.lanes, acc, self.lane_init, None, smode)
        packs = self.packs

        def write(v: Array) -> Array:
            return _trunc_store(v, self.acc_dtype, packs if packs is not None else mask)

        for s0 in range(0, r, max(segment, 1)):
            part = rows[:, s0 : s0 + max(segment, 1)]
            acc = _fold(part, self.is_max, chunk, self.lanes, acc, self.lane_init, write, smode)
        return acc


def _two_stage(xf: Array, plan: ReducePlan, fold: _OvFold) -> Array:
    """C, D and W reduced with H kept: each (h, w) over (c, d) first, then each row over w."""
    ib, ic, i_d, ih, iw = plan.view
    stage1 = np.transpose(xf.reshape(plan.view), (0, 3, 4, 1, 2)).reshape(ib * ih * iw, ic * i_d)
    partial = fold(stage1, 0, ic * i_d).reshape(ib, ih, iw)
    if plan.reduced[0]:  # the batch loop is outermost; its results accumulate in the output
        acc: Array | None = None
        for b in range(ib):
            acc = fold(partial[b].reshape(ih, iw), iw, iw, acc, smode=np.asarray(True))
        assert acc is not None
        return acc
    return fold(partial.reshape(ib * ih, iw), iw, iw, smode=np.asarray(True))


def _ov_output(res: Array, plan: ReducePlan, in_dtype: np.dtype[Any], acc_dtype: Any) -> Array:
    """The float32 result in the output's element type, as the plugin stores it."""
    if in_dtype.kind in "iu":
        if plan.order == "ov_reference":
            # f32 result, then a saturating round-half-even reorder
            lo, hi = (
                (-(2.0**31), 2147483520.0)
                if acc_dtype == np.int32
                else (float(np.iinfo(acc_dtype).min), float(np.iinfo(acc_dtype).max))
            )
            r = np.clip(np.rint(np.nan_to_num(res.astype(np.float64), nan=0.0)), lo, hi)
            return _wrap_int(r.astype(np.int64).astype(acc_dtype), in_dtype)
        if plan.kind in ("mean", "l2"):
            res = _trunc_store(res, acc_dtype)
        return _wrap_int(res.astype(np.int64), in_dtype)
    if in_dtype == np.float64:
        big = float(np.finfo(F32).max)
        return np.asarray(np.clip(res.astype(np.float64), -big, big))
    if in_dtype.name == "bfloat16" and plan.bf16_round == "half_up_if_odd":
        return _bf16_half_up_if_odd(res).view(in_dtype)
    return np.asarray(res.astype(in_dtype))


def _bf16_half_up_if_odd(v: Array) -> Array:
    """The bits of openvino's float32 -> bfloat16 Convert without AVX-512 (ops.elements:
    half an ulp added only where the kept half is odd, no subnormal flushed, no NaN case)."""
    return np.asarray(bf16_odd_round(np.asarray(v, F32), quiet_nan=False)).view(np.uint16)
