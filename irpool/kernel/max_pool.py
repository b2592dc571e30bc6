"""Max pooling: separable per-axis maxima, the NaN policies, and the first-maximum indices."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from ..geometry import BF16_LOWEST, MLAS_POLICIES, AxisPlan, PoolPlan
from .eigen_order import eigen_max
from .lowp import half_bits, half_keys, to_compute
from .mlas_order import mlas_floor, mlas_max
from .scratch import Scratch
from .windows import (
    Layout,
    Taps,
    accumulate,
    axis_taps_cached,
    empty_windows,
    fill_phases,
    first_tap_numbers,
    first_tap_values,
    index_strides,
    layout,
    tap_source,
    taps_of,
    valid_part,
)

Array = npt.NDArray[Any]


def _axis_max(
    a: Array,
    ax: int,
    axis: AxisPlan,
    op: Callable[..., Any],
    pad: float | int,
    work: Scratch,
    into: Array | None = None,
) -> Array:
    """Reduce dimension `ax` (0 = first spatial) of a (planes, *spatial) array to the axis's
    windows (in `into` if given, C-contiguous): one strided operation per tap; windows with no
    tap inside the input keep `pad`."""
    dim = ax + 1
    shape = list(a.shape)
    shape[dim] = axis.out
    b = into if into is not None else work.take(("axis", ax), tuple(shape), a.dtype)
    if dim == a.ndim - 1 and axis.size == axis.out * axis.stride and a.flags.c_contiguous:
        return _last_axis_max(a, axis, op, pad, b)
    head = (slice(None),) * dim
    taps = axis_taps_cached(axis)
    full = [t for t in taps if t.out.start == 0 and t.out.stop == axis.out]
    rest = [t for t in taps if t not in full[:2]]
    if len(full) >= 2:  # the first two taps in one operation
        op(a[(*head, full[0].src)], a[(*head, full[1].src)], out=b)
    elif full:
        np.copyto(b, a[(*head, full[0].src)])
    else:
        b.fill(pad)
    for t in rest:
        view = b[(*head, t.out)]
        op(view, a[(*head, t.src)], out=view)
    return b


def _last_axis_max(
    a: Array, axis: AxisPlan, op: Callable[..., Any], pad: float | int, into: Array
) -> Array:
    """The last-axis pass when n = out * stride, into `into` (C-contiguous, the shape of `a`
    with the last dim `out`): all rows of the chunk form one long row of `out` groups of
    `stride` elements, so every tap is a single strided 1-D operation over the whole chunk; a
    tap reaching past a row's ends touches the neighbouring row there, so those few columns
    are saved before and restored after it."""
    s, out = axis.stride, axis.out
    rows = a.size // axis.size
    groups = a.reshape(rows * out, s)
    b = into.reshape(rows, out)
    flat = b.reshape(-1)
    total = rows * out
    taps = [(t * axis.dilation - axis.pad_begin) for t in range(axis.window)]
    split = [divmod(o, s) for o in taps]  # (group shift q, element c): position j*s + o
    order = sorted(range(len(split)), key=lambda i: abs(split[i][0]))
    centred = [i for i in order if split[i][0] == 0]
    if len(centred) >= 2:  # the first two taps in one operation
        op(groups[:, split[centred[0]][1]], groups[:, split[centred[1]][1]], out=flat)
        rest = [i for i in order if i not in centred[:2]]
    elif centred:
        np.copyto(flat, groups[:, split[centred[0]][1]])
        rest = [i for i in order if i != centred[0]]
    else:
        b.fill(pad)
        rest = order
    for i in rest:
        q, c = split[i]
        if q >= out or -q >= out:
            continue  # this tap is in the padding for every window
        keep = b[:, out - q :] if q > 0 else b[:, :-q] if q < 0 else None
        saved = keep.copy() if keep is not None else None
        lo, hi = max(0, -q), total - max(0, q)
        view = flat[lo:hi]
        op(view, groups[lo + q : hi + q, c], out=view)
        if keep is not None and saved is not None:
            keep[...] = saved
    return into


def max_chunk(
    raw: Array,
    plan: PoolPlan,
    name: str,
    cdt: np.dtype[Any],
    lowest: float | int,
    empty_value: float | int,
    idx_s: Array | None,
    p0: int,
    work: Scratch,
    dst: Array | None = None,
) -> Array:
    """Max pooling of a chunk: separable, one axis at a time (the order of a max is free).
    The last pass writes into `dst` (the chunk's output) when it has the compute type, and
    then the result is `dst` itself."""
    floating = cdt.kind == "f"
    chunk = to_compute(raw, name, cdt)
    if floating and plan.nan_rule == "eigen_3d":  # TensorFlow's CuboidMaxPooling, tap by tap
        # its padding taps are -FLT_MAX, bfloat16's lowest value in bfloat16 (measured)
        return eigen_max(chunk, plan, p0, BF16_LOWEST if name == "bfloat16" else float(lowest))
    if not floating:
        pad: float | int = lowest
        op: Callable[..., Any] = np.maximum
    elif plan.nan_rule == "ignore":
        pad, op = lowest, np.fmax
    else:
        pad, op = -math.inf, (np.maximum if plan.nan_rule == "propagate" else np.fmax)
    acc: Array | None = None
    buffers: list[Array] = []
    pad_hit = False
    lay = layout(plan.axes)
    if idx_s is not None and lay.flat:
        # with indices: the polyphase layout makes every tap, for the values and for the
        # search of the first maximal tap, one contiguous operation
        buffers = fill_phases(raw, lay, name, cdt, pad, work)
        if floating and plan.nan_rule == "ignore":
            first: Callable[[Array, Array], Any] = lambda src, a: np.fmax(src, lowest, out=a)  # noqa: E731
        else:
            first = lambda src, a: np.copyto(a, src)  # noqa: E731
        acc, values = accumulate(buffers, lay, raw.shape[0], cdt, first, op, work)
        values = np.array(values)
        # a maximum equal to the padding value may have come from a padding tap
        pad_hit = plan.nan_rule != "ignore" and bool((values == pad).any())
    else:
        values = chunk
        # first axis first: its taps are strided slices of whole rows (contiguous inner loops),
        # and the pass reading the whole chunk from memory halves it before the strided
        # last-axis pass (measured: batch_max 2.8-3.8x -> 2.4-2.9x ov1, max3d 2.3x -> 1.4x)
        last = len(plan.axes) - 1
        for ax in range(last + 1):
            into = dst if ax == last and dst is not None and dst.dtype == cdt else None
            values = _axis_max(values, ax, plan.axes[ax], op, pad, work, into)
        if floating and plan.nan_rule == "ignore":
            # openvino starts from lowest() and keeps a tap only when greater: -inf and
            # all-NaN windows give lowest()
            np.fmax(values, lowest, out=values)
    has_nan = floating and plan.nan_rule != "ignore" and bool(np.isnan(chunk).any())
    if has_nan and plan.nan_rule == "first":
        values[np.isnan(first_tap_values(chunk, plan))] = np.nan
    if floating and plan.nan_rule in MLAS_POLICIES:
        if has_nan:  # rare: the kernel's own order of operations decides
            values[...] = mlas_max(chunk, plan, lowest)
        else:
            mlas_floor(values, plan, lowest)
    mask = empty_windows(plan)
    if mask is not None:
        values[:, mask] = empty_value
    if idx_s is not None:
        if acc is not None and not pad_hit:
            found = _found_polyphase(buffers, acc, lay, raw.shape[0])
        else:
            # search the unpadded chunk, where padding cannot match
            found = _found_box(chunk, values, taps_of(plan.axes))
        if has_nan:
            found = _nan_found(chunk, values, plan, found)
        _indices(found, values, plan, p0, lowest, idx_s[p0 : p0 + raw.shape[0]])
    return values


def half_max_chunk(
    raw: Array,
    plan: PoolPlan,
    name: str,
    lowest: float | int,
    idx_s: Array | None,
    p0: int,
    work: Scratch,
) -> Array:
    """openvino's max of float16/bfloat16 without converting to float32: the maximum of
    order-preserving int16 keys is the maximum of the numbers, and NaN never wins.  Windows
    that beat nothing give what float32 lowest() rounds to (-inf), or bfloat16's own lowest
    value where the layer has an empty window (see max_start)."""
    infinity = 0x7C00 if name == "float16" else 0x7F80
    floor_key = -infinity if lowest != BF16_LOWEST else -0x7F7F
    keys = half_keys(raw, work, fix_nan=False)
    values = max_chunk(keys, plan, "int16", keys.dtype, floor_key, floor_key, idx_s, p0, work)
    if values.size and int(values.max()) > infinity:
        # a NaN without the sign bit won a window: move such NaNs below every number (rare)
        keys = half_keys(raw, work, fix_nan=True)
        values = max_chunk(keys, plan, "int16", keys.dtype, floor_key, floor_key, idx_s, p0, work)
    np.maximum(values, np.int16(floor_key), out=values)
    return np.asarray(half_bits(values, work).view(raw.dtype))


def _found_polyphase(buffers: list[Array], acc: Array, lay: Layout, planes: int) -> Array:
    """Per output: the row-major number of the first tap equal to its maximum, or -1."""
    tap_dtype = np.int16 if len(lay.taps) < 32000 else np.int32
    found = np.full(acc.shape, -1, dtype=tap_dtype)
    equal = np.empty(acc.shape, dtype=bool)
    spare = np.empty_like(found)
    for tap in reversed(lay.taps):
        np.equal(tap_source(buffers[tap[1]], tap, planes, lay), acc, out=equal)
        _mark(found, tap[0], equal, spare)
    return valid_part(found, planes, lay)


def _mark(found: Array, number: int, where: Array, spare: Array) -> None:
    """found[where] = number, computed as found -= (found - number) * where: three vector
    operations are about ten times faster than numpy's masked copy (measured)."""
    np.subtract(found, number, out=spare)
    np.multiply(spare, where, out=spare)
    np.subtract(found, spare, out=found)


def _found_box(chunk: Array, values: Array, taps: Taps) -> Array:
    """Per output: the first tap (row-major) inside the input equal to its maximum, or -1,
    found with a direct scan of the unpadded chunk (padding can never match)."""
    n_taps = max(taps.number, default=0) + 1
    tap_dtype = np.int16 if n_taps < 32000 else np.int32
    found = np.full(values.shape, -1, dtype=tap_dtype)
    spare = np.empty_like(found)
    for number, o, s in zip(
        reversed(taps.number), reversed(taps.out), reversed(taps.src), strict=True
    ):
        _mark(found[o], number, np.equal(chunk[s], values[o]), spare[o])
    return found


def _nan_found(chunk: Array, values: Array, plan: PoolPlan, found: Array) -> Array:
    """Indices of NaN maxima: the first tap inside the input for onnxruntime (a NaN there is
    what made the maximum NaN), the last NaN tap for PyTorch."""
    nan_value = np.isnan(values)
    if plan.nan_rule == "propagate":
        taps = taps_of(plan.axes)
        last = np.full(values.shape, -1, dtype=found.dtype)
        for number, o, s in zip(taps.number, taps.out, taps.src, strict=True):
            np.copyto(last[o], number, where=np.isnan(chunk[s]))
        return np.asarray(np.where(nan_value, last, found))
    return np.asarray(np.where(nan_value, first_tap_numbers(plan), found))


@lru_cache(maxsize=64)
def _index_tables(plan: PoolPlan) -> tuple[Array, Array]:
    """(offset of every window tap, spatial index of every window's first tap position)."""
    n_taps = math.prod(a.window for a in plan.axes)
    strides = index_strides(plan)
    lut = np.zeros(n_taps + 1, dtype=np.int64)  # lut[-1] (no tap) stays 0
    for flat in range(n_taps):
        rest, offset = flat, 0
        for axis, stride in zip(reversed(plan.axes), reversed(strides), strict=True):
            rest, t = divmod(rest, axis.window)
            offset += t * axis.dilation * stride
        lut[flat] = offset
    base = np.zeros((), dtype=np.int64)
    for a, st in zip(plan.axes, strides, strict=True):
        base = np.add.outer(base, (np.arange(a.out) * a.stride - a.pad_begin) * st)
    return lut, np.asarray(base)


@lru_cache(maxsize=64)
def _first_taps(plan: PoolPlan) -> Array:
    """Spatial index of every window's first tap after stepping over negative positions by
    the dilation, unclamped (PyTorch's index of a window with no tap in the input)."""
    base = np.zeros((), dtype=np.int64)
    for a, st in zip(plan.axes, index_strides(plan), strict=True):
        start = np.arange(a.out, dtype=np.int64) * a.stride - a.pad_begin
        first = np.where(start < 0, start + (-(start // a.dilation)) * a.dilation, start)
        base = np.add.outer(base, first * st)
    return np.asarray(base)


def _indices(
    found: Array, values: Array, plan: PoolPlan, p0: int, lowest: float | int, dst: Array
) -> None:
    """Write flat indices for the chosen tap numbers into dst, in the plan's index layout."""
    if plan.nan_rule == "ignore":
        # openvino starts from the lowest value and its first element and replaces them only
        # when a tap is strictly greater, so a window whose maximum is lowest() points at 0
        low = values <= lowest
        if low.any():
            found = np.where(low, -1, found)
    lut, base = _index_tables(plan)
    index = np.take(lut, found)
    missing = found < 0
    index += base
    first_tap = plan.empty_index == "first_tap" and bool(missing.any())
    if missing.any():
        index[missing] = 0 if plan.empty_index == "plane_start" else -sum(index_strides(plan))
    plane_size = math.prod(a.size for a in plan.axes)
    planes = np.arange(p0, p0 + values.shape[0], dtype=np.int64) * plane_size
    planes = planes.reshape((-1,) + (1,) * len(plan.axes))
    index += planes
    if plan.index_axis > 0:
        index %= math.prod(plan.input_shape[plan.index_axis :])
    if first_tap:
        # PyTorch: the window's first tap, which may lie past the plane (not wrapped)
        block = math.prod(plan.input_shape[plan.index_axis :]) if plan.index_axis > 0 else 0
        offsets = planes % block if block else planes
        taps = _first_taps(plan) + offsets
        index[missing] = np.broadcast_to(taps, index.shape)[missing]
    np.copyto(dst, index, casting="unsafe")
