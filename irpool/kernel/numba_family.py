"""The numba kernels of family_compiled.py (imported on first use only; each kernel is compiled,
or loaded from numba's disk cache, on its first call).

Every float operation is the IEEE one the numpy core (kernel/reduction.py, kernel/adaptive.py)
does, in the same order: fastmath is off, so nothing is reassociated or contracted.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .numba_kernels import INL, OPTS

# kind: 0 sum (sum, mean, l1, l2 after the transform), 1 max (x86 MAXPS)
# pre: 0 none, 1 |x|, 2 x*x; post: 0 none, 1 divide by `count`, 2 sqrt


@njit(**INL)
def _pre(v, pre):
    if pre == 1:
        return abs(v)
    if pre == 2:
        return v * v
    return v


@njit(**INL)
def _op(a, b, is_max):
    """sum: a + b; max: MAXPS a > b ? a : b."""
    if is_max:
        return a if a > b else b
    return a + b


@njit(**OPTS)
def reduce_chunks(x, obase, cbase, chunk, lanes, is_max, pre, lane_init, dst_init, out):
    """openvino's JIT order where W is reduced and each output's elements come in contiguous
    chunks (kernel/reduction.py _fold, chunk >= lanes): output o, chunk j starts at
    obase[o] + cbase[j]; its first chunk // lanes * lanes elements folded by `lanes` lanes
    (lane l: elements l, l + lanes, ...), the lanes combined by the plugin's tree, the tree
    combined with the running value (tree first for max, running value first for sums),
    then the rest one by one."""
    whole = chunk // lanes * lanes
    lv = np.empty(lanes, np.float32)
    for o in range(obase.shape[0]):
        acc = dst_init
        for j in range(cbase.shape[0]):
            base = obase[o] + cbase[j]
            for k in range(lanes):
                lv[k] = lane_init
            for i in range(0, whole, lanes):
                seg = x[base + i : base + i + lanes]
                for k in range(lanes):
                    lv[k] = _op(lv[k], _pre(seg[k], pre), is_max)
            if lanes == 16:
                t0 = _op(_op(lv[0], lv[4], is_max), _op(lv[8], lv[12], is_max), is_max)
                t1 = _op(_op(lv[1], lv[5], is_max), _op(lv[9], lv[13], is_max), is_max)
                t2 = _op(_op(lv[2], lv[6], is_max), _op(lv[10], lv[14], is_max), is_max)
                t3 = _op(_op(lv[3], lv[7], is_max), _op(lv[11], lv[15], is_max), is_max)
            else:
                t0 = _op(lv[0], lv[4], is_max)
                t1 = _op(lv[1], lv[5], is_max)
                t2 = _op(lv[2], lv[6], is_max)
                t3 = _op(lv[3], lv[7], is_max)
            tree = _op(_op(t0, t1, is_max), _op(t2, t3, is_max), is_max)
            acc = _op(tree, acc, is_max) if is_max else acc + tree
            for i in range(whole, chunk):
                acc = _op(acc, _pre(x[base + i], pre), is_max)
        out[o] = acc


@njit(**OPTS)
def reduce_scalar_chunks(x, obase, cbase, chunk, pre, lane_init, dst_init, smode, out):
    """A max whose W chunks are shorter than the lanes: each chunk folded one by one (MAXPS),
    and before it, for the outputs the plugin writes with its scalar store (`smode`), the
    tree step of its untouched lanes (the running value against lowest())."""
    for o in range(obase.shape[0]):
        acc = dst_init
        for j in range(cbase.shape[0]):
            base = obase[o] + cbase[j]
            if smode[o]:
                acc = lane_init if lane_init > acc else acc
            for i in range(chunk):
                v = _pre(x[base + i], pre)
                acc = acc if acc > v else v
        out[o] = acc


@njit(**OPTS)
def reduce_sequential(x, obase, run, roff, is_max, pre, dst_init, out):
    """One sequential fold per output in the order of `roff` (element e of output o is at
    obase[o // run] + o % run + roff[e]): the outputs of one run of `run` contiguous ones
    advance together, element by element (the same order per output, vectorised across
    outputs)."""
    blocks = obase.shape[0]
    for b in range(blocks):
        acc = out[b * run : (b + 1) * run]
        for k in range(run):
            acc[k] = dst_init
        for e in range(roff.shape[0]):
            base = obase[b] + roff[e]
            seg = x[base : base + run]
            for k in range(run):
                acc[k] = _op(acc[k], _pre(seg[k], pre), is_max)


@njit(**OPTS)
def finish(out, post, count):
    """mean: / count (one float32 division); l2: sqrt."""
    c = np.float32(count)
    if post == 1:
        for i in range(out.shape[0]):
            out[i] = out[i] / c
    elif post == 2:
        for i in range(out.shape[0]):
            out[i] = np.sqrt(out[i])


@njit(**OPTS)
def adaptive(
    x, planes, plane, p0, v0, p1, v1, p2, v2, s0, s1, is_max, strict, zero, out, idx, from_zero
):
    """Adaptive pooling (kernel/adaptive.py), per plane and output, the taps of the longest
    window of each axis in row-major order, positions clamped into the input: a sum starts
    at tap 0 and adds +0.0 for a tap outside the window; a max starts at tap 0 and takes a
    tap inside the window that is strictly larger (`strict`, openvino) or larger or NaN
    (PyTorch); idx is the winning tap's offset in its plane.  `from_zero`: a sum starts at
    +0.0 before tap 0 (kernel/lp.py window_sums)."""
    o0, l0 = p0.shape
    o1, l1 = p1.shape
    o2, l2 = p2.shape
    per = o0 * o1 * o2
    for p in range(planes):
        base = p * plane
        for a in range(o0):
            for b in range(o1):
                for c in range(o2):
                    o = p * per + (a * o1 + b) * o2 + c
                    f = p0[a, 0] * s0 + p1[b, 0] * s1 + p2[c, 0]
                    acc = x[base + f]
                    best = f
                    if not is_max and not (v0[a, 0] and v1[b, 0] and v2[c, 0]):
                        acc = zero
                    if from_zero and not is_max:
                        acc = zero + acc
                    for t0 in range(l0):
                        for t1 in range(l1):
                            for t2 in range(l2):
                                if t0 == 0 and t1 == 0 and t2 == 0:
                                    continue
                                ok = v0[a, t0] and v1[b, t1] and v2[c, t2]
                                f = p0[a, t0] * s0 + p1[b, t1] * s1 + p2[c, t2]
                                v = x[base + f]
                                if not is_max:
                                    acc = acc + (v if ok else zero)
                                elif strict:
                                    if ok and acc < v:
                                        acc = v
                                        best = f
                                elif ok and (v > acc or v != v):
                                    acc = v
                                    best = f
                    out[o] = acc
                    idx[o] = best


@njit(**OPTS)
def unpool_tensor(x, idx, size, y):
    """y[idx[i]] = x[i] in order (a repeated index: the later wins); -1 when every index is
    in [0, size), else the position of the first that is not (nothing written after it)."""
    for i in range(x.shape[0]):
        k = idx[i]
        if k < 0 or k >= size:
            return i
        y[k] = x[i]
    return -1


@njit(**OPTS)
def unpool_planes(x, idx, planes, per, plane, y):
    """Per plane: y[p * plane + idx] = x, in order; -1, or the position of a bad index."""
    for p in range(planes):
        for i in range(per):
            k = idx[p * per + i]
            if k < 0 or k >= plane:
                return p * per + i
            y[p * plane + k] = x[p * per + i]
    return -1
