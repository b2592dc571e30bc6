"""Window geometry the kernel paths share: taps per axis, divisors, empty windows, the
polyphase layout of a chunk of planes and its reusable buffers."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from ..geometry import AxisPlan, PoolPlan, ceil_div
from .lowp import copy_compute
from .scratch import Scratch

Array = npt.NDArray[Any]


@dataclass(frozen=True)
class _Tap:
    """One tap of one axis: the output range it reaches and the input slice feeding it."""

    t: int
    out: slice
    src: slice


@dataclass(frozen=True)
class Taps:
    """All taps of a plan in row-major window order, with their flat window numbers."""

    number: tuple[int, ...]
    out: tuple[tuple[slice, ...], ...]
    src: tuple[tuple[slice, ...], ...]


def _axis_taps(axis: AxisPlan) -> list[_Tap]:
    taps = []
    for t in range(axis.window):
        lo, hi = axis.tap_range(t)
        if lo >= hi:
            continue
        start = lo * axis.stride - axis.pad_begin + t * axis.dilation
        stop = start + (hi - lo - 1) * axis.stride + 1
        taps.append(_Tap(t, slice(lo, hi), slice(start, stop, axis.stride)))
    return taps


@lru_cache(maxsize=64)
def taps_of(axes: tuple[AxisPlan, ...]) -> Taps:
    per_axis = [_axis_taps(a) for a in axes]
    windows = [a.window for a in axes]
    numbers, outs, srcs = [], [], []
    for combo in itertools.product(*per_axis):
        flat = 0
        for tap, k in zip(combo, windows, strict=True):
            flat = flat * k + tap.t
        numbers.append(flat)
        outs.append((slice(None), *(tap.out for tap in combo)))
        srcs.append((slice(None), *(tap.src for tap in combo)))
    return Taps(tuple(numbers), tuple(outs), tuple(srcs))


def _outer(vectors: Sequence[Array]) -> Array:
    """Outer product of per-axis vectors, shaped like the spatial output."""
    result = vectors[0]
    for v in vectors[1:]:
        result = np.multiply.outer(result, v)
    return np.asarray(result)


def in_input_counts(axis: AxisPlan) -> Array:
    """Per window j: taps inside the input."""
    return axis.in_input_counts()


def declared_counts(axis: AxisPlan) -> Array:
    """Per window j: taps inside the declared pads (ceil overhang beyond pad_end not counted)."""
    return axis.declared_counts()


def openvino_extents(axis: AxisPlan) -> Array:
    """Per window j: min(start + k_eff, n) - max(start, 0), which is 0 or negative exactly when
    the window has no tap in the input (openvino CPU divides an empty window's zero sum by it)."""
    start = np.arange(axis.out) * axis.stride - axis.pad_begin
    return np.minimum(start + axis.k_eff, axis.size) - np.maximum(start, 0)


def divisor(plan: PoolPlan) -> Array | float:
    """The divisor of every window, shaped like the spatial output (or a scalar)."""
    if plan.divisor == "full":
        return float(math.prod(a.window for a in plan.axes))
    vectors = []
    for axis in plan.axes:
        counts = in_input_counts(axis) if plan.divisor == "in_input" else declared_counts(axis)
        counts = counts.astype(np.float64)
        if plan.empty == "openvino" and plan.divisor == "in_input":
            # an empty window divides by its clamped extent over the dilation, truncated
            # toward zero as C divides (openvino CPU; measured: 201 of 201 empty windows of
            # dilated 1-D AvgPool-16 layers, NaN where it is 0 and -0.0 where negative)
            counts = np.where(counts > 0, counts, np.fix(openvino_extents(axis) / axis.dilation))
        vectors.append(counts)
    return _outer(vectors)


@lru_cache(maxsize=64)
def empty_windows(plan: PoolPlan) -> Array | None:
    """Mask of windows without any tap inside the input (spatial output shape), or None."""
    per_axis = [in_input_counts(a) == 0 for a in plan.axes]
    if not any(v.any() for v in per_axis):
        return None
    mask = per_axis[0]
    for v in per_axis[1:]:
        mask = np.logical_or.outer(mask, v)
    return np.asarray(mask)


@dataclass(frozen=True)
class Layout:
    """The polyphase layout of a plan's geometry (see the module docstring).

    `dims` are the extents of every phase array per axis; `phases` give, per phase and axis,
    (residue r, first and end index filled from the input, first input position); `taps` are
    (window number in row-major order, phase, flat shift, per-axis shift) in row-major order.
    """

    dims: tuple[int, ...]
    out: tuple[int, ...]
    strides: tuple[int, ...]
    phases: tuple[tuple[tuple[int, int, int, int], ...], ...]
    taps: tuple[tuple[int, int, int, tuple[int, ...]], ...]
    slack: int
    flat: bool


@lru_cache(maxsize=64)
def layout(axes: tuple[AxisPlan, ...]) -> Layout:
    per_axis: list[list[tuple[int, int, int]]] = []
    dims: list[int] = []
    residues: list[list[int]] = []
    for a in axes:
        taps = [
            (t, (t * a.dilation) % a.stride, (t * a.dilation) // a.stride) for t in range(a.window)
        ]
        per_axis.append(taps)
        dims.append(a.out + max(q for _, _, q in taps))
        residues.append(sorted({r for _, r, _ in taps}))
    flat_strides = [math.prod(dims[i + 1 :]) for i in range(len(dims))]
    combos = list(itertools.product(*residues))
    index = {combo: i for i, combo in enumerate(combos)}
    phases = []
    for combo in combos:
        spec = []
        for a, r, m in zip(axes, combo, dims, strict=True):
            lo = max(0, ceil_div(a.pad_begin - r, a.stride))
            hi = max(lo, min(m, ceil_div(a.size + a.pad_begin - r, a.stride)))
            spec.append((r, lo, hi, lo * a.stride + r - a.pad_begin))
        phases.append(tuple(spec))
    out = tuple(a.out for a in axes)
    waste = math.prod(m / max(o, 1) for m, o in zip(dims, out, strict=True))
    flat = waste <= 2.0
    if flat:
        # shared padding: in the flat layout a read past the end of a row (or plane) lands at
        # the start of the next one, so the trailing padding can be dropped wherever the next
        # row's leading padding is as long (every read sees the same value as before; avg7_s1:
        # 59x59 per plane instead of 62x62)
        for ax, d in enumerate(dims):
            lead = min(spec[ax][1] for spec in phases)
            fill = max(spec[ax][2] for spec in phases)
            dims[ax] = max(out[ax], fill, d - lead)
        flat_strides = [math.prod(dims[i + 1 :]) for i in range(len(dims))]
    taps_out = []
    for combo3 in itertools.product(*per_axis):
        number, shift = 0, 0
        for (t, _, q), a, f in zip(combo3, axes, flat_strides, strict=True):
            number = number * a.window + t
            shift += q * f
        phase = index[tuple(r for _, r, _ in combo3)]
        taps_out.append((number, phase, shift, tuple(q for _, _, q in combo3)))
    return Layout(
        dims=tuple(dims),
        out=out,
        strides=tuple(a.stride for a in axes),
        phases=tuple(phases),
        taps=tuple(taps_out),
        slack=max(t[2] for t in taps_out),
        flat=flat,
    )


def fill_phases(
    raw: Array, lay: Layout, name: str, cdt: np.dtype[Any], pad: float | int, work: Scratch
) -> list[Array]:
    """One flat buffer per phase: (planes, *dims) in the compute type, padding filled with
    `pad`, followed by `slack` padding elements for the shifted reads."""
    planes = raw.shape[0]
    size = planes * math.prod(lay.dims)
    buffers = []
    for number, spec in enumerate(lay.phases):
        buf = work.take(("phase", number), (size + lay.slack,), cdt)
        arr = buf[:size].reshape((planes, *lay.dims))
        for ax, (_, lo, hi, _) in enumerate(spec):
            head: tuple[slice, ...] = (slice(None),) * (ax + 1)
            if lo > 0:
                arr[(*head, slice(0, lo))] = pad
            if hi < lay.dims[ax]:
                arr[(*head, slice(hi, None))] = pad
        if lay.slack:
            buf[size:] = pad
        if all(hi > lo for _, lo, hi, _ in spec):
            dst = arr[(slice(None), *(slice(lo, hi) for _, lo, hi, _ in spec))]
            src = raw[
                (
                    slice(None),
                    *(
                        slice(start, start + (hi - lo - 1) * st + 1, st)
                        for (_, lo, hi, start), st in zip(spec, lay.strides, strict=True)
                    ),
                )
            ]
            copy_compute(dst, src, name, cdt)
        buffers.append(buf)
    return buffers


def valid_part(flat: Array, planes: int, lay: Layout) -> Array:
    """The (planes, *out) outputs inside a flat (planes, *dims) accumulator."""
    grid = flat.reshape((planes, *lay.dims))
    return grid[(slice(None), *(slice(0, o) for o in lay.out))]


def tap_source(
    buf: Array, tap: tuple[int, int, int, tuple[int, ...]], planes: int, lay: Layout
) -> Array:
    size = planes * math.prod(lay.dims)
    if lay.flat:
        return buf[tap[2] : tap[2] + size]
    grid = buf[:size].reshape((planes, *lay.dims))
    return grid[(slice(None), *(slice(q, q + o) for q, o in zip(tap[3], lay.out, strict=True)))]


def accumulate(
    buffers: list[Array],
    lay: Layout,
    planes: int,
    dtype: np.dtype[Any],
    first: Callable[[Array, Array], Any],
    op: Callable[..., Any],
    work: Scratch,
) -> tuple[Array, Array]:
    """Apply the taps in row-major window order: (accumulator as used, (planes, *out) view)."""
    shape = (planes * math.prod(lay.dims),) if lay.flat else (planes, *lay.out)
    acc = work.take("acc", shape, dtype)
    for i, tap in enumerate(lay.taps):
        src = tap_source(buffers[tap[1]], tap, planes, lay)
        if i == 0:
            first(src, acc)
        else:
            op(acc, src, out=acc)
    return acc, (valid_part(acc, planes, lay) if lay.flat else acc)


def block_layout(lay: Layout, j0: int, j1: int) -> Layout:
    """The layout of output rows [j0, j1) of the first spatial axis (for large planes: a block
    of rows keeps its phase arrays in cache)."""
    extra = max(tap[3][0] for tap in lay.taps)  # rows a block reads below its last output row
    rows = j1 - j0 + extra
    stride = lay.strides[0]
    phases = []
    for spec in lay.phases:
        r, lo, hi, start = spec[0]
        lo_b = min(max(lo, j0), j0 + rows)
        hi_b = max(lo_b, min(hi, j0 + rows))
        first = (r, lo_b - j0, hi_b - j0, start + (lo_b - lo) * stride)
        phases.append((first, *spec[1:]))
    return Layout(
        dims=(rows, *lay.dims[1:]),
        out=(j1 - j0, *lay.out[1:]),
        strides=lay.strides,
        phases=tuple(phases),
        taps=lay.taps,
        slack=lay.slack,
        flat=lay.flat,
    )


def is_global(plan: PoolPlan) -> bool:
    return all(
        a.out == 1
        and a.pad_begin == 0
        and a.pad_end == 0
        and a.dilation == 1
        and a.window == a.size
        for a in plan.axes
    )


@lru_cache(maxsize=256)
def axis_taps_cached(axis: AxisPlan) -> tuple[_Tap, ...]:
    return tuple(_axis_taps(axis))


@lru_cache(maxsize=64)
def divisor_cached(plan: PoolPlan) -> Array | float:
    return divisor(plan)


def _first_positions(axis: AxisPlan) -> Array:
    """Per window: input position of its first tap inside the input (clamped when none)."""
    j = np.arange(axis.out)
    start = j * axis.stride - axis.pad_begin
    t = np.where(start < 0, -(start // axis.dilation), 0)
    pos = start + t * axis.dilation
    return np.asarray(np.clip(pos, 0, axis.size - 1))


def first_tap_values(chunk: Array, plan: PoolPlan) -> Array:
    index: tuple[Any, ...] = (slice(None), *np.ix_(*[_first_positions(a) for a in plan.axes]))
    return np.asarray(chunk[index])


def index_strides(plan: PoolPlan) -> list[int]:
    sizes = [a.size for a in plan.axes]
    if plan.column_major:
        return [math.prod(sizes[:i]) for i in range(len(sizes))]
    return [math.prod(sizes[i + 1 :]) for i in range(len(sizes))]


def first_tap_numbers(plan: PoolPlan) -> Array:
    numbers = []
    for a in plan.axes:
        start = np.arange(a.out) * a.stride - a.pad_begin
        numbers.append(np.where(start < 0, -(start // a.dilation), 0))
    result = numbers[0]
    for axis, v in zip(plan.axes[1:], numbers[1:], strict=True):
        result = np.add.outer(result * axis.window, v)
    return np.asarray(result)
