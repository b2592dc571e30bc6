"""The numba kernels of compiled.py (imported on first use only; each kernel is compiled, or
loaded from the disk cache, on its first call).

Conventions: `kind` 0 = float32 data, 1 = float16 bits (uint16), 2 = bfloat16 bits (uint16).
Every array is 1-D or 4-D C-contiguous; inner loops run from 0 over slices, so that numba
knows the indices are not negative and LLVM vectorises them.  fastmath is off.

The kernels here are long on purpose: their loops are unrolled by hand (one branch per element
type and accumulator count) so that numba compiles each into straight-line vector code, and
splitting them into smaller functions would put calls back into the inner loops.  They are the
one exception to irpool's limit of 80 lines per function and 800 per module.
"""

from __future__ import annotations

import os

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

CACHE = os.environ.get("IRPOOL_NUMBA_CACHE", "1") != "0"
"""numba's disk cache: beside this file, else in the user's cache directory (numba's rule),
or NUMBA_CACHE_DIR; compiled.py turns it off when no location is writable."""

OPTS = {
    "cache": CACHE,
    "nogil": True,
    "fastmath": False,
    "boundscheck": False,
    "error_model": "numpy",
}
INL = {"inline": "always", **OPTS}

LANES = 16


@intrinsic
def u2f(typingctx, u):
    """The float32 with these bits."""
    sig = types.float32(types.uint32)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())

    return sig, codegen


@intrinsic
def f2u(typingctx, f):
    """The bits of a float32."""
    sig = types.uint32(types.float32)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(32))

    return sig, codegen


@njit(**INL)
def h2f(h):
    """float16 bits to float32, exact (the bits of numpy's astype, NaN payloads included)."""
    u = np.uint32(h)
    o = (u & np.uint32(0x7FFF)) << np.uint32(13)
    f = u2f(o) * np.float32(5.192296858534828e33)  # 2**112: rebias, subnormals exact
    b = f2u(f)
    b = b | np.uint32(0x7F800000) if f >= np.float32(65536.0) else b
    return u2f(b | ((u & np.uint32(0x8000)) << np.uint32(16)))


@njit(**INL)
def b2f(h):
    """bfloat16 bits to float32 (exact)."""
    return u2f(np.uint32(h) << np.uint32(16))


@njit(**INL)
def f2h(f):
    """float32 to float16 bits, round to nearest even, as numpy's astype (a NaN keeps the top
    ten bits of its payload, at least 1)."""
    u = f2u(f)
    sign = u & np.uint32(0x80000000)
    u = u ^ sign
    payload = max((u & np.uint32(0x7FFFFF)) >> np.uint32(13), np.uint32(1))
    nan_or_inf = np.uint32(0x7C00) + payload if u > np.uint32(0x7F800000) else np.uint32(0x7C00)
    sub = f2u(u2f(u) + u2f(np.uint32(0x3F000000))) - np.uint32(0x3F000000)
    odd = (u >> np.uint32(13)) & np.uint32(1)
    norm = (u + np.uint32(0xC8000FFF) + odd) >> np.uint32(13)
    o = nan_or_inf if u >= np.uint32(0x47800000) else (sub if u < np.uint32(0x38800000) else norm)
    return np.uint16(o | (sign >> np.uint32(16)))


@njit(**INL)
def f2b(f):
    """float32 to bfloat16 bits, round to nearest even (a NaN becomes 0x7FC0 with its sign, as
    ml_dtypes converts)."""
    u = f2u(f)
    r = (u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    q = ((u >> np.uint32(16)) & np.uint32(0x8000)) | np.uint32(0x7FC0)
    return np.uint16(q if (u & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000) else r)


@njit(**INL)
def f2bk(f, kind):
    """f2b; for kind 3 (bfloat16 as openvino's CPU plugin rounds it) a float32 subnormal is
    first a zero of its sign."""
    if kind == 3 and (f2u(f) & np.uint32(0x7F800000)) == np.uint32(0):
        return np.uint16((f2u(f) >> np.uint32(16)) & np.uint32(0x8000))
    return f2b(f)


@njit(**INL)
def hkey(h):
    """float16 bits to an int16 key ordered like the numbers: +m, -m for negatives (both
    zeros 0), NaN (either sign) -0x7FFF, below -inf."""
    s = np.int32(np.int16(h))
    m = s & np.int32(0x7FFF)
    k = m if s >= 0 else -m
    return np.int16(-0x7FFF if m > np.int32(0x7C00) else k)


@njit(**INL)
def bkey(h):
    """bfloat16 bits to an int16 key (see hkey)."""
    s = np.int32(np.int16(h))
    m = s & np.int32(0x7FFF)
    k = m if s >= 0 else -m
    return np.int16(-0x7FFF if m > np.int32(0x7F80) else k)


@njit(**INL)
def unkey(k):
    """An int16 key of a number back to its bits (key 0 gives +0, as irpool's numpy core)."""
    s = np.int32(k)
    return np.uint16(s if s >= 0 else (np.int32(0x8000) | -s))


U = np.uint64

GAP = 32
"""Items of slack after each phase buffer (see _fill_pairs)."""


@intrinsic
def ldp(typingctx, arr, idx):
    """The two items arr[idx], arr[idx + 1] of a 1-D array of 4- or 2-byte items, loaded as
    one unsigned integer of twice the width (arr[idx] in the low half).  Strided pairs read
    this way are contiguous loads, which LLVM vectorises (a stride-2 subscript is a gather)."""
    width = arr.dtype.bitwidth * 2
    sig = (types.uint64 if width == 64 else types.uint32)(arr, idx)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        ptr = builder.gep(ary.data, [args[1]])
        wide = builder.bitcast(ptr, ir.IntType(width).as_pointer())
        return builder.load(wide, align=signature.args[0].dtype.bitwidth // 8)

    return sig, codegen


@njit(**INL)
def lo_f32(v):
    return u2f(np.uint32(v & np.uint64(0xFFFFFFFF)))


@njit(**INL)
def hi_f32(v):
    return u2f(np.uint32(v >> np.uint64(32)))


@njit(**INL)
def lo_u16(v):
    return np.uint16(v & np.uint32(0xFFFF))


@njit(**INL)
def hi_u16(v):
    return np.uint16(v >> np.uint32(16))


@njit(**INL)
def lo_i16(v):
    return np.int16(np.uint16(v & np.uint32(0xFFFF)))


@njit(**INL)
def hi_i16(v):
    return np.int16(np.uint16(v >> np.uint32(16)))


@njit(**INL)
def to_f32(v, kind):
    if kind == 0:
        return np.float32(v)
    if kind == 1:
        return h2f(v)
    return b2f(v)


@njit(**INL)
def from_f32(q, kind):
    if kind == 0:
        return q
    if kind == 1:
        return f2h(q)
    return f2bk(q, kind)


# -- averages: polyphase, blocked -----------------------------------------------------------------


@njit(**INL)
def _zero(buf, start, n, zero):
    """buf[start:start + n] = zero.  `zero` is a run-time argument (+0.0 from the caller): with
    a constant, LLVM turns these short loops into calls of memset, which cost more than the
    few stores they replace (four per phase row)."""
    b = U(start)
    for k in range(n):
        buf[b + U(k)] = zero


@njit(**INL)
def _fill_row(dst, r0, x, xb, kind, n, stride):
    """dst[r0 + k] = x[xb + k * stride] as float32, k < n (1-D arrays, xb >= 0)."""
    d0 = U(r0)
    if stride == 1:
        b = U(xb)
        if kind == 0:
            for k in range(n):
                dst[d0 + U(k)] = x[b + U(k)]
        elif kind == 1:
            for k in range(n):
                dst[d0 + U(k)] = h2f(x[b + U(k)])
        else:
            for k in range(n):
                dst[d0 + U(k)] = b2f(x[b + U(k)])
    elif stride == 2:
        # pairs: the last element alone (its pair could end past the array)
        m = n - 1
        if kind == 0:
            for k in range(m):
                dst[d0 + U(k)] = lo_f32(ldp(x, xb + 2 * k))
        elif kind == 1:
            for k in range(m):
                dst[d0 + U(k)] = h2f(lo_u16(ldp(x, xb + 2 * k)))
        else:
            for k in range(m):
                dst[d0 + U(k)] = b2f(lo_u16(ldp(x, xb + 2 * k)))
        dst[d0 + U(m)] = to_f32(x[U(xb + 2 * m)], kind)
    else:
        for k in range(n):
            dst[d0 + U(k)] = to_f32(x[U(xb + k * stride)], kind)


STRIPS = 8
BLOCK = STRIPS * LANES
"""Positions _vsum_taps sums at once: eight vectors of sixteen float32 accumulators, enough
independent chains to hide the latency of an addition (one chain per vector was
latency-bound: 49 dependent additions per output for a 7x7 window)."""


@intrinsic
def _vsum_taps(typingctx, ph, toff, f0, n, acc):
    """acc[k] = (((0 + ph[f0 + toff[0] + k]) + ph[f0 + toff[1] + k]) + ...) for k < n (n a
    multiple of BLOCK): the order of _sum_taps, with each block's accumulators held in
    registers across all its taps instead of in memory (avg7_s1: the sums 2.5x faster)."""
    sig = types.void(ph, toff, types.int64, types.int64, acc)

    def codegen(context, builder, signature, args):
        pa = context.make_array(signature.args[0])(context, builder, args[0])
        ta = context.make_array(signature.args[1])(context, builder, args[1])
        aa = context.make_array(signature.args[4])(context, builder, args[4])
        f0v, nv = args[2], args[3]
        i64 = ir.IntType(64)
        vec = ir.VectorType(ir.FloatType(), LANES)
        vptr = vec.as_pointer()
        ntaps = builder.extract_value(ta.shape, 0)
        slots = [cgutils.alloca_once(builder, vec) for _ in range(STRIPS)]
        zero = ir.Constant(vec, [0.0] * LANES)
        blocks = builder.udiv(nv, ir.Constant(i64, BLOCK))
        with cgutils.for_range(builder, blocks) as outer:
            s = builder.mul(outer.index, ir.Constant(i64, BLOCK))
            for slot in slots:
                builder.store(zero, slot)
            with cgutils.for_range(builder, ntaps) as inner:
                off = builder.load(builder.gep(ta.data, [inner.index]))
                base = builder.add(builder.add(f0v, s), off)
                for j, slot in enumerate(slots):
                    p = builder.gep(pa.data, [builder.add(base, ir.Constant(i64, j * LANES))])
                    v = builder.load(builder.bitcast(p, vptr), align=4)
                    builder.store(builder.fadd(builder.load(slot), v), slot)
            for j, slot in enumerate(slots):
                p = builder.gep(aa.data, [builder.add(s, ir.Constant(i64, j * LANES))])
                builder.store(builder.load(slot), builder.bitcast(p, vptr), align=4)
        return context.get_dummy_value()

    return sig, codegen


@njit(**OPTS)
def _sum_taps(a, phases, toff, f0, n):
    """a[:n] = (((0 + s_0) + s_1) + ...) + s_last, s_t = phases[toff[t] + f0:][:n]: the taps
    in their order, up to nine per pass over `a` (generated code: one loop per group size)."""
    ntaps = toff.size
    passes = (ntaps + 8) // 9
    t = 0
    for q in range(passes):
        g = (ntaps - t + (passes - q) - 1) // (passes - q)
        first = q == 0
        if g == 1:
            o0 = toff[t + 0] + f0
            s0 = phases[o0 : o0 + n]
            if first:
                for k in range(n):
                    a[k] = np.float32(0) + s0[k]
            else:
                for k in range(n):
                    a[k] = a[k] + s0[k]
        elif g == 2:
            o0 = toff[t + 0] + f0
            s0 = phases[o0 : o0 + n]
            o1 = toff[t + 1] + f0
            s1 = phases[o1 : o1 + n]
            if first:
                for k in range(n):
                    a[k] = (np.float32(0) + s0[k]) + s1[k]
            else:
                for k in range(n):
                    a[k] = (a[k] + s0[k]) + s1[k]
        elif g == 3:
            o0 = toff[t + 0] + f0
            s0 = phases[o0 : o0 + n]
            o1 = toff[t + 1] + f0
            s1 = phases[o1 : o1 + n]
            o2 = toff[t + 2] + f0
            s2 = phases[o2 : o2 + n]
            if first:
                for k in range(n):
                    a[k] = ((np.float32(0) + s0[k]) + s1[k]) + s2[k]
            else:
                for k in range(n):
                    a[k] = ((a[k] + s0[k]) + s1[k]) + s2[k]
        elif g == 4:
            o0 = toff[t + 0] + f0
            s0 = phases[o0 : o0 + n]
            o1 = toff[t + 1] + f0
            s1 = phases[o1 : o1 + n]
            o2 = toff[t + 2] + f0
            s2 = phases[o2 : o2 + n]
            o3 = toff[t + 3] + f0
            s3 = phases[o3 : o3 + n]
            if first:
                for k in range(n):
                    a[k] = (((np.float32(0) + s0[k]) + s1[k]) + s2[k]) + s3[k]
            else:
                for k in range(n):
                    a[k] = (((a[k] + s0[k]) + s1[k]) + s2[k]) + s3[k]
        elif g == 5:
            o0 = toff[t + 0] + f0
            s0 = phases[o0 : o0 + n]
            o1 = toff[t + 1] + f0
            s1 = phases[o1 : o1 + n]
            o2 = toff[t + 2] + f0
            s2 = phases[o2 : o2 + n]
            o3 = toff[t + 3] + f0
            s3 = phases[o3 : o3 + n]
            o4 = toff[t + 4] + f0
            s4 = phases[o4 : o4 + n]
            if first:
                for k in range(n):
                    a[k] = ((((np.float32(0) + s0[k]) + s1[k]) + s2[k]) + s3[k]) + s4[k]
            else:
                for k in range(n):
                    a[k] = ((((a[k] + s0[k]) + s1[k]) + s2[k]) + s3[k]) + s4[k]
        elif g == 6:
            o0 = toff[t + 0] + f0
            s0 = phases[o0 : o0 + n]
            o1 = toff[t + 1] + f0
            s1 = phases[o1 : o1 + n]
            o2 = toff[t + 2] + f0
            s2 = phases[o2 : o2 + n]
            o3 = toff[t + 3] + f0
            s3 = phases[o3 : o3 + n]
            o4 = toff[t + 4] + f0
            s4 = phases[o4 : o4 + n]
            o5 = toff[t + 5] + f0
            s5 = phases[o5 : o5 + n]
            if first:
                for k in range(n):
                    a[k] = (((((np.float32(0) + s0[k]) + s1[k]) + s2[k]) + s3[k]) + s4[k]) + s5[k]
            else:
                for k in range(n):
                    a[k] = (((((a[k] + s0[k]) + s1[k]) + s2[k]) + s3[k]) + s4[k]) + s5[k]
        elif g == 7:
            o0 = toff[t + 0] + f0
            s0 = phases[o0 : o0 + n]
            o1 = toff[t + 1] + f0
            s1 = phases[o1 : o1 + n]
            o2 = toff[t + 2] + f0
            s2 = phases[o2 : o2 + n]
            o3 = toff[t + 3] + f0
            s3 = phases[o3 : o3 + n]
            o4 = toff[t + 4] + f0
            s4 = phases[o4 : o4 + n]
            o5 = toff[t + 5] + f0
            s5 = phases[o5 : o5 + n]
            o6 = toff[t + 6] + f0
            s6 = phases[o6 : o6 + n]
            if first:
                for k in range(n):
                    a[k] = (
                        (((((np.float32(0) + s0[k]) + s1[k]) + s2[k]) + s3[k]) + s4[k]) + s5[k]
                    ) + s6[k]
            else:
                for k in range(n):
                    a[k] = ((((((a[k] + s0[k]) + s1[k]) + s2[k]) + s3[k]) + s4[k]) + s5[k]) + s6[k]
        elif g == 8:
            o0 = toff[t + 0] + f0
            s0 = phases[o0 : o0 + n]
            o1 = toff[t + 1] + f0
            s1 = phases[o1 : o1 + n]
            o2 = toff[t + 2] + f0
            s2 = phases[o2 : o2 + n]
            o3 = toff[t + 3] + f0
            s3 = phases[o3 : o3 + n]
            o4 = toff[t + 4] + f0
            s4 = phases[o4 : o4 + n]
            o5 = toff[t + 5] + f0
            s5 = phases[o5 : o5 + n]
            o6 = toff[t + 6] + f0
            s6 = phases[o6 : o6 + n]
            o7 = toff[t + 7] + f0
            s7 = phases[o7 : o7 + n]
            if first:
                for k in range(n):
                    a[k] = (
                        ((((((np.float32(0) + s0[k]) + s1[k]) + s2[k]) + s3[k]) + s4[k]) + s5[k])
                        + s6[k]
                    ) + s7[k]
            else:
                for k in range(n):
                    a[k] = (
                        ((((((a[k] + s0[k]) + s1[k]) + s2[k]) + s3[k]) + s4[k]) + s5[k]) + s6[k]
                    ) + s7[k]
        elif g == 9:
            o0 = toff[t + 0] + f0
            s0 = phases[o0 : o0 + n]
            o1 = toff[t + 1] + f0
            s1 = phases[o1 : o1 + n]
            o2 = toff[t + 2] + f0
            s2 = phases[o2 : o2 + n]
            o3 = toff[t + 3] + f0
            s3 = phases[o3 : o3 + n]
            o4 = toff[t + 4] + f0
            s4 = phases[o4 : o4 + n]
            o5 = toff[t + 5] + f0
            s5 = phases[o5 : o5 + n]
            o6 = toff[t + 6] + f0
            s6 = phases[o6 : o6 + n]
            o7 = toff[t + 7] + f0
            s7 = phases[o7 : o7 + n]
            o8 = toff[t + 8] + f0
            s8 = phases[o8 : o8 + n]
            if first:
                for k in range(n):
                    a[k] = (
                        (
                            (
                                (((((np.float32(0) + s0[k]) + s1[k]) + s2[k]) + s3[k]) + s4[k])
                                + s5[k]
                            )
                            + s6[k]
                        )
                        + s7[k]
                    ) + s8[k]
            else:
                for k in range(n):
                    a[k] = (
                        (((((((a[k] + s0[k]) + s1[k]) + s2[k]) + s3[k]) + s4[k]) + s5[k]) + s6[k])
                        + s7[k]
                    ) + s8[k]
        t += g


@njit(**OPTS)
def _fill_pairs(phases, x, kind, geo, res, p0, planes, od0, oh0, dpb, hpb, wp, plen, zero):
    """The phase fill when the last axis has stride 2 and both residues are phases: each input
    row is read once as pairs of items, the first of a pair going to one column phase and the
    second to the other (two contiguous stores per pair: no gathers)."""
    sd, sh = geo[0, 1], geo[1, 1]
    nd, nh, nw = geo[0, 0], geo[1, 0], geo[2, 0]
    pbd, pbh, pbw = geo[0, 3], geo[1, 3], geo[2, 3]
    nrd, nrh = res[0, 0], res[1, 0]
    slab = hpb * wp
    ps = dpb * slab
    r_e = pbw % 2  # the residue of even input columns, and their first phase column
    k_e0 = pbw // 2
    k_o0 = (pbw + 1) // 2
    # phase columns inside the input, per residue (the rest is zero padding)
    lo0 = (pbw + 1) // 2
    hi0 = max(lo0, min(wp, (nw + pbw + 1) // 2))
    lo1 = pbw // 2
    hi1 = max(lo1, min(wp, (nw + pbw) // 2))
    m_hi = max(0, min(nw // 2, wp - k_o0, wp - k_e0))
    for ird in range(nrd):
        rd = res[0, 1 + ird]
        for irh in range(nrh):
            rh = res[1, 1 + irh]
            b0 = ((ird * nrh + irh) * 2) * plen
            b1 = b0 + plen
            be = b0 if r_e == 0 else b1
            bo = b1 if r_e == 0 else b0
            for p in range(planes):
                for i in range(dpb):
                    d = (od0 + i) * sd + rd - pbd
                    for j in range(hpb):
                        h = (oh0 + j) * sh + rh - pbh
                        rel = p * ps + i * slab + j * wp
                        if 0 <= d < nd and 0 <= h < nh:
                            xb = (((p0 + p) * nd + d) * nh + h) * nw
                            de = U(be + rel + k_e0)
                            do = U(bo + rel + k_o0)
                            # whole vectors of pairs: up to 15 more than the row needs, written
                            # past its end into the next row (rewritten later) or the gap after
                            # the phase; not when the loads would pass the end of x
                            m_run = (m_hi + 15) // 16 * 16
                            if xb + 2 * m_run > x.size:
                                m_run = m_hi
                            if kind == 0:
                                for m in range(m_run):
                                    v = ldp(x, xb + 2 * m)
                                    phases[de + U(m)] = lo_f32(v)
                                    phases[do + U(m)] = hi_f32(v)
                            elif kind == 1:
                                for m in range(m_run):
                                    v = ldp(x, xb + 2 * m)
                                    phases[de + U(m)] = h2f(lo_u16(v))
                                    phases[do + U(m)] = h2f(hi_u16(v))
                            else:
                                for m in range(m_run):
                                    v = ldp(x, xb + 2 * m)
                                    phases[de + U(m)] = b2f(lo_u16(v))
                                    phases[do + U(m)] = b2f(hi_u16(v))
                            for c in range(2 * m_hi, nw):
                                k = (c + pbw) // 2
                                if k < wp:
                                    dst = b0 if (c + pbw) % 2 == 0 else b1
                                    phases[U(dst + rel + k)] = to_f32(x[U(xb + c)], kind)
                            _zero(phases, b0 + rel, lo0, zero)
                            _zero(phases, b0 + rel + hi0, wp - hi0, zero)
                            _zero(phases, b1 + rel, lo1, zero)
                            _zero(phases, b1 + rel + hi1, wp - hi1, zero)
                        else:
                            _zero(phases, b0 + rel, wp, zero)
                            _zero(phases, b1 + rel, wp, zero)
            _zero(phases, b0 + planes * ps, plen - planes * ps, zero)
            _zero(phases, b1 + planes * ps, plen - planes * ps, zero)


@njit(**OPTS)
def avg_run(
    x,
    out,
    kind,
    geo,
    res,
    taps,
    chunks,
    c_lo,
    c_hi,
    phases,
    acc,
    div,
    rows_per_block,
    toff,
    zero,
    wp,
):
    """Average pooling of chunks [c_lo, c_hi) (rows of `chunks`: p0, p1, od0, od1, oh0, oh1).

    x: the input, flat (planes * D * H * W); out: the output, flat (planes * OD * OH * OW);
    geo (3, 6): per axis size, stride, dilation, pad_begin, out, qmax; res (3, R): the
    residues of the phases per axis (res[a, 0] is their count); taps (T, 4): phase, qd, qh,
    qw in row-major window order; div: flat (OD * OH * OW) float32.  phases, acc, toff:
    scratch (float32, float32, int64) large enough for the biggest chunk.  wp: the length of
    a phase row, OW + qw less the trailing padding that the next row's leading padding stands
    for (a read past the end of a row lands in the next row's leading zeros).
    """
    sd, sh, sw = geo[0, 1], geo[1, 1], geo[2, 1]
    nd, nh, nw = geo[0, 0], geo[1, 0], geo[2, 0]
    pbd, pbh, pbw = geo[0, 3], geo[1, 3], geo[2, 3]
    odn, ohn, own = geo[0, 4], geo[1, 4], geo[2, 4]
    qd, qh, qw = geo[0, 5], geo[1, 5], geo[2, 5]
    nrd, nrh, nrw = res[0, 0], res[1, 0], res[2, 0]
    ntaps = taps.shape[0]
    for c in range(c_lo, c_hi):
        p0, p1, od0, od1, oh0, oh1 = (
            chunks[c, 0],
            chunks[c, 1],
            chunks[c, 2],
            chunks[c, 3],
            chunks[c, 4],
            chunks[c, 5],
        )
        planes = p1 - p0
        dpb = od1 - od0 + qd
        hpb = oh1 - oh0 + qh
        slab = hpb * wp
        ps = dpb * slab
        length = planes * ps
        extra = qd * slab + qh * wp + qw
        plen = length + extra + GAP  # GAP: room for the whole-vector overreach of _fill_pairs
        # fill the phases: one zero-padded copy of the chunk per residue combination
        if sw == 2 and nrw == 2:
            _fill_pairs(phases, x, kind, geo, res, p0, planes, od0, oh0, dpb, hpb, wp, plen, zero)
        for ird in range(nrd if not (sw == 2 and nrw == 2) else 0):
            rd = res[0, 1 + ird]
            for irh in range(nrh):
                rh = res[1, 1 + irh]
                for irw in range(nrw):
                    rw = res[2, 1 + irw]
                    base = ((ird * nrh + irh) * nrw + irw) * plen
                    # phase columns inside the input: [n_lo, n_hi), from input column c0
                    n_lo = max(0, (pbw - rw + sw - 1) // sw)
                    n_hi = max(n_lo, min(wp, (nw + pbw - rw + sw - 1) // sw))
                    c0 = n_lo * sw + rw - pbw
                    for p in range(planes):
                        for i in range(dpb):
                            d = (od0 + i) * sd + rd - pbd
                            for j in range(hpb):
                                h = (oh0 + j) * sh + rh - pbh
                                r0 = base + p * ps + i * slab + j * wp
                                if 0 <= d < nd and 0 <= h < nh and n_hi > n_lo:
                                    _zero(phases, r0, n_lo, zero)
                                    xb = (((p0 + p) * nd + d) * nh + h) * nw + c0
                                    _fill_row(phases, r0 + n_lo, x, xb, kind, n_hi - n_lo, sw)
                                    _zero(phases, r0 + n_hi, wp - n_hi, zero)
                                else:
                                    _zero(phases, r0, wp, zero)
                    _zero(phases, base + length, extra, zero)
        # the sums, one block of rows at a time (each block stays in L1 for all its taps)
        for t in range(ntaps):
            toff[t] = taps[t, 0] * plen + taps[t, 1] * slab + taps[t, 2] * wp + taps[t, 3]
        odb = od1 - od0
        ohb = oh1 - oh0
        for p in range(planes):
            for i in range(odb):
                for j0 in range(0, ohb, rows_per_block):
                    j1 = min(ohb, j0 + rows_per_block)
                    f0 = p * ps + i * slab + j0 * wp
                    n = (j1 - j0 - 1) * wp + own
                    # whole blocks, the last one past n into the buffers' slack (compiled.py
                    # VECTOR_SLACK): what it computes there is never read
                    _vsum_taps(phases, toff, f0, (n + BLOCK - 1) // BLOCK * BLOCK, acc)
                    for j in range(j0, j1):
                        ob = U((((p0 + p) * odn + od0 + i) * ohn + oh0 + j) * own)
                        db = U(((od0 + i) * ohn + oh0 + j) * own)
                        ab = U((j - j0) * wp)
                        if kind == 0:
                            for k in range(own):
                                out[ob + U(k)] = acc[ab + U(k)] / div[db + U(k)]
                        elif kind == 1:
                            for k in range(own):
                                out[ob + U(k)] = f2h(acc[ab + U(k)] / div[db + U(k)])
                        else:
                            for k in range(own):
                                out[ob + U(k)] = f2bk(acc[ab + U(k)] / div[db + U(k)], kind)


@njit(**OPTS)
def avg_direct_run(x, out, kind, geo, p_lo, p_hi, acc, div, zero):
    """Averages of windows that share no input element (kernel <= stride on every axis), per
    output row, each tap read straight from its input row in row-major window order (a tap
    in the padding adds +0 to a sum that started at +0 and is skipped).  x, out, div flat;
    geo (3, 6): size, stride, dilation, pad_begin, out, window per axis."""
    sd, sh, sw = geo[0, 1], geo[1, 1], geo[2, 1]
    nd, nh, nw = geo[0, 0], geo[1, 0], geo[2, 0]
    dd, dh, dw = geo[0, 2], geo[1, 2], geo[2, 2]
    pbd, pbh, pbw = geo[0, 3], geo[1, 3], geo[2, 3]
    odn, ohn, own = geo[0, 4], geo[1, 4], geo[2, 4]
    kd, kh, kw = geo[0, 5], geo[1, 5], geo[2, 5]
    # outputs whose two taps (kw = 2, stride 2) both lie inside the row: one pair load each
    pair = kw == 2 and sw == 2 and dw == 1
    k_lo = max(0, (pbw + 1) // 2)
    k_hi = min(own, (nw - 2 + pbw) // 2 + 1)
    fused = pair and kd == 1 and kh == 2 and k_lo == 0 and k_hi == own
    for p in range(p_lo, p_hi):
        for od in range(odn):
            for oh in range(ohn):
                d = od * sd - pbd
                h = oh * sh - pbh
                if fused and 0 <= d < nd and h >= 0 and h + dh < nh:
                    # 2x2 windows inside the input: the four taps and the division in one loop
                    r0 = ((p * nd + d) * nh + h) * nw - pbw
                    r1 = r0 + dh * nw
                    ob = U(((p * odn + od) * ohn + oh) * own)
                    db = U((od * ohn + oh) * own)
                    if kind == 0:
                        for k in range(own):
                            u = ldp(x, r0 + 2 * k)
                            v = ldp(x, r1 + 2 * k)
                            s = (((np.float32(0) + lo_f32(u)) + hi_f32(u)) + lo_f32(v)) + hi_f32(v)
                            out[ob + U(k)] = s / div[db + U(k)]
                    elif kind == 1:
                        for k in range(own):
                            u = ldp(x, r0 + 2 * k)
                            v = ldp(x, r1 + 2 * k)
                            s = (
                                ((np.float32(0) + h2f(lo_u16(u))) + h2f(hi_u16(u))) + h2f(lo_u16(v))
                            ) + h2f(hi_u16(v))
                            out[ob + U(k)] = f2h(s / div[db + U(k)])
                    else:
                        for k in range(own):
                            u = ldp(x, r0 + 2 * k)
                            v = ldp(x, r1 + 2 * k)
                            s = (
                                ((np.float32(0) + b2f(lo_u16(u))) + b2f(hi_u16(u))) + b2f(lo_u16(v))
                            ) + b2f(hi_u16(v))
                            out[ob + U(k)] = f2bk(s / div[db + U(k)], kind)
                    continue
                for k in range(own):
                    acc[U(k)] = zero
                for td in range(kd):
                    d = od * sd + td * dd - pbd
                    if d < 0 or d >= nd:
                        continue
                    for th in range(kh):
                        h = oh * sh + th * dh - pbh
                        if h < 0 or h >= nh:
                            continue
                        rb = ((p * nd + d) * nh + h) * nw
                        if pair and k_hi > k_lo:
                            for k in range(k_lo):
                                _direct_taps(acc, x, rb, k, sw, dw, pbw, nw, kw, kind)
                            b0 = rb + 2 * k_lo - pbw
                            a0 = U(k_lo)
                            if kind == 0:
                                for k in range(k_hi - k_lo):
                                    v = ldp(x, b0 + 2 * k)
                                    acc[a0 + U(k)] = (acc[a0 + U(k)] + lo_f32(v)) + hi_f32(v)
                            elif kind == 1:
                                for k in range(k_hi - k_lo):
                                    v = ldp(x, b0 + 2 * k)
                                    acc[a0 + U(k)] = (acc[a0 + U(k)] + h2f(lo_u16(v))) + h2f(
                                        hi_u16(v)
                                    )
                            else:
                                for k in range(k_hi - k_lo):
                                    v = ldp(x, b0 + 2 * k)
                                    acc[a0 + U(k)] = (acc[a0 + U(k)] + b2f(lo_u16(v))) + b2f(
                                        hi_u16(v)
                                    )
                            for k in range(k_hi, own):
                                _direct_taps(acc, x, rb, k, sw, dw, pbw, nw, kw, kind)
                        else:
                            for k in range(own):
                                _direct_taps(acc, x, rb, k, sw, dw, pbw, nw, kw, kind)
                ob = U(((p * odn + od) * ohn + oh) * own)
                db = U((od * ohn + oh) * own)
                if kind == 0:
                    for k in range(own):
                        out[ob + U(k)] = acc[U(k)] / div[db + U(k)]
                elif kind == 1:
                    for k in range(own):
                        out[ob + U(k)] = f2h(acc[U(k)] / div[db + U(k)])
                else:
                    for k in range(own):
                        out[ob + U(k)] = f2bk(acc[U(k)] / div[db + U(k)], kind)


@njit(**INL)
def _direct_taps(acc, x, rb, k, sw, dw, pbw, nw, kw, kind):
    """acc[k] += the taps of output k along the last axis inside the row (in order)."""
    s = acc[U(k)]
    for tw in range(kw):
        w = k * sw + tw * dw - pbw
        if 0 <= w < nw:
            s += to_f32(x[U(rb + w)], kind)
    acc[U(k)] = s


@njit(**OPTS)
def global_avg_run(x, out, kind, p_lo, p_hi, div):
    """One window per plane: x (planes, size), out (planes,); sums in order, 8 planes at a
    time in independent chains."""
    size = x.shape[1]
    p = p_lo
    while p + 8 <= p_hi:
        s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = np.float32(0)
        r0, r1, r2, r3 = x[p], x[p + 1], x[p + 2], x[p + 3]
        r4, r5, r6, r7 = x[p + 4], x[p + 5], x[p + 6], x[p + 7]
        for k in range(size):
            s0 += to_f32(r0[k], kind)
            s1 += to_f32(r1[k], kind)
            s2 += to_f32(r2[k], kind)
            s3 += to_f32(r3[k], kind)
            s4 += to_f32(r4[k], kind)
            s5 += to_f32(r5[k], kind)
            s6 += to_f32(r6[k], kind)
            s7 += to_f32(r7[k], kind)
        out[p] = from_f32(s0 / div, kind)
        out[p + 1] = from_f32(s1 / div, kind)
        out[p + 2] = from_f32(s2 / div, kind)
        out[p + 3] = from_f32(s3 / div, kind)
        out[p + 4] = from_f32(s4 / div, kind)
        out[p + 5] = from_f32(s5 / div, kind)
        out[p + 6] = from_f32(s6 / div, kind)
        out[p + 7] = from_f32(s7 / div, kind)
        p += 8
    while p < p_hi:
        s = np.float32(0)
        r = x[p]
        for k in range(size):
            s += to_f32(r[k], kind)
        out[p] = from_f32(s / div, kind)
        p += 1


# -- maxima: separable, per output row --------------------------------------------------------


@njit(**INL)
def _key(v, kind):
    if kind == 0:
        return v
    if kind == 1:
        return hkey(v)
    return bkey(v)


@njit(**INL)
def _is_zero(v, kind):
    """Whether a value (float32, or float16/bfloat16 bits) is +0.0 or -0.0."""
    if kind == 0:
        return v == np.float32(0)
    return (np.uint32(v) & np.uint32(0x7FFF)) == np.uint32(0)


@njit(**OPTS)
def _zero_signs(x, out, kind, geo, p, od, oh, ob):
    """The outputs of one output row whose maximum is zero get the bits of their first zero
    tap in row-major window order: openvino's scan keeps the first maximal tap (strictly
    greater from lowest), so a window of +0.0 and -0.0 ties keeps the sign of the first one,
    while the folds above keep whichever they met first in their own order."""
    sd, sh, sw = geo[0, 1], geo[1, 1], geo[2, 1]
    nd, nh, nw = geo[0, 0], geo[1, 0], geo[2, 0]
    dd, dh, dw = geo[0, 2], geo[1, 2], geo[2, 2]
    pbd, pbh, pbw = geo[0, 3], geo[1, 3], geo[2, 3]
    own = geo[2, 4]
    kd, kh, kw = geo[0, 5], geo[1, 5], geo[2, 5]
    for ow in range(own):
        o = U(ob + ow)
        if not _is_zero(out[o], kind):
            continue
        found = False
        for td in range(kd):
            d = od * sd + td * dd - pbd
            if found or d < 0 or d >= nd:
                continue
            for th in range(kh):
                h = oh * sh + th * dh - pbh
                if found or h < 0 or h >= nh:
                    continue
                rb = ((p * nd + d) * nh + h) * nw
                for tw in range(kw):
                    w = ow * sw + tw * dw - pbw
                    if not found and 0 <= w < nw and _is_zero(x[U(rb + w)], kind):
                        out[o] = x[U(rb + w)]
                        found = True


@njit(**INL)
def _count_zeros(out, ob, n, kind):
    """How many of out[ob:ob + n] are zeros (a vectorised pass over one output row)."""
    z = 0
    for k in range(n):
        if _is_zero(out[U(ob) + U(k)], kind):
            z += 1
    return z


@njit(**OPTS)
def max_run(x, out, kind, geo, p_lo, p_hi, buf, lowest):
    """Max pooling of planes [p_lo, p_hi): x flat (planes * D * H * W), out flat (planes * OD
    * OH * OW); geo (3, 6): per axis size, stride, dilation, pad_begin, out, window.  buf: a
    padded row (float32, or int16 keys for half types) holding `lowest` outside [pbw, pbw + W).

    Per output row: the window's rows inside the input are folded into buf with
    `v > m ? v : m` starting from lowest (NaN never wins, as in openvino), then the last axis
    is folded the same way.  float16/bfloat16 are folded as int16 keys (hkey/bkey)."""
    sd, sh, sw = geo[0, 1], geo[1, 1], geo[2, 1]
    nd, nh, nw = geo[0, 0], geo[1, 0], geo[2, 0]
    dd, dh, dw = geo[0, 2], geo[1, 2], geo[2, 2]
    pbd, pbh, pbw = geo[0, 3], geo[1, 3], geo[2, 3]
    odn, ohn, own = geo[0, 4], geo[1, 4], geo[2, 4]
    kd, kh, kw = geo[0, 5], geo[1, 5], geo[2, 5]
    mb = U(pbw)
    s2k3 = sw == 2 and dw == 1 and kw == 3
    s2k2 = sw == 2 and dw == 1 and kw == 2
    for p in range(p_lo, p_hi):
        for od in range(odn):
            for oh in range(ohn):
                first = True
                for td in range(kd):
                    d = od * sd + td * dd - pbd
                    if d < 0 or d >= nd:
                        continue
                    for th in range(kh):
                        h = oh * sh + th * dh - pbh
                        if h < 0 or h >= nh:
                            continue
                        xb = U(((p * nd + d) * nh + h) * nw)
                        if first:
                            for k in range(nw):
                                v = _key(x[xb + U(k)], kind)
                                buf[mb + U(k)] = v if v > lowest else lowest
                            first = False
                        else:
                            for k in range(nw):
                                v = _key(x[xb + U(k)], kind)
                                m = buf[mb + U(k)]
                                buf[mb + U(k)] = v if v > m else m
                if first:
                    for k in range(nw):
                        buf[mb + U(k)] = lowest
                ob = U(((p * odn + od) * ohn + oh) * own)
                if s2k3:
                    if kind == 0:
                        for k in range(own):
                            v = ldp(buf, 2 * k)
                            a = lo_f32(v)
                            b = hi_f32(v)
                            a = b if b > a else a
                            b = lo_f32(ldp(buf, 2 * k + 2))
                            out[ob + U(k)] = b if b > a else a
                    else:
                        for k in range(own):
                            v = ldp(buf, 2 * k)
                            a = lo_i16(v)
                            b = hi_i16(v)
                            a = b if b > a else a
                            b = lo_i16(ldp(buf, 2 * k + 2))
                            out[ob + U(k)] = unkey(b if b > a else a)
                elif s2k2:
                    if kind == 0:
                        for k in range(own):
                            v = ldp(buf, 2 * k)
                            a = lo_f32(v)
                            b = hi_f32(v)
                            out[ob + U(k)] = b if b > a else a
                    else:
                        for k in range(own):
                            v = ldp(buf, 2 * k)
                            a = lo_i16(v)
                            b = hi_i16(v)
                            out[ob + U(k)] = unkey(b if b > a else a)
                elif sw == 1 and kind == 0:
                    for k in range(own):
                        out[ob + U(k)] = buf[U(k)]
                    for t in range(1, kw):
                        tb = U(t * dw)
                        for k in range(own):
                            b = buf[tb + U(k)]
                            a = out[ob + U(k)]
                            out[ob + U(k)] = b if b > a else a
                else:
                    for k in range(own):
                        a = buf[U(k * sw)]
                        for t in range(1, kw):
                            b = buf[U(k * sw + t * dw)]
                            a = b if b > a else a
                        if kind == 0:
                            out[ob + U(k)] = a
                        else:
                            out[ob + U(k)] = unkey(a)
                if _count_zeros(out, ob, own, kind):
                    _zero_signs(x, out, kind, geo, p, od, oh, ob)


@njit(**OPTS)
def max_idx_run(
    x, out, idx, kind, geo, p_lo, p_hi, lowest, istr, plane_size, modulus, missing, rows
):
    """Max pooling with indices, planes [p_lo, p_hi): per output the taps inside the input are
    scanned in row-major window order from `lowest`, a tap kept only when strictly greater (so
    the first maximal tap wins and NaN never does, as in openvino).  idx = plane * plane_size
    + the tap's position (spatial strides istr: row- or column-major); a window whose maximum
    is not above `lowest` gets plane * plane_size + missing; modulus > 0 wraps the indices
    (index_axis > 0).  x, out, idx flat; keys for half types as in max_run.  rows: int64
    scratch of 2 * kd * kh (the window's rows inside the input, per output row)."""
    sd, sh, sw = geo[0, 1], geo[1, 1], geo[2, 1]
    nd, nh, nw = geo[0, 0], geo[1, 0], geo[2, 0]
    dd, dh, dw = geo[0, 2], geo[1, 2], geo[2, 2]
    pbd, pbh, pbw = geo[0, 3], geo[1, 3], geo[2, 3]
    odn, ohn, own = geo[0, 4], geo[1, 4], geo[2, 4]
    kd, kh, kw = geo[0, 5], geo[1, 5], geo[2, 5]
    s0, s1, s2 = istr[0], istr[1], istr[2]
    # outputs whose taps along the last axis all lie inside the row
    ow_lo = min(own, max(0, (pbw + sw - 1) // sw))
    ow_hi = max(ow_lo, min(own, (nw - 1 + pbw - (kw - 1) * dw) // sw + 1))
    pair2 = kw == 2 and sw == 2 and dw == 1 and s2 == 1
    for p in range(p_lo, p_hi):
        pbase = p * plane_size
        for od in range(odn):
            for oh in range(ohn):
                nrows = 0
                for td in range(kd):
                    d = od * sd + td * dd - pbd
                    if d < 0 or d >= nd:
                        continue
                    for th in range(kh):
                        h = oh * sh + th * dh - pbh
                        if h < 0 or h >= nh:
                            continue
                        rows[2 * nrows] = ((p * nd + d) * nh + h) * nw
                        rows[2 * nrows + 1] = d * s0 + h * s1
                        nrows += 1
                ob = ((p * odn + od) * ohn + oh) * own
                for ow in range(own):
                    if ow == ow_lo and ow_hi > ow_lo:
                        # the interior of the row: no bounds checks
                        if pair2 and nrows == 2:
                            _idx_pairs2(
                                x,
                                out,
                                idx,
                                kind,
                                rows,
                                ob,
                                ow_lo,
                                ow_hi,
                                pbw,
                                lowest,
                                pbase,
                                missing,
                                modulus,
                            )
                        else:
                            for o in range(ow_lo, ow_hi):
                                m = lowest
                                pos = np.int64(-1)
                                w0 = o * sw - pbw
                                for r in range(nrows):
                                    rb = rows[2 * r]
                                    pb = rows[2 * r + 1]
                                    for tw in range(kw):
                                        w = w0 + tw * dw
                                        v = _key(x[U(rb + w)], kind)
                                        if v > m:
                                            m = v
                                            pos = pb + w * s2
                                _idx_store(out, idx, ob + o, m, pos, kind, pbase, missing, modulus)
                    if ow_lo <= ow < ow_hi:
                        continue
                    m = lowest
                    pos = np.int64(-1)
                    for r in range(nrows):
                        rb = rows[2 * r]
                        pb = rows[2 * r + 1]
                        for tw in range(kw):
                            w = ow * sw + tw * dw - pbw
                            if w < 0 or w >= nw:
                                continue
                            v = _key(x[U(rb + w)], kind)
                            if v > m:
                                m = v
                                pos = pb + w * s2
                    _idx_store(out, idx, ob + ow, m, pos, kind, pbase, missing, modulus)
                if kind != 0 and _count_zeros(out, ob, own, kind):
                    # float32 maxima are the first maximal tap's bits already; half types were
                    # compared as keys, where both zeros are one key
                    _zero_signs(x, out, kind, geo, p, od, oh, ob)


@njit(**INL)
def _idx_store(out, idx, o, m, pos, kind, pbase, missing, modulus):
    if kind == 0:
        out[U(o)] = m
    else:
        out[U(o)] = unkey(m)
    i = pbase + (pos if pos >= 0 else missing)
    if modulus > 0:
        i = i % modulus
    idx[U(o)] = i


@njit(**OPTS)
def _idx_pairs2(x, out, idx, kind, rows, ob, lo, hi, pbw, lowest, pbase, missing, modulus):
    """2x2 windows, stride 2 along the last axis, both rows inside: pair loads and selects."""
    r0, q0 = rows[0], rows[1]
    r1, q1 = rows[2], rows[3]
    for o in range(lo, hi):
        w = 2 * o - pbw
        u = ldp(x, r0 + w)
        v = ldp(x, r1 + w)
        if kind == 0:
            a, b, c, e = lo_f32(u), hi_f32(u), lo_f32(v), hi_f32(v)
        elif kind == 1:
            a, b = hkey(lo_u16(u)), hkey(hi_u16(u))
            c, e = hkey(lo_u16(v)), hkey(hi_u16(v))
        else:
            a, b = bkey(lo_u16(u)), bkey(hi_u16(u))
            c, e = bkey(lo_u16(v)), bkey(hi_u16(v))
        m = lowest
        pos = np.int64(-1)
        t = a > m
        m = a if t else m
        pos = q0 + w if t else pos
        t = b > m
        m = b if t else m
        pos = q0 + w + 1 if t else pos
        t = c > m
        m = c if t else m
        pos = q1 + w if t else pos
        t = e > m
        m = e if t else m
        pos = q1 + w + 1 if t else pos
        _idx_store(out, idx, ob + o, m, pos, kind, pbase, missing, modulus)


KERNELS = {
    "avg_run": avg_run,
    "avg_direct_run": avg_direct_run,
    "global_avg_run": global_avg_run,
    "max_run": max_run,
    "max_idx_run": max_idx_run,
}
