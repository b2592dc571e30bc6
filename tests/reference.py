"""A slow, obviously correct pooling reference: plain loops over every output and every tap.

It follows the semantics as written in docs/semantics.md, one window at a time, and shares no
code with irpool's kernel beyond the PoolPlan it reads.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import Any

import numpy as np

from irpool.geometry import PoolPlan

F32_MAX = float(np.finfo(np.float32).max)


def _compute(x: np.ndarray, plan: PoolPlan) -> np.ndarray:
    name = x.dtype.name
    if name in ("float16", "bfloat16"):
        return x.astype(np.float32)
    if name == "float64" and plan.narrow_64bit:
        return np.clip(x, -F32_MAX, F32_MAX).astype(np.float32)
    if name == "int64" and plan.narrow_64bit:
        return x.astype(np.int32)
    return x


BF16_LOWEST = -3.3895313892515355e38  # the lowest finite bfloat16, 0xFF7F


def _lowest(dtype: np.dtype[Any]) -> Any:
    return np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min


MLAS = ("mlas_generic", "mlas_global", "mlas_2d", "mlas_3d")


def _policy(plan: PoolPlan, name: str) -> str:
    """onnxruntime's MLAS kernels take float32 (float16 converted to it); its reference loop,
    the 'first' rule, takes every other type."""
    if plan.nan_max in MLAS and name not in ("float32", "float16"):
        return "first"
    if plan.nan_max == "eigen_3d" and name not in ("float64", "float32", "float16", "bfloat16"):
        return "ignore"  # integers: a plain maximum
    return plan.nan_max


def pool(x: np.ndarray, plan: PoolPlan) -> tuple[np.ndarray, np.ndarray | None]:
    if plan.integers_in_float32 and x.dtype.kind in "iu":
        # OpenVINO pools most integer layers in float32 (64-bit values wrapped to 32 bits
        # first) and rounds back half to even, saturating; a NaN becomes 0 (8-bit) or INT32_MIN
        wrapped = x.astype(np.int32) if x.dtype.itemsize == 8 else x
        as_float = dataclasses.replace(plan, integers_in_float32=False)
        values, idx = pool(wrapped.astype(np.float32), as_float)
        info = np.iinfo(np.int32 if x.dtype.itemsize == 8 else x.dtype)
        # the f32 -> i32 reorder saturates at the largest float32 below 2^31
        top = 2147483520 if info.bits == 32 else info.max
        out = np.empty(values.shape, dtype=x.dtype)
        for pos, v in np.ndenumerate(values.astype(np.float64)):
            if math.isnan(v):
                out[pos] = 0 if info.bits == 8 else info.min
            else:
                out[pos] = min(max(round(v), info.min), top)  # round(): half to even
        return out, idx
    n, c = plan.input_shape[:2]
    sizes = [a.size for a in plan.axes]
    v = _compute(x, plan)
    policy = _policy(plan, x.dtype.name)
    out = np.zeros(plan.output_shape, dtype=np.float64 if v.dtype.kind == "f" else np.int64)
    out = out.astype(object)
    idx = np.zeros(plan.output_shape, dtype=np.int64)
    if plan.column_major:
        strides = [math.prod(sizes[:i]) for i in range(len(sizes))]
    else:
        strides = [math.prod(sizes[i + 1 :]) for i in range(len(sizes))]
    plane_size = math.prod(sizes)
    for b, ch in itertools.product(range(n), range(c)):
        plane = v[b, ch]
        plane_base = (b * c + ch) * plane_size
        for j in itertools.product(*[range(a.out) for a in plan.axes]):
            starts = [jj * a.stride - a.pad_begin for jj, a in zip(j, plan.axes, strict=True)]
            taps = []  # row-major window order
            for t in itertools.product(*[range(a.window) for a in plan.axes]):
                pos = tuple(
                    s + tt * a.dilation for s, tt, a in zip(starts, t, plan.axes, strict=True)
                )
                taps.append(pos)
            inside = [
                p for p in taps if all(0 <= q < a.size for q, a in zip(p, plan.axes, strict=True))
            ]
            if plan.reduce == "mean":
                value = _mean(plane, inside, taps, starts, plan, v.dtype)
                chosen = None
            elif policy in MLAS:
                value, chosen = _mlas(plane, starts, plan, policy), None
            elif policy == "eigen_3d":
                pad = BF16_LOWEST if x.dtype.name == "bfloat16" else _lowest(v.dtype)
                values = [
                    float(plane[p]) if p in inside else float(pad) for p in taps
                ]  # row-major window order, padding taps included
                value, chosen = _eigen(values, _ndhwc_packet(plan, b, ch, j)), None
            else:
                value, chosen = _max(
                    plane, inside, plan, policy, v.dtype, x.dtype.name == "bfloat16"
                )
            out[(b, ch, *j)] = value
            if chosen is not None:
                spatial = sum(q * s for q, s in zip(chosen, strides, strict=True))
            elif plan.empty_index == "minus_one":  # onnxruntime: every coordinate stays -1
                spatial = -sum(strides)
            elif plan.empty_index == "first_tap":
                # PyTorch: per axis, the start stepped over negative positions by the dilation
                firsts = []
                for s0, a in zip(starts, plan.axes, strict=True):
                    while s0 < 0:
                        s0 += a.dilation
                    firsts.append(s0)
                spatial = sum(q * s for q, s in zip(firsts, strides, strict=True))
            else:
                spatial = 0
            flat = plane_base + spatial
            if plan.index_axis > 0:
                block = math.prod(plan.input_shape[plan.index_axis :])
                # PyTorch's first tap of an empty window may lie past the plane: not wrapped
                unwrapped = chosen is None and plan.empty_index == "first_tap"
                flat = plane_base % block + spatial if unwrapped else flat % block
            idx[(b, ch, *j)] = flat
    values = _cast(out, x.dtype, v.dtype, plan.bf16_flush, plan.bf16_round)
    return values, (idx.astype(plan.index_dtype) if plan.indices and plan.reduce == "max" else None)


def _flushed(q: Any) -> Any:
    """A float32 value whose magnitude is below the smallest normal as a zero of its sign."""
    if abs(float(q)) < 2.0**-126:
        return math.copysign(0.0, float(q))
    return q


def _half_up_if_odd(q: Any) -> int:
    """The bfloat16 bits ov::bfloat16 gives for float32 q: add 0x8000 when bit 16 is set
    (modulo 2**32), keep the high half (openvino's CPU plugin on AVX2, measured)."""
    u = int(np.float32(q).view(np.uint32))
    if u & 0x10000:
        u = (u + 0x8000) % 2**32
    return u >> 16


def _cast(
    out: np.ndarray,
    dtype: np.dtype[Any],
    compute: np.dtype[Any],
    flush: bool = False,
    bf16_round: str = "nearest_even",
) -> np.ndarray:
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        # a NaN mean (0/0) becomes 0 in 8-bit types and INT32_MIN in wider ones (measured on
        # openvino's CPU plugin); everything else saturates to the type
        nan_value = 0 if info.bits == 8 else -(2**31)
        flat = [
            min(
                max(nan_value if isinstance(q, float) and math.isnan(q) else int(q), info.min),
                info.max,
            )
            for q in out.ravel()
        ]
        return np.array(flat, dtype=np.int64).astype(dtype).reshape(out.shape)
    if dtype.name == "float64" and compute == np.float32:
        flat = [
            min(max(float(q), -F32_MAX), F32_MAX) if not math.isnan(q) else q for q in out.ravel()
        ]
        return np.array(flat, dtype=np.float64).reshape(out.shape)
    if bf16_round == "half_up_if_odd" and dtype.name == "bfloat16":
        with np.errstate(over="ignore"):
            bits = [_half_up_if_odd(compute.type(q)) for q in out.ravel()]
        return np.array(bits, dtype=np.uint16).view(dtype).reshape(out.shape)
    if flush and dtype.name == "bfloat16":
        # openvino's CPU plugin rounds to bfloat16 with float32 subnormals flushed to zero
        out = np.array([_flushed(q) for q in out.ravel()], dtype=object).reshape(out.shape)
    with np.errstate(over="ignore"):  # float32 sums above float16's range become inf
        return (
            np.array([compute.type(q) for q in out.ravel()], dtype=compute)
            .astype(dtype)
            .reshape(out.shape)
        )


def _mean(plane, inside, taps, starts, plan: PoolPlan, dtype) -> Any:
    if dtype.kind == "f":
        total = dtype.type(0)
        with np.errstate(over="ignore"):  # a float32 sum may overflow to inf (openvino's too)
            for p in inside:
                total = dtype.type(total + plane[p])
    elif plan.int_mean == "trunc":
        total = 0
        for p in inside:  # 64-bit accumulator that wraps, as PyTorch's int64 kernel
            total = (total + int(plane[p]) + 2**63) % 2**64 - 2**63
    else:
        total = 0
        for p in inside:  # 32-bit accumulator that wraps, as openvino's CPU plugin
            total = (total + int(plane[p]) + 2**31) % 2**32 - 2**31
    if plan.divisor == "full":
        div = math.prod(a.window for a in plan.axes)
    elif plan.divisor == "declared":
        div = sum(
            1
            for p in taps
            if all(
                -a.pad_begin <= q < a.size + a.pad_end for q, a in zip(p, plan.axes, strict=True)
            )
        )
    else:
        div = len(inside)
        if div == 0 and plan.empty == "openvino":
            # openvino CPU: per axis, the in-input tap count, or for an empty axis the clamped
            # extent min(start + k_eff, n) - max(start, 0) (0 or negative) over the dilation,
            # truncated toward zero as C's integer division does
            div = 1
            for s, a in zip(starts, plan.axes, strict=True):
                count = sum(1 for t in range(a.window) if 0 <= s + t * a.dilation < a.size)
                if count == 0:
                    extent = min(s + a.k_eff, a.size) - max(s, 0)
                    count = int(extent / a.dilation)  # int() truncates toward zero
                div *= count
    if div == 0 and plan.empty in ("zero", "nan"):
        return 0.0 if plan.empty == "zero" or dtype.kind != "f" else float("nan")
    if dtype.kind == "f":
        with np.errstate(invalid="ignore", divide="ignore"):
            return dtype.type(total) / dtype.type(div)
    if plan.int_mean == "trunc":
        if div == 0:
            return 0
        q = abs(total) // div
        return q if total >= 0 else -q
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.float32(total) * (np.float32(1) / np.float32(div))
    return float(np.rint(mean))


def _any_empty(plan: PoolPlan) -> bool:
    for a in plan.axes:
        for j in range(a.out):
            if not any(
                0 <= j * a.stride - a.pad_begin + t * a.dilation < a.size for t in range(a.window)
            ):
                return True
    return False


def _max(
    plane, inside, plan: PoolPlan, policy: str, dtype, bf16: bool
) -> tuple[Any, tuple[int, ...] | None]:
    floating = dtype.kind == "f"
    lowest = _lowest(dtype)
    reference_kernel = _any_empty(plan) or any(a.dilation > 1 for a in plan.axes)
    native = plan.plugin_isa not in (None, "avx2")  # bfloat16 kernels (AVX-512)
    if bf16 and plan.empty == "lowest" and native and reference_kernel:
        # openvino's CPU plugin on AVX-512 (with or without AVX512_BF16) runs a bfloat16 layer
        # with an empty window or a dilation on oneDNN's reference kernel, which starts every
        # max from bfloat16's lowest (measured)
        lowest = BF16_LOWEST
    if not inside:
        if plan.empty == "-inf" and floating:
            return -math.inf, None
        return lowest, None
    if policy == "ignore":  # openvino: start from lowest(), replace only when greater
        cur, chosen = lowest, None
        for p in inside:
            if plane[p] > cur:
                cur, chosen = plane[p], p
        return cur, chosen
    if policy == "first":  # onnxruntime: start from the first tap inside the input
        cur, chosen = plane[inside[0]], inside[0]
        for p in inside[1:]:
            if plane[p] > cur:
                cur, chosen = plane[p], p
        return cur, chosen
    # PyTorch: start from -inf and the first tap inside the input; a NaN always replaces
    cur, chosen = (-math.inf if floating else lowest), inside[0]
    for p in inside:
        if plane[p] > cur or (floating and math.isnan(plane[p])):
            cur, chosen = plane[p], p
    return cur, chosen


# -- onnxruntime's MLAS max kernels, transcribed loop by loop (pooling.cpp, MlasPool) ----------

LOWEST32 = float(np.finfo(np.float32).min)


def _maxps(a: float, b: float) -> float:
    """SSE maxps(a, b): b when either is NaN, else the larger."""
    if math.isnan(a) or math.isnan(b):
        return b
    return a if a > b else b


def _std_max(a: float, b: float) -> float:
    """std::max(a, b) = (a < b) ? b : a."""
    return b if a < b else a


def _mlas(plane, starts: list[int], plan: PoolPlan, policy: str) -> float:
    """One output of the MLAS kernel named by `policy` (float32 values)."""
    axes = plan.axes
    if policy == "mlas_global":
        flat = [float(q) for q in plane.ravel()]
        lanes = [LOWEST32] * 4
        whole = len(flat) // 4 * 4
        for i in range(0, whole, 4):
            for lane in range(4):
                lanes[lane] = _maxps(lanes[lane], flat[i + lane])
        total = _maxps(_maxps(lanes[0], lanes[2]), _maxps(lanes[1], lanes[3]))
        for value in flat[whole:]:
            total = _std_max(total, value)
        return total
    ranges = [
        range(max(s, 0), min(s + a.window, a.size)) for s, a in zip(starts, axes, strict=True)
    ]
    if policy == "mlas_generic":
        m = LOWEST32
        for pos in itertools.product(*ranges):
            m = _std_max(m, float(plane[pos]))
        return m
    # the vector kernels: every input column of the last axis folded over the window's rows
    # (2-D: from the first row; 3-D: from lowest(), planes outer), maxps for the columns read
    # four at a time and std::max for the last width % 4; then the columns of the window,
    # lowest() in the padding, folded with maxps from the first
    width = axes[-1].size
    vector = width // 4 * 4
    rows = list(itertools.product(*ranges[:-1]))

    def column(c: int) -> float:
        if not 0 <= c < width:
            return LOWEST32
        fold = _maxps if c < vector else _std_max
        values = [float(plane[(*r, c)]) for r in rows]
        acc, rest = (values[0], values[1:]) if policy == "mlas_2d" else (LOWEST32, values)
        for value in rest:
            acc = fold(acc, value)
        return acc

    result = column(starts[-1])
    for t in range(1, axes[-1].window):
        result = _maxps(result, column(starts[-1] + t))
    return result


# -- TensorFlow's MaxPool3D without oneDNN: Eigen's CuboidMaxPooling (tensorflow-cpu 2.21) -----


def _ndhwc_packet(plan: PoolPlan, b: int, ch: int, j: tuple[int, ...]) -> bool:
    """Whether Eigen reduces output (b, ch, *j) in a packet of 8 floats: TensorFlow lays the
    output out as NDHWC and evaluates it 8 consecutive elements at a time from element 0; a
    group that stays within one pixel's channels runs in packets, every other element (and the
    last total % 8) one at a time."""
    n_batch, channels = plan.input_shape[:2]
    outs = [a.out for a in plan.axes]
    pixel = 0
    for jj, out in zip(j, outs, strict=True):
        pixel = pixel * out + jj
    element = (b * math.prod(outs) + pixel) * channels + ch
    start = element - element % 8
    return start + 8 <= n_batch * math.prod(outs) * channels and start % channels + 8 <= channels


def _eigen(values: list[float], packet: bool) -> float:
    """Eigen's MaxReducer over one window's taps, from -inf.  One at a time: m = (m > t) ? m : t
    (a NaN tap replaces m, the next tap replaces the NaN, the later of equal taps stays).  In
    packets: m = (t > m) ? t : m (NaN never wins, the earlier of equal taps stays), with 16
    taps or more in four accumulators (tap i into i % 4 up to the last multiple of 4), then
    m0 combined with m1, m2, m3, then the remaining taps into m0."""
    if not packet:
        m = -math.inf
        for t in values:
            m = m if m > t else t
        return m
    acc = [-math.inf] * 4
    whole = len(values) // 4 * 4 if len(values) >= 16 else 0
    for i in range(whole):
        acc[i % 4] = values[i] if values[i] > acc[i % 4] else acc[i % 4]
    m = acc[0]
    for t in acc[1:] + values[whole:]:
        m = t if t > m else m
    return m
