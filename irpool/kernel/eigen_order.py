"""TensorFlow's MaxPool3D on Eigen's CuboidMaxPooling (TensorFlow without oneDNN), emulated in
its own order of operations: the plan's `eigen_3d` NaN rule.

Measured with tensorflow-cpu 2.21 on an AVX2 EPYC (TF_ENABLE_ONEDNN_OPTS=0 gives the same on
any x86 CPU).  The kernel extracts every window and reduces its
taps, in row-major window order, with Eigen's MaxReducer over the output laid out as NDHWC:

* padding taps are -FLT_MAX (bfloat16 data: bfloat16's lowest value, -3.3895e38);
* the output is evaluated in packets of PACKET consecutive elements (the wheel's Eigen is
  built for AVX: 8 floats), from element 0; a packet whose elements all lie in one pixel's
  channels (start % C + PACKET <= C) is reduced with packet instructions, every other element
  (fewer than PACKET channels, a packet across two pixels, the last T % PACKET elements) one
  by one;
* one by one: m = -inf, then m = (m > t) ? m : t for every tap t, so a NaN tap replaces m and
  the next tap replaces the NaN: the result is the maximum of the taps after the window's last
  NaN, NaN when the last tap is NaN, and of equal taps (+0.0/-0.0) the later;
* packets: m = (t > m) ? t : m, so a NaN tap never wins (an all-NaN window gives -inf) and of
  equal taps the earlier stays; a window of 16 taps or more is folded into four accumulators
  (tap j into j % 4 for the first K // 4 * 4 taps), combined as m0 <- m1, m2, m3 in that order,
  and the remaining K % 4 taps folded into m0 last (Eigen's InnerMostDimPreserver).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from ..geometry import PoolPlan

Array = npt.NDArray[Any]

PACKET = 8
"""float32 lanes of Eigen's packets in TensorFlow's x86 wheel (built for AVX)."""

UNROLL_FROM = 16
"""Windows of at least this many taps are folded into four packet accumulators."""


def _taps(chunk: Array, plan: PoolPlan, pad: float) -> list[Array]:
    """Every window tap in row-major order as a (planes, *out) array, `pad` outside the input."""
    per_axis = []
    for a in plan.axes:
        starts = np.arange(a.out) * a.stride - a.pad_begin
        per_axis.append([starts + t * a.dilation for t in range(a.window)])
    taps = []
    rank = len(plan.axes)
    for positions in _product(per_axis):
        index: list[Any] = [slice(None)]
        inside = np.ones((1,) * rank, dtype=bool)
        for i, (pos, a) in enumerate(zip(positions, plan.axes, strict=True)):
            shape = [1] * rank
            shape[i] = -1
            ok = ((pos >= 0) & (pos < a.size)).reshape(shape)
            inside = inside & ok
            index.append(np.clip(pos, 0, a.size - 1).reshape(shape))
        values = chunk[tuple(index)]
        taps.append(np.where(inside[None], values, chunk.dtype.type(pad)))
    return taps


def _product(per_axis: list[list[Array]]) -> list[tuple[Array, ...]]:
    result: list[tuple[Array, ...]] = [()]
    for options in per_axis:
        result = [(*r, o) for r in result for o in options]
    return result


def _packet_lanes(plan: PoolPlan, p0: int, planes: int) -> Array:
    """Per output of the chunk's planes p0.. (planes, *out): whether TensorFlow reduces it in a
    packet (its NDHWC position, see the module's docstring)."""
    n_batch, channels = plan.input_shape[:2]
    spatial = math.prod(a.out for a in plan.axes)
    total = n_batch * spatial * channels
    plane = np.arange(p0, p0 + planes, dtype=np.int64)
    n, c = plane // channels, plane % channels
    o = np.arange(spatial, dtype=np.int64)
    flat = (n[:, None] * spatial + o[None, :]) * channels + c[:, None]
    start = flat - flat % PACKET
    lanes = (start + PACKET <= total) & (start % channels + PACKET <= channels)
    return lanes.reshape((planes, *(a.out for a in plan.axes)))


def _later(m: Array, t: Array) -> Array:
    """(m > t) ? m : t."""
    return np.asarray(np.where(m > t, m, t))


def _earlier(m: Array, t: Array) -> Array:
    """(t > m) ? t : m."""
    return np.asarray(np.where(t > m, t, m))


def eigen_max(chunk: Array, plan: PoolPlan, p0: int, lowest: float) -> Array:
    """Max pooling of a chunk of planes p0.. (compute type) as TensorFlow's CuboidMaxPooling
    computes it; `lowest` is the padding taps' value."""
    planes = chunk.shape[0]
    taps = _taps(chunk, plan, lowest)
    start = np.full((planes, *(a.out for a in plan.axes)), -np.inf, dtype=chunk.dtype)
    one_by_one = start
    for t in taps:
        one_by_one = _later(one_by_one, t)
    lanes = _packet_lanes(plan, p0, planes)
    if not lanes.any():
        return one_by_one
    k = len(taps)
    whole = k // 4 * 4 if k >= UNROLL_FROM else 0
    acc = [start] * 4
    for j in range(whole):
        acc[j % 4] = _earlier(acc[j % 4], taps[j])
    packed = acc[0]
    for other in acc[1:]:
        packed = _earlier(packed, other)
    for t in taps[whole:]:
        packed = _earlier(packed, t)
    return np.asarray(np.where(lanes, packed, one_by_one))
