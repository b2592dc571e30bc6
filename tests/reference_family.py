"""Brute-force references for the pooling families (slow on purpose: one output at a time, one
tap at a time, numpy scalars).  Each is a literal transcription of a runtime's measured rule
(docs/semantics.md), written independently of irpool's kernels, which the tests compare against
them bit for bit; the runtimes themselves are compared in the oracle tests.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

F32 = np.float32
LOWEST = F32(np.finfo(np.float32).min)


def add(a: Any, b: Any) -> np.float32:
    return F32(F32(a) + F32(b))


def maxps(a: Any, b: Any) -> Any:
    """x86 MAXPS: a > b ? a : b (a NaN in either gives b)."""
    return a if a > b else b


def stdmax(a: Any, b: Any) -> Any:
    """std::max(a, b) = a < b ? b : a."""
    return b if a < b else a


# -- adaptive pooling ---------------------------------------------------------------------------


def adaptive_window(i: int, n_in: int, n_out: int, float32_end: bool) -> tuple[int, int]:
    start = (i * n_in) // n_out
    if float32_end:
        end = math.ceil(F32(F32((i + 1) * n_in) / F32(n_out)))
    else:
        end = -((-(i + 1) * n_in) // n_out)
    return start, end


def adaptive(x: np.ndarray, sizes: tuple[int, ...], reduce: str, convention: str) -> list[Any]:
    """openvino: float32 ends, sum from +0 then one division, max from the first tap with `<`;
    torch: exact ends, sum divided axis by axis, max from -inf taking larger or NaN taps."""
    ov = convention == "openvino"
    xf = x.astype(np.float32) if ov or x.dtype != np.float64 else x
    spatial = x.shape[2:]
    out_shape = x.shape[:2] + tuple(sizes)
    values = np.zeros(out_shape, xf.dtype)
    index = np.zeros(out_shape, np.int64)
    for n, c, *pos in itertools.product(*(range(d) for d in out_shape)):
        wins = [adaptive_window(i, s, o, ov) for i, s, o in zip(pos, spatial, sizes, strict=True)]
        taps = list(itertools.product(*(range(a, b) for a, b in wins)))
        if reduce == "mean":
            acc = xf.dtype.type(0)
            for t in taps:
                acc = xf.dtype.type(acc + xf[(n, c, *t)])
            if ov:
                acc = xf.dtype.type(acc / xf.dtype.type(len(taps)))
            else:
                for a, b in wins:
                    acc = xf.dtype.type(acc / xf.dtype.type(b - a))
            values[(n, c, *pos)] = acc
            continue
        flat = [int(np.ravel_multi_index(t, spatial)) for t in taps]
        if ov:
            best, at = xf[(n, c, *taps[0])], flat[0]
            for t, f in zip(taps[1:], flat[1:], strict=True):
                if best < xf[(n, c, *t)]:
                    best, at = xf[(n, c, *t)], f
        else:
            best, at = xf.dtype.type(-np.inf), flat[0]
            for t, f in zip(taps, flat, strict=True):
                v = xf[(n, c, *t)]
                if v > best or np.isnan(v):
                    best, at = v, f
        values[(n, c, *pos)] = best
        index[(n, c, *pos)] = at
    return [values, index]


# -- reductions ----------------------------------------------------------------------------------


def _view5(shape: tuple[int, ...]) -> tuple[list[int], list[int | None]]:
    r = len(shape)
    if r == 5:
        return list(shape), [0, 1, 2, 3, 4]
    if r == 4:
        return [shape[0], shape[1], 1, shape[2], shape[3]], [0, 1, None, 2, 3]
    if r == 3:
        return [1, shape[0], 1, shape[1], shape[2]], [None, 0, None, 1, 2]
    if r == 2:
        return [1, 1, 1, shape[0], shape[1]], [None, None, None, 0, 1]
    return [1, shape[0], 1, 1, 1], [None, 0, None, None, None]


def ov_reduce(x: np.ndarray, axes: list[int], kind: str, keep: bool, lanes: int) -> np.ndarray:
    """openvino CPU Reduce* on float data, by the rule measured (docs/semantics.md), with
    vectors of `lanes` float32 (16: AVX-512, 8: AVX2): the (B, C, D, H, W) view; W counts as
    reduced when H is and W == 1, D when C and H are and D == 1; each output's reduced
    elements in row-major order; with W reduced they come in chunks (W, or H*W), each folded
    by `lanes` lanes (lane l: elements l, l + lanes, ...), the lanes combined
    16: ((0..3 op 4..7) op (8..11 op 12..15)), 8: (0..3 op 4..7), then (0 op 1) op (2 op 3),
    the tree combined with the running value (tree first), the rest one by one; a chunk
    shorter than `lanes` is folded one by one, and where its output is at or after the last
    whole block of `lanes` outputs (scalar mode) it still takes that tree step; rank-5 C, D,
    W reduced with H kept (not L2): each (h, w) over (c, d) first; rank > 5: (outer, run,
    inner) when the axes as written form one ascending run, else one sequential fold.  Sum
    from +0, max from lowest() with MAXPS."""
    assert lanes in (8, 16)
    in_dt = x.dtype
    xf = x.astype(F32)
    rank = x.ndim
    ax = sorted({a + rank if a < 0 else a for a in axes})
    raw = [a + rank if a < 0 else a for a in axes]
    is_max = kind == "max"
    op = maxps if is_max else add
    init = LOWEST if is_max else F32(0)

    def term(v: Any) -> Any:
        v = F32(v)
        if kind == "l1":
            return F32(abs(v))
        if kind == "l2":
            return F32(v * v)
        return v

    count = int(np.prod([x.shape[a] for a in ax])) if ax else 1
    if keep:
        oshape = tuple(1 if i in ax else d for i, d in enumerate(x.shape))
    else:
        oshape = tuple(d for i, d in enumerate(x.shape) if i not in ax)

    def finish(v: Any) -> Any:
        if kind == "mean":
            return F32(F32(v) / F32(count))
        if kind == "l2":
            return F32(math.sqrt(v)) if v >= 0 else F32(np.nan)
        return F32(v)

    def chunk_fold(acc: Any, chunk: list[Any]) -> Any:
        m = len(chunk) // lanes * lanes
        lane = [init] * lanes
        for i in range(m):
            lane[i % lanes] = op(lane[i % lanes], chunk[i])
        a = [op(lane[i], lane[i + 4]) for i in range(4)]
        if lanes == 16:
            b = [op(lane[8 + i], lane[12 + i]) for i in range(4)]
            t = [op(a[i], b[i]) for i in range(4)]
        else:
            t = a
        acc = op(op(op(t[0], t[1]), op(t[2], t[3])), acc)
        for v in chunk[m:]:
            acc = op(acc, v)
        return acc

    def seq(acc: Any, vals: list[Any]) -> Any:
        for v in vals:
            acc = op(acc, v)
        return acc

    shape = list(x.shape)
    xv = xf
    rax = ax
    out = np.empty(int(np.prod(oshape)), F32)
    if rank > 5:
        if len(raw) >= 1 and all(raw[i] == raw[i - 1] + 1 for i in range(1, len(raw))):
            a0, a1 = raw[0], raw[-1]
            shape = [
                int(np.prod(shape[:a0])),
                int(np.prod(shape[a0 : a1 + 1])),
                int(np.prod(shape[a1 + 1 :])),
            ]
            xv = xf.reshape(shape)
            rax = [1]
        else:
            keepers = [i for i in range(rank) if i not in ax]
            for o, kidx in enumerate(itertools.product(*[range(x.shape[i]) for i in keepers])):
                acc = init
                for ridx in itertools.product(*[range(x.shape[i]) for i in ax]):
                    full = [0] * rank
                    for i, v in zip(keepers, kidx, strict=True):
                        full[i] = v
                    for i, v in zip(ax, ridx, strict=True):
                        full[i] = v
                    acc = op(acc, term(xf[tuple(full)]))
                out[o] = finish(acc)
            return out.reshape(oshape).astype(in_dt)
    dims, src = _view5(tuple(shape))
    x5 = xv.reshape(dims)
    red = [src[k] is not None and src[k] in set(rax) and dims[k] != 1 for k in range(5)]
    if red[3] and dims[4] == 1:
        red[4] = True
    if red[1] and red[3] and dims[2] == 1:
        red[2] = True
    keepk = [k for k in range(5) if not red[k]]
    redk = [k for k in range(5) if red[k]]
    cdw = red[1] and red[2] and not red[3] and red[4] and kind != "l2"
    chunk = (dims[3] * dims[4] if red[3] else dims[4]) if red[4] else 0
    ib, ic, i_d, ih, iw = dims
    for o, kidx in enumerate(itertools.product(*[range(dims[k]) for k in keepk])):
        acc = init
        if cdw:
            for b in range(ib) if red[0] else [kidx[0]]:
                row = []
                for w in range(iw):
                    s = init
                    for c in range(ic):
                        for d in range(i_d):
                            s = op(s, term(x5[b, c, d, kidx[-1], w]))
                    row.append(s)
                acc = chunk_fold(acc, row)
        else:
            elems = []
            for r in itertools.product(*[range(dims[k]) for k in redk]):
                full = [0] * 5
                for k, v in zip(keepk, kidx, strict=True):
                    full[k] = v
                for k, v in zip(redk, r, strict=True):
                    full[k] = v
                elems.append(term(x5[tuple(full)]))
            if chunk:
                scalar = red[1] or red[2] or chunk >= lanes
                if not scalar:
                    at = dict(zip(keepk, kidx, strict=True))
                    outer = (at.get(1, 0) * i_d + at.get(2, 0)) * (1 if red[3] else ih) + (
                        0 if red[3] else at.get(3, 0)
                    )
                    scalar = outer >= (ic * i_d * (1 if red[3] else ih)) // lanes * lanes
                for s0 in range(0, len(elems), chunk):
                    part = elems[s0 : s0 + chunk]
                    acc = chunk_fold(acc, part) if scalar else seq(acc, part)
            else:
                acc = seq(acc, elems)
        out[o] = finish(acc)
    return out.reshape(oshape).astype(in_dt)


def ort_global(x: np.ndarray, kind: str) -> np.ndarray:
    """onnxruntime GlobalAveragePool / GlobalMaxPool (MLAS, float32): per plane, lane l folds
    elements 4i + l from 0 (avg, addps) or lowest() (max, maxps(acc, x)); lanes combined
    (l0 op l2) op (l1 op l3); the last size % 4 elements one by one (+, std::max(acc, x));
    avg / size."""
    n, c = x.shape[:2]
    size = int(np.prod(x.shape[2:]))
    out = np.empty((n, c), F32)
    for i in range(n):
        for j in range(c):
            row = [F32(v) for v in x[i, j].reshape(-1)]
            whole = size // 4 * 4
            if kind == "mean":
                lanes = [F32(0)] * 4
                for k in range(whole):
                    lanes[k % 4] = add(lanes[k % 4], row[k])
                acc = add(add(lanes[0], lanes[2]), add(lanes[1], lanes[3]))
                for k in range(whole, size):
                    acc = add(acc, row[k])
                out[i, j] = F32(acc / F32(size))
            else:
                lanes = [LOWEST] * 4
                for k in range(whole):
                    lanes[k % 4] = maxps(lanes[k % 4], row[k])
                acc = maxps(maxps(lanes[0], lanes[2]), maxps(lanes[1], lanes[3]))
                for k in range(whole, size):
                    acc = stdmax(acc, row[k])
                out[i, j] = acc
    return out.reshape((n, c) + (1,) * (x.ndim - 2))


# -- Lp pooling, unpooling, quantised global average -------------------------------------------


def _libm() -> Any:
    import ctypes
    import ctypes.util

    lib = ctypes.CDLL(ctypes.util.find_library("m"))
    lib.powf.restype = ctypes.c_float
    lib.powf.argtypes = [ctypes.c_float, ctypes.c_float]
    lib.pow.restype = ctypes.c_double
    lib.pow.argtypes = [ctypes.c_double, ctypes.c_double]
    return lib


def out_size(n: int, k: int, s: int, d: int, pb: int, pe: int, ceil: bool) -> int:
    """onnxruntime's output size with explicit pads: ceil drops a window starting in the right
    padding."""
    k_eff = (k - 1) * d + 1
    span = n + pb + pe - k_eff
    if not ceil:
        return span // s + 1
    out = -(-span // s) + 1
    return out - 1 if (out - 1) * s >= n + pb else out


def ort_lp_pool(
    x: np.ndarray,
    kernel: list[int],
    p: int,
    strides: list[int],
    pads: list[int],
    dilations: list[int],
    ceil: bool,
) -> np.ndarray:
    """onnxruntime LpPool: per window, float32 sum from 0 in row-major order over the taps
    inside the input of float(pow(double |x|, p)); then powf(sum, 1.0f / p)."""
    lib = _libm()
    nd = x.ndim - 2
    out = [
        out_size(x.shape[2 + a], kernel[a], strides[a], dilations[a], pads[a], pads[nd + a], ceil)
        for a in range(nd)
    ]
    y = np.empty(x.shape[:2] + tuple(out), F32)
    e = F32(F32(1) / F32(p))
    for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        for o in itertools.product(*[range(v) for v in out]):
            s = F32(0)
            for tap in itertools.product(*[range(k) for k in kernel]):
                pos = [o[a] * strides[a] - pads[a] + tap[a] * dilations[a] for a in range(nd)]
                if all(0 <= pos[a] < x.shape[2 + a] for a in range(nd)):
                    s = add(s, F32(lib.pow(abs(float(x[(n, c, *pos)])), float(p))))
            y[(n, c, *o)] = F32(lib.powf(float(s), float(e)))
    return y


def ort_max_unpool(x: np.ndarray, idx: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """onnxruntime MaxUnpool: zeros; Y.flat[I[e]] = X.flat[e] in element order."""
    size = int(np.prod(shape))
    y = [F32(0)] * size
    for v, i in zip(x.reshape(-1), idx.reshape(-1), strict=True):
        if not 0 <= i < size:
            raise ValueError(f"Index value out of bounds. Got: {i}. Valid range is [0, {size}).")
        y[int(i)] = v
    return np.array(y, x.dtype).reshape(shape)


def ort_qlinear_global_average(
    x: np.ndarray, x_scale: float, x_zp: int, y_scale: float, y_zp: int, channels_last: bool
) -> np.ndarray:
    """onnxruntime QLinearGlobalAveragePool: exact int sum, float32 scale, half-even rounding."""
    info = np.iinfo(x.dtype)
    planes = np.moveaxis(x, -1, 1) if channels_last else x
    n_, c_ = planes.shape[:2]
    size = int(np.prod(planes.shape[2:]))
    scale = F32(F32(x_scale) / F32(F32(y_scale) * F32(size)))
    y = np.empty((n_, c_), x.dtype)
    for n, c in itertools.product(range(n_), range(c_)):
        acc = sum(int(v) for v in planes[n, c].reshape(-1)) - int(x_zp) * size
        v = F32(F32(acc) * scale)
        v = min(max(v, F32(info.min - int(y_zp))), F32(info.max - int(y_zp)))
        y[n, c] = int(np.rint(v)) + int(y_zp)
    y = y.reshape((n_, c_) + (1,) * (x.ndim - 2))
    return np.moveaxis(y, 1, -1) if channels_last else y
