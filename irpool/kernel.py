"""The one pooling core: values and, for max, indices of any PoolPlan, with numpy only.

How it works (docs/kernel.md has the measurements behind each choice):

* The input is viewed as planes (N*C, *spatial) and processed a chunk of planes at a time, so a
  large input is never copied or padded whole; a chunk's working set stays near the L2 cache.
* Polyphase layout: a chunk is copied once into one padded array per *phase*, the residue of a
  padded position modulo the stride on every axis.  In a phase array the window taps of all
  outputs are plain shifted copies of each other, so every tap of the window is a single long
  contiguous numpy operation (`acc[0:L] op= phase[shift:shift + L]`), whatever the stride,
  dilation or padding.  Taps are applied in row-major window order, so sums are accumulated
  in exactly the order openvino's CPU plugin uses (bit-identical float32 means, measured).
  The copy also converts to the compute type (float16/bfloat16 to float32, ...).
* The divisor of every window is a product of per-axis counts, an outer product of small
  vectors resolved from the plan's divisor rule.
* Max indices: after the values, the first tap (in scan order) equal to the window's maximum is
  found by a reverse scan over the taps; index = window base + tap offset, then the plan's
  index layout (flat over the tensor, per (N, C) plane, row- or column-major) is applied.
* Global pooling (one window per plane) is a reduction over a transposed copy.
* Rare cases (NaN policies other than openvino's, a maximum equal to the padding value) are
  fixed up with a direct per-tap scan over the unpadded chunk.
* onnxruntime's MLAS max kernels (the plan's `mlas_*` NaN rules) are plain maxima on chunks
  without NaN; a chunk holding a NaN is recomputed in the kernel's own order of operations.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import math
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from .conventions import NanMax
from .env import env_int
from .errors import InputError, SpecError
from .geometry import AxisPlan, PoolPlan, ceil_div

CHUNK_BYTES = 2 << 20
"""Target size of the compute-type copy of one chunk of planes.  2 MiB, twice the L2 cache of
the development machine, measured 0-10% faster than 1 MiB on one thread and up to 35% on two
(fewer, longer numpy calls; the passes after the first run over halved data); max pooling
with indices keeps 1 MiB, whose index search buffers would otherwise pass the memory budget."""

PHASE_BYTES = 1 << 18
"""Smallest phase buffer of a strided sum worth one numpy operation per tap."""

F32_MAX = float(np.finfo(np.float32).max)

Array = npt.NDArray[Any]


@lru_cache(maxsize=1)
def bfloat16() -> np.dtype[Any] | None:
    """numpy dtype of ml_dtypes.bfloat16, or None when ml_dtypes is not installed."""
    try:
        import ml_dtypes
    except ImportError:
        return None
    dtype: np.dtype[Any] = np.dtype(ml_dtypes.bfloat16)
    return dtype


FLOAT_NAMES = ("float64", "float32", "float16", "bfloat16")
INT_NAMES = ("int8", "uint8", "int32", "int64")


@dataclass(frozen=True)
class _Tap:
    """One tap of one axis: the output range it reaches and the input slice feeding it."""

    t: int
    out: slice
    src: slice


@dataclass(frozen=True)
class _Taps:
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
def _taps(axes: tuple[AxisPlan, ...]) -> _Taps:
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
    return _Taps(tuple(numbers), tuple(outs), tuple(srcs))


def _outer(vectors: Sequence[Array]) -> Array:
    """Outer product of per-axis vectors, shaped like the spatial output."""
    result = vectors[0]
    for v in vectors[1:]:
        result = np.multiply.outer(result, v)
    return np.asarray(result)


def in_input_counts(axis: AxisPlan) -> Array:
    """Per window j: taps inside the input."""
    j = np.arange(axis.out)[:, None]
    pos = j * axis.stride - axis.pad_begin + np.arange(axis.window)[None, :] * axis.dilation
    return np.asarray(((pos >= 0) & (pos < axis.size)).sum(axis=1))


def declared_counts(axis: AxisPlan) -> Array:
    """Per window j: taps inside the declared pads (ceil overhang beyond pad_end not counted)."""
    j = np.arange(axis.out)[:, None]
    pos = j * axis.stride - axis.pad_begin + np.arange(axis.window)[None, :] * axis.dilation
    inside = (pos >= -axis.pad_begin) & (pos < axis.size + axis.pad_end)
    return np.asarray(inside.sum(axis=1))


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


# -- dtypes ------------------------------------------------------------------------------------


def _dtype_name(dtype: np.dtype[Any]) -> str:
    return str(dtype.name)


def compute_dtype(dtype: np.dtype[Any], plan: PoolPlan) -> np.dtype[Any]:
    """The dtype the core works in for an input dtype under a plan."""
    name = _dtype_name(dtype)
    if name in ("float16", "bfloat16", "float32"):
        return np.dtype(np.float32)
    if name == "float64":
        return np.dtype(np.float32 if plan.narrow_64bit else np.float64)
    if name == "int64" and plan.narrow_64bit:
        return np.dtype(np.int32)
    if plan.reduce == "mean":
        return np.dtype(np.int64 if plan.int_mean == "trunc" else np.int32)
    return dtype


def _to_compute(chunk: Array, name: str, cdt: np.dtype[Any]) -> Array:
    if name == "bfloat16":
        return (chunk.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    if name == "float64" and cdt == np.float32:
        return np.clip(chunk, -F32_MAX, F32_MAX).astype(np.float32)
    if chunk.dtype == cdt:
        return chunk
    return chunk.astype(cdt)


def _int_range(dtype: np.dtype[Any]) -> tuple[int, int]:
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def _lowest(dtype: np.dtype[Any]) -> float | int:
    if dtype.kind == "f":
        return float(np.finfo(dtype).min)
    return int(np.iinfo(dtype).min)


def max_start(name: str, compute: np.dtype[Any], plan: PoolPlan) -> tuple[float | int, float | int]:
    """(start value of every max, value of a window without taps in the input).

    The start is the lowest finite value of the compute type, as openvino's CPU plugin starts
    (float16 outputs then show -inf where nothing beats it).  For bfloat16 input with an empty
    window somewhere in the layer, that plugin switches to bfloat16's own lowest value for every
    window (measured).  With the '-inf' rule an empty window is -inf.
    """
    lowest = _lowest(compute)
    if name == "bfloat16" and plan.empty == "lowest" and empty_windows(plan) is not None:
        lowest = BF16_LOWEST
    if plan.empty == "-inf" and compute.kind == "f":
        return lowest, -math.inf
    return lowest, lowest


BF16_LOWEST = float(np.array([0xFF7F0000], dtype=np.uint32).view(np.float32)[0])


# -- the core ----------------------------------------------------------------------------------


def check_input(x: Array, plan: PoolPlan) -> str:
    """The dtype name of x if the core supports it for the plan; raise otherwise."""
    name = _dtype_name(x.dtype)
    allowed = FLOAT_NAMES + INT_NAMES
    if name not in allowed:
        raise InputError(f"dtype {name} is not supported; expected one of {', '.join(allowed)}")
    if tuple(x.shape) != plan.input_shape:
        raise InputError(
            f"input shape {list(x.shape)} does not match the plan's {list(plan.input_shape)}"
        )
    refused = plan.refusal(name)
    if refused is not None:
        raise SpecError(refused)
    return name


MLAS_POLICIES = ("mlas_generic", "mlas_global", "mlas_2d", "mlas_3d")


def max_policy(plan: PoolPlan, name: str) -> NanMax:
    """The NaN rule the core applies to input of dtype `name`.  onnxruntime's MLAS kernels are
    float32 ones (float16 runs through them in float32); other types take its reference loop,
    the 'first' rule.  MLAS's generic loop, std::max from lowest(), is the 'ignore' rule."""
    if plan.nan_max not in MLAS_POLICIES:
        return plan.nan_max
    if name not in ("float32", "float16"):
        return "first"
    return "ignore" if plan.nan_max == "mlas_generic" else plan.nan_max


@dataclass(frozen=True)
class _Layout:
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
def _layout(axes: tuple[AxisPlan, ...]) -> _Layout:
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
    return _Layout(
        dims=tuple(dims),
        out=out,
        strides=tuple(a.stride for a in axes),
        phases=tuple(phases),
        taps=tuple(taps_out),
        slack=max(t[2] for t in taps_out),
        flat=flat,
    )


class Scratch:
    """Working buffers one thread reuses from chunk to chunk of one pool() call.

    Fresh buffers for every chunk cost a page fault per 4 KiB: glibc hands freed blocks of a
    few hundred KiB back to the kernel, so each chunk faulted its memory in again (measured on
    large_avg: 219 ms with fresh buffers, 124 ms with glibc told to keep them)."""

    def __init__(self) -> None:
        self._buffers: dict[object, Array] = {}

    def take(self, key: object, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Array:
        """An uninitialised array; the same key returns the same memory until the next take."""
        dtype = np.dtype(dtype)
        nbytes = math.prod(shape) * dtype.itemsize
        buf = self._buffers.get(key)
        if buf is None or buf.nbytes < nbytes:
            buf = np.empty(max(nbytes, 1), np.uint8)
            self._buffers[key] = buf
        return buf[:nbytes].view(dtype).reshape(shape)


def _copy_compute(dst: Array, src: Array, name: str, cdt: np.dtype[Any]) -> None:
    """dst[...] = src in the compute type (bfloat16 via its bits, float64 saturated to float32
    when narrowed, integers wrapped)."""
    if name == "bfloat16":
        np.multiply(src.view(np.uint16), 65536, out=dst.view(np.uint32), dtype=np.uint32)
    elif name == "float64" and cdt == np.float32:
        np.clip(src, -F32_MAX, F32_MAX, out=dst, casting="same_kind")
    else:
        np.copyto(dst, src, casting="unsafe")


def _fill_phases(
    raw: Array, lay: _Layout, name: str, cdt: np.dtype[Any], pad: float | int, work: Scratch
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
            _copy_compute(dst, src, name, cdt)
        buffers.append(buf)
    return buffers


def _valid(flat: Array, planes: int, lay: _Layout) -> Array:
    """The (planes, *out) outputs inside a flat (planes, *dims) accumulator."""
    grid = flat.reshape((planes, *lay.dims))
    return grid[(slice(None), *(slice(0, o) for o in lay.out))]


def _tap_source(
    buf: Array, tap: tuple[int, int, int, tuple[int, ...]], planes: int, lay: _Layout
) -> Array:
    size = planes * math.prod(lay.dims)
    if lay.flat:
        return buf[tap[2] : tap[2] + size]
    grid = buf[:size].reshape((planes, *lay.dims))
    return grid[(slice(None), *(slice(q, q + o) for q, o in zip(tap[3], lay.out, strict=True)))]


def _accumulate(
    buffers: list[Array],
    lay: _Layout,
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
        src = _tap_source(buffers[tap[1]], tap, planes, lay)
        if i == 0:
            first(src, acc)
        else:
            op(acc, src, out=acc)
    return acc, (_valid(acc, planes, lay) if lay.flat else acc)


def _block(lay: _Layout, j0: int, j1: int) -> _Layout:
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
    return _Layout(
        dims=(rows, *lay.dims[1:]),
        out=(j1 - j0, *lay.out[1:]),
        strides=lay.strides,
        phases=tuple(phases),
        taps=lay.taps,
        slack=lay.slack,
        flat=lay.flat,
    )


def _is_global(plan: PoolPlan) -> bool:
    return all(
        a.out == 1
        and a.pad_begin == 0
        and a.pad_end == 0
        and a.dilation == 1
        and a.window == a.size
        for a in plan.axes
    )


def pool(x: Array, plan: PoolPlan, threads: int | None = None) -> tuple[Array, Array | None]:
    """Pool x (N, C, *spatial) as the plan says: (values, indices or None).

    Chunks of planes run on `threads` threads (default: IRPOOL_THREADS, else the CPU count, at
    most 8); results do not depend on it."""
    if plan.integers_in_float32 and x.dtype.kind in "iu":
        as_float = replace(plan, integers_in_float32=False)
        values, indices = pool(integers_as_float32(x), as_float, threads)
        return round_to_integer(values, x.dtype), indices
    name = check_input(x, plan)
    policy = max_policy(plan, name) if plan.reduce == "max" else plan.nan_max
    if policy != plan.nan_max:
        plan = replace(plan, nan_max=policy)
    cdt = compute_dtype(x.dtype, plan)
    out = np.empty(plan.output_shape, dtype=x.dtype)
    want_indices = plan.indices and plan.reduce == "max"
    idx = np.empty(plan.output_shape, dtype=np.dtype(plan.index_dtype)) if want_indices else None
    if out.size == 0:
        return out, idx
    planes = plan.input_shape[0] * plan.input_shape[1]
    spatial_in = plan.input_shape[2:]
    spatial_out = plan.output_shape[2:]
    xs = np.ascontiguousarray(x).reshape((planes, *spatial_in))
    out_s = out.reshape((planes, *spatial_out))
    idx_s = idx.reshape((planes, *spatial_out)) if idx is not None else None
    plane_bytes = max(1, math.prod(spatial_in)) * cdt.itemsize
    lay = _layout(plan.axes)
    chunk_bytes = CHUNK_BYTES // 2 if want_indices else CHUNK_BYTES
    if plan.reduce == "mean" and len(lay.phases) == 1 and len(_taps(plan.axes).number) > 16:
        # many-tap sums over one phase make one pass per tap over the whole chunk: keep it
        # smaller (measured)
        chunk_bytes //= 2
    elif plan.reduce == "mean":
        # strided sums split a chunk into one buffer per phase and every tap runs over one of
        # them: keep each at least PHASE_BYTES, or short operations (and, with threads,
        # contention for the GIL between them) dominate (measured on avg3d: 2.6x with threads)
        chunk_bytes = max(chunk_bytes, min(4 * CHUNK_BYTES, len(lay.phases) * PHASE_BYTES))
    rows = max(1, chunk_bytes // plane_bytes)
    lowest, empty_value = max_start(name, cdt, plan)
    fast_global = _is_global(plan) and (
        plan.reduce == "mean" or (idx_s is None and (plan.nan_max == "ignore" or cdt.kind != "f"))
    )

    # a plane larger than a chunk is processed in blocks of output rows (means only)
    block_rows = plan.axes[0].out
    if plan.reduce == "mean" and not fast_global and plane_bytes > chunk_bytes:
        per_row = plane_bytes / max(1, plan.axes[0].size) * plan.axes[0].stride
        block_rows = max(1, min(plan.axes[0].out, int(chunk_bytes // max(per_row, 1))))

    # windows that share no input element (kernel <= stride): each tap reads its strided slice
    # of the input directly, cheaper than copying the input into phase buffers (measured on
    # avg2x2)
    direct_sums = (
        plan.reduce == "mean"
        and block_rows == plan.axes[0].out
        and cdt == x.dtype
        and len(lay.taps) <= len(lay.phases)
    )
    spaces: dict[int, Scratch] = {}

    def run_chunk(p0: int) -> None:
        work = spaces.setdefault(threading.get_ident(), Scratch())
        p1 = min(planes, p0 + rows)
        raw = xs[p0:p1]
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            if fast_global:
                values = _global(raw, plan, name, cdt, lowest)
                if plan.reduce == "mean":
                    values = _mean_values(values, plan, out.dtype)
                _store(values, out_s[p0:p1], name)
            elif plan.reduce == "mean":
                for j0 in range(0, plan.axes[0].out, block_rows):
                    j1 = min(plan.axes[0].out, j0 + block_rows)
                    if direct_sums:
                        sums = _direct_sum_chunk(raw, plan, cdt, work)
                    else:
                        part = lay if block_rows == plan.axes[0].out else _block(lay, j0, j1)
                        sums = _sum_chunk(raw, part, name, cdt, work)
                    dst = out_s[p0:p1, j0:j1]
                    means = _mean_values(sums, plan, out.dtype, slice(j0, j1), work, dst)
                    if means is not dst:
                        _store(means, dst, name)
            elif name in ("float16", "bfloat16") and plan.nan_max == "ignore":
                out_s[p0:p1] = _half_max_chunk(raw, plan, name, lowest, idx_s, p0, work)
            else:
                dst = out_s[p0:p1]
                values = _max_chunk(raw, plan, name, cdt, lowest, empty_value, idx_s, p0, work, dst)
                if values is not dst:
                    _store(values, dst, name)

    starts = range(0, planes, rows)
    workers = _threads(threads)
    if workers > 1 and len(starts) > 1 and x.nbytes >= PARALLEL_BYTES:
        list(_executor(workers).map(run_chunk, starts))
    else:
        for p0 in starts:
            run_chunk(p0)
    return out, idx


def _sum_chunk(raw: Array, lay: _Layout, name: str, cdt: np.dtype[Any], work: Scratch) -> Array:
    """Window sums of a chunk, taps added in row-major window order starting from +0."""
    buffers = _fill_phases(raw, lay, name, cdt, 0, work)
    if cdt.kind == "f":
        zero = cdt.type(0)
        first: Callable[[Array, Array], Any] = lambda src, acc: np.add(src, zero, out=acc)  # noqa: E731
    else:
        first = lambda src, acc: np.copyto(acc, src)  # noqa: E731
    _, values = _accumulate(buffers, lay, raw.shape[0], cdt, first, np.add, work)
    return values


def _direct_sum_chunk(raw: Array, plan: PoolPlan, cdt: np.dtype[Any], work: Scratch) -> Array:
    """Window sums in row-major tap order from strided slices of the chunk itself; a tap in the
    padding adds +0 to a sum that starts at +0, which changes nothing, so it is skipped."""
    taps = _taps(plan.axes)
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


PARALLEL_BYTES = 1 << 20
"""Inputs at least this large are split over threads (numpy releases the GIL in its loops)."""

_EXECUTORS: dict[int, concurrent.futures.ThreadPoolExecutor] = {}


def _threads(requested: int | None) -> int:
    if requested is not None:
        return max(1, requested)
    return env_int("IRPOOL_THREADS", min(os.cpu_count() or 1, 8))


def _executor(workers: int) -> concurrent.futures.ThreadPoolExecutor:
    if workers not in _EXECUTORS:
        _EXECUTORS[workers] = concurrent.futures.ThreadPoolExecutor(
            max_workers=workers, thread_name_prefix="irpool"
        )
    return _EXECUTORS[workers]


def _global(
    raw: Array, plan: PoolPlan, name: str, cdt: np.dtype[Any], lowest: float | int
) -> Array:
    """One window per plane: a reduction over a transposed copy, summed in row-major order."""
    planes = raw.shape[0]
    size = math.prod(raw.shape[1:])
    column = np.empty((size, planes), cdt)
    _copy_compute(column, raw.reshape(planes, size).T, name, cdt)
    shape = (planes,) + (1,) * len(plan.axes)
    if plan.reduce == "mean":
        # add.reduce over the first axis of a C-ordered array adds the rows in order
        return np.asarray(np.add.reduce(column, axis=0, dtype=cdt)).reshape(shape)
    if cdt.kind == "f":
        return np.asarray(np.fmax(np.fmax.reduce(column, axis=0), lowest)).reshape(shape)
    return np.asarray(np.maximum.reduce(column, axis=0)).reshape(shape)


@lru_cache(maxsize=256)
def _axis_taps_cached(axis: AxisPlan) -> tuple[_Tap, ...]:
    return tuple(_axis_taps(axis))


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
    if dim == a.ndim - 1 and axis.size == axis.out * axis.stride and a.flags.c_contiguous:
        return _last_axis_max(a, ax, axis, op, pad, work, into)
    shape = list(a.shape)
    shape[dim] = axis.out
    b = into if into is not None else work.take(("axis", ax), tuple(shape), a.dtype)
    head = (slice(None),) * dim
    taps = _axis_taps_cached(axis)
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
    a: Array,
    ax: int,
    axis: AxisPlan,
    op: Callable[..., Any],
    pad: float | int,
    work: Scratch,
    into: Array | None = None,
) -> Array:
    """The last-axis pass when n = out * stride: all rows of the chunk form one long row of
    `out` groups of `stride` elements, so every tap is a single strided 1-D operation over the
    whole chunk; a tap reaching past a row's ends touches the neighbouring row there, so those
    few columns are saved before and restored after it."""
    s, out = axis.stride, axis.out
    rows = a.size // axis.size
    groups = a.reshape(rows * out, s)
    b = (
        into.reshape(rows, out)
        if into is not None
        else work.take(("axis", ax), (rows, out), a.dtype)
    )
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
    return into if into is not None else b.reshape((*a.shape[:-1], out))


def _max_chunk(
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
    chunk = _to_compute(raw, name, cdt)
    if not floating:
        pad: float | int = lowest
        op: Callable[..., Any] = np.maximum
    elif plan.nan_max == "ignore":
        pad, op = lowest, np.fmax
    else:
        pad, op = -math.inf, (np.maximum if plan.nan_max == "propagate" else np.fmax)
    acc: Array | None = None
    buffers: list[Array] = []
    pad_hit = False
    lay = _layout(plan.axes)
    if idx_s is not None and lay.flat:
        # with indices: the polyphase layout makes every tap, for the values and for the
        # search of the first maximal tap, one contiguous operation
        buffers = _fill_phases(raw, lay, name, cdt, pad, work)
        if floating and plan.nan_max == "ignore":
            first: Callable[[Array, Array], Any] = lambda src, a: np.fmax(src, lowest, out=a)  # noqa: E731
        else:
            first = lambda src, a: np.copyto(a, src)  # noqa: E731
        acc, values = _accumulate(buffers, lay, raw.shape[0], cdt, first, op, work)
        values = np.array(values)
        # a maximum equal to the padding value may have come from a padding tap
        pad_hit = plan.nan_max != "ignore" and bool((values == pad).any())
    else:
        values = chunk
        # first axis first: its taps are strided slices of whole rows (contiguous inner loops),
        # and the pass reading the whole chunk from memory halves it before the strided
        # last-axis pass (measured: batch_max 2.8-3.8x -> 2.4-2.9x ov1, max3d 2.3x -> 1.4x)
        last = len(plan.axes) - 1
        for ax in range(last + 1):
            into = dst if ax == last and dst is not None and dst.dtype == cdt else None
            values = _axis_max(values, ax, plan.axes[ax], op, pad, work, into)
        if floating and plan.nan_max == "ignore":
            # openvino starts from lowest() and keeps a tap only when greater: -inf and
            # all-NaN windows give lowest()
            np.fmax(values, lowest, out=values)
    has_nan = floating and plan.nan_max != "ignore" and bool(np.isnan(chunk).any())
    if has_nan and plan.nan_max == "first":
        values[np.isnan(_first_tap_values(chunk, plan))] = np.nan
    if floating and plan.nan_max in MLAS_POLICIES:
        if has_nan:  # rare: the kernel's own order of operations decides
            values[...] = _mlas_max(chunk, plan, lowest)
        else:
            _mlas_floor(values, plan, lowest)
    mask = empty_windows(plan)
    if mask is not None:
        values[:, mask] = empty_value
    if idx_s is not None:
        if acc is not None and not pad_hit:
            found = _found_polyphase(buffers, acc, lay, raw.shape[0])
        else:
            # search the unpadded chunk, where padding cannot match
            found = _found_box(chunk, values, _taps(plan.axes))
        if has_nan:
            found = _nan_found(chunk, values, plan, found)
        _indices(found, values, plan, p0, lowest, idx_s[p0 : p0 + raw.shape[0]])
    return values


HALF_NAN_KEY = -0x7FFF
"""Key of a NaN in `_half_keys`: below every number, -inf included."""


def _half_keys(raw: Array, work: Scratch, fix_nan: bool) -> Array:
    """float16/bfloat16 bit patterns as int16 keys with the order of the numbers: +m for
    positives, -m for negatives (so +0 and -0 tie).  A NaN with the sign bit set is below -inf
    already; with `fix_nan`, one without it is moved to HALF_NAN_KEY too (else it is above
    +inf).  Four in-place integer passes instead of a where() with temporaries: about 2.4x
    faster (measured on a 16x112x112 chunk)."""
    bits = raw.view(np.int16)
    keys = work.take("keys", bits.shape, np.dtype(np.int16))
    sign = work.take("sign", bits.shape, np.dtype(np.int16))
    np.right_shift(bits, 15, out=sign)  # 0 or -1
    np.bitwise_and(sign, np.int16(0x7FFF), out=keys)
    np.bitwise_xor(bits, keys, out=keys)  # -(m + 1) for negatives
    np.subtract(keys, sign, out=keys)  # -m
    if fix_nan:
        infinity = 0x7C00 if raw.dtype.name == "float16" else 0x7F80
        keys[keys > infinity] = HALF_NAN_KEY
    return keys


def _half_bits(values: Array, work: Scratch) -> Array:
    """Inverse of `_half_keys` for keys of numbers (key 0 gives +0), in place: for a negative
    key -m, -m - 1 is ~m, and flipping its 15 low bits gives 0x8000 | m."""
    sign = work.take("bits_sign", values.shape, np.dtype(np.int16))
    np.right_shift(values, 15, out=sign)
    np.add(values, sign, out=values)
    np.bitwise_and(sign, np.int16(0x7FFF), out=sign)
    np.bitwise_xor(values, sign, out=values)
    return values


def _half_max_chunk(
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
    keys = _half_keys(raw, work, fix_nan=False)
    values = _max_chunk(keys, plan, "int16", keys.dtype, floor_key, floor_key, idx_s, p0, work)
    if values.size and int(values.max()) > infinity:
        # a NaN without the sign bit won a window: move such NaNs below every number (rare)
        keys = _half_keys(raw, work, fix_nan=True)
        values = _max_chunk(keys, plan, "int16", keys.dtype, floor_key, floor_key, idx_s, p0, work)
    np.maximum(values, np.int16(floor_key), out=values)
    return np.asarray(_half_bits(values, work).view(raw.dtype))


def _found_polyphase(buffers: list[Array], acc: Array, lay: _Layout, planes: int) -> Array:
    """Per output: the row-major number of the first tap equal to its maximum, or -1."""
    tap_dtype = np.int16 if len(lay.taps) < 32000 else np.int32
    found = np.full(acc.shape, -1, dtype=tap_dtype)
    equal = np.empty(acc.shape, dtype=bool)
    spare = np.empty_like(found)
    for tap in reversed(lay.taps):
        np.equal(_tap_source(buffers[tap[1]], tap, planes, lay), acc, out=equal)
        _mark(found, tap[0], equal, spare)
    return _valid(found, planes, lay)


def _mark(found: Array, number: int, where: Array, spare: Array) -> None:
    """found[where] = number, computed as found -= (found - number) * where: three vector
    operations are about ten times faster than numpy's masked copy (measured)."""
    np.subtract(found, number, out=spare)
    np.multiply(spare, where, out=spare)
    np.subtract(found, spare, out=found)


def _store(acc: Array, dst: Array, name: str) -> None:
    """Write computed values to the output dtype (nearest even for floats; float64 outputs
    computed in float32 saturate at +-FLT_MAX, as openvino converts them; integers saturate)."""
    if name == "float64" and acc.dtype == np.float32:
        acc = np.clip(acc, -F32_MAX, F32_MAX)
    elif dst.dtype.kind in "iu" and acc.dtype.kind in "iu" and acc.dtype != dst.dtype:
        acc = np.clip(acc, *_int_range(dst.dtype))
    np.copyto(dst, acc, casting="unsafe")


def _float_to_int(result: Array, dtype: np.dtype[Any]) -> Array:
    """A float mean to an integer type, as openvino's CPU plugin converts: saturating, and a
    NaN (an empty window, 0/0) becomes 0 for 8-bit types and INT32_MIN for 32/64-bit ones."""
    info = np.iinfo(dtype)
    nan_value = 0 if info.bits == 8 else np.iinfo(np.int32).min
    result = np.where(np.isnan(result), nan_value, result)
    return np.clip(result, info.min, info.max)


def integers_as_float32(x: Array) -> Array:
    """An integer tensor as openvino's float32 path sees it (64-bit integers wrap to 32)."""
    if x.dtype.itemsize == 8:
        x = x.astype(np.int32)
    return np.asarray(x.astype(np.float32))


def round_to_integer(values: Array, dtype: np.dtype[Any]) -> Array:
    """Float results back to an integer type as openvino converts them: half to even,
    saturating (64-bit types at 32 bits, the width they were computed in), NaN to 0 for 8-bit
    types and INT32_MIN otherwise (_float_to_int)."""
    width = np.dtype(np.int32) if dtype.itemsize == 8 else dtype
    with np.errstate(invalid="ignore"):
        rounded = _float_to_int(np.rint(values.astype(np.float64)), width)
    return np.asarray(rounded.astype(dtype))


@lru_cache(maxsize=64)
def _divisor_cached(plan: PoolPlan) -> Array | float:
    return divisor(plan)


def _mean_values(
    work: Array,
    plan: PoolPlan,
    out_dtype: np.dtype[Any],
    rows: slice = slice(None),
    scratch: Scratch | None = None,
    dst: Array | None = None,
) -> Array:
    """Sums to means under the plan's divisor, integer rounding and empty-window rules;
    `rows` selects the output rows of the first spatial axis the sums belong to."""
    div = _divisor_cached(plan)
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
        result = _float_to_int(result, out_dtype)
    return np.asarray(result)


def _first_positions(axis: AxisPlan) -> Array:
    """Per window: input position of its first tap inside the input (clamped when none)."""
    j = np.arange(axis.out)
    start = j * axis.stride - axis.pad_begin
    t = np.where(start < 0, -(start // axis.dilation), 0)
    pos = start + t * axis.dilation
    return np.asarray(np.clip(pos, 0, axis.size - 1))


def _first_tap_values(chunk: Array, plan: PoolPlan) -> Array:
    index: tuple[Any, ...] = (slice(None), *np.ix_(*[_first_positions(a) for a in plan.axes]))
    return np.asarray(chunk[index])


def _strides(plan: PoolPlan) -> list[int]:
    sizes = [a.size for a in plan.axes]
    if plan.column_major:
        return [math.prod(sizes[:i]) for i in range(len(sizes))]
    return [math.prod(sizes[i + 1 :]) for i in range(len(sizes))]


def _found_box(chunk: Array, values: Array, taps: _Taps) -> Array:
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
    if plan.nan_max == "propagate":
        taps = _taps(plan.axes)
        last = np.full(values.shape, -1, dtype=found.dtype)
        for number, o, s in zip(taps.number, taps.out, taps.src, strict=True):
            np.copyto(last[o], number, where=np.isnan(chunk[s]))
        return np.asarray(np.where(nan_value, last, found))
    return np.asarray(np.where(nan_value, _first_tap_numbers(plan), found))


@lru_cache(maxsize=64)
def _index_tables(plan: PoolPlan) -> tuple[Array, Array]:
    """(offset of every window tap, spatial index of every window's first tap position)."""
    n_taps = math.prod(a.window for a in plan.axes)
    strides = _strides(plan)
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


def _indices(
    found: Array, values: Array, plan: PoolPlan, p0: int, lowest: float | int, dst: Array
) -> None:
    """Write flat indices for the chosen tap numbers into dst, in the plan's index layout."""
    if plan.nan_max == "ignore":
        # openvino starts from the lowest value and its first element and replaces them only
        # when a tap is strictly greater, so a window whose maximum is lowest() points at 0
        low = values <= lowest
        if low.any():
            found = np.where(low, -1, found)
    lut, base = _index_tables(plan)
    index = np.take(lut, found)
    missing = found < 0
    index += base
    if missing.any():
        index[missing] = 0 if plan.empty_index == "plane_start" else -sum(_strides(plan))
    plane_size = math.prod(a.size for a in plan.axes)
    planes = np.arange(p0, p0 + values.shape[0], dtype=np.int64) * plane_size
    index += planes.reshape((-1,) + (1,) * len(plan.axes))
    if plan.index_axis > 0:
        index %= math.prod(plan.input_shape[plan.index_axis :])
    np.copyto(dst, index, casting="unsafe")


def _first_tap_numbers(plan: PoolPlan) -> Array:
    numbers = []
    for a in plan.axes:
        start = np.arange(a.out) * a.stride - a.pad_begin
        numbers.append(np.where(start < 0, -(start // a.dilation), 0))
    result = numbers[0]
    for axis, v in zip(plan.axes[1:], numbers[1:], strict=True):
        result = np.add.outer(result * axis.window, v)
    return np.asarray(result)


# -- onnxruntime's MLAS max kernels -----------------------------------------------------------
#
# Without NaN these are plain maxima that start from lowest() (the generic and global kernels
# and the 3-D vector kernel) or, in the 2-D vector kernel, from the first row of the window, with
# lowest() only in the padding of the last axis.  With NaN, the order of operations decides:
# SSE's maxps(a, b) returns b when either is NaN, so a NaN met by a vector fold restarts it from
# the next value, while std::max(a, b) (scalar code) never takes a NaN b and keeps a NaN a.


def _maxps(acc: Array, v: Array) -> Array:
    """maxps(acc, v): v where either is NaN, else the larger."""
    return np.asarray(np.where(np.isnan(acc), v, np.maximum(acc, v)))


def _std_max(acc: Array, v: Array) -> Array:
    """std::max(acc, v): v only where acc < v."""
    return np.asarray(np.where(acc < v, v, acc))


def _mlas_floor(values: Array, plan: PoolPlan, lowest: float | int) -> None:
    """NaN-free windows: the maximum, raised to lowest() where the kernel starts from it."""
    if plan.nan_max != "mlas_2d":
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


def _mlas_max(chunk: Array, plan: PoolPlan, lowest: float | int) -> Array:
    """Max pooling of a chunk (compute type) exactly as the plan's MLAS kernel computes it."""
    if plan.nan_max == "mlas_global":
        return _mlas_global(chunk, lowest)
    if plan.nan_max == "mlas_2d":
        return _mlas_2d(chunk, plan, lowest)
    return _mlas_3d(chunk, plan, lowest)
