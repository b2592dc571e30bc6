"""The numba kernels of family_compiled.py (imported on first use only; each kernel is compiled,
or loaded from numba's disk cache, on its first call).

Every float operation is the IEEE one the numpy core (kernel/reduction.py, kernel/adaptive.py)
does, in the same order: fastmath is off, so nothing is reassociated or contracted.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

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


# -- reductions: the vector loops as LLVM IR ------------------------------------------------
#
# LLVM vectorises neither a fold into sixteen scalar accumulators nor a loop whose operation is
# chosen at run time, and with fastmath off it may not reorder a float fold; these intrinsics
# write the plugin's own vector loop: one vector of `lanes` float32 accumulators, each lane an
# IEEE fold of its elements in order (fadd, or fcmp ogt + select: MAXPS), nothing fused.
# kind: 0 sum, 1 sum of |x|, 2 sum of x*x, 3 max.


def _vop(builder: Any, kind: int, acc: Any, v: Any) -> Any:
    """acc op v: MAXPS acc > v ? acc : v, or acc + v."""
    if kind == 3:
        return builder.select(builder.fcmp_ordered(">", acc, v), acc, v)
    return builder.fadd(acc, v)


def _vpre(builder: Any, kind: int, v: Any) -> Any:
    """|v| (the sign bit cleared), v * v, or v."""
    if kind == 1:
        width = v.type.count
        bits = builder.bitcast(v, ir.VectorType(ir.IntType(32), width))
        mask = ir.Constant(ir.VectorType(ir.IntType(32), width), [0x7FFFFFFF] * width)
        return builder.bitcast(builder.and_(bits, mask), v.type)
    if kind == 2:
        return builder.fmul(v, v)
    return v


def _lane_fold(lanes: int, kind: int) -> Any:
    """An intrinsic fold(x, start, blocks, init) -> float32: `lanes` lanes from `init` (lane l
    folds x[start + l + lanes * i], i < blocks, in order), then the plugin's tree of the lanes
    (kernel/reduction.py _tree)."""

    @intrinsic
    def fold(typingctx: Any, x: Any, start: Any, blocks: Any, init: Any) -> Any:
        sig = types.float32(x, types.int64, types.int64, types.float32)

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            xa = context.make_array(signature.args[0])(context, builder, args[0])
            vec = ir.VectorType(ir.FloatType(), lanes)
            slot = cgutils.alloca_once(builder, vec)
            splat = builder.insert_element(
                ir.Constant(vec, ir.Undefined), args[3], ir.Constant(ir.IntType(32), 0)
            )
            zeros = ir.Constant(ir.VectorType(ir.IntType(32), lanes), [0] * lanes)
            builder.store(builder.shuffle_vector(splat, splat, zeros), slot)
            base = builder.gep(xa.data, [args[1]])
            with cgutils.for_range(builder, args[2]) as loop:
                step = builder.mul(loop.index, ir.Constant(ir.IntType(64), lanes))
                p = builder.bitcast(builder.gep(base, [step]), vec.as_pointer())
                v = _vpre(builder, kind, builder.load(p, align=4))
                builder.store(_vop(builder, kind, builder.load(slot), v), slot)
            acc = builder.load(slot)

            def part(first: int) -> Any:
                idx = ir.Constant(ir.VectorType(ir.IntType(32), 4), list(range(first, first + 4)))
                return builder.shuffle_vector(acc, acc, idx)

            t = _vop(builder, kind, part(0), part(4))
            if lanes == 16:
                t = _vop(builder, kind, t, _vop(builder, kind, part(8), part(12)))
            e = [builder.extract_element(t, ir.Constant(ir.IntType(32), i)) for i in range(4)]
            left = _vop(builder, kind, e[0], e[1])
            return _vop(builder, kind, left, _vop(builder, kind, e[2], e[3]))

        return sig, codegen

    return fold


def _column_fold(kind: int, strips: int) -> Any:
    """An intrinsic cols(x, roff, base, n, out, o0, init): out[o0 + k] = the fold from `init`
    of x[base + roff[e] + k] over e in order, for k < n (a multiple of 16 * strips), with the
    16 * strips accumulators of each block held in registers across all its elements."""
    width = 16

    @intrinsic
    def cols(
        typingctx: Any, x: Any, roff: Any, base: Any, n: Any, out: Any, o0: Any, init: Any
    ) -> Any:
        sig = types.void(x, roff, types.int64, types.int64, out, types.int64, types.float32)

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            xa = context.make_array(signature.args[0])(context, builder, args[0])
            ra = context.make_array(signature.args[1])(context, builder, args[1])
            oa = context.make_array(signature.args[4])(context, builder, args[4])
            i64 = ir.IntType(64)
            vec = ir.VectorType(ir.FloatType(), width)
            vptr = vec.as_pointer()
            count = builder.extract_value(ra.shape, 0)
            slots = [cgutils.alloca_once(builder, vec) for _ in range(strips)]
            splat = builder.insert_element(
                ir.Constant(vec, ir.Undefined), args[6], ir.Constant(ir.IntType(32), 0)
            )
            start = builder.shuffle_vector(
                splat, splat, ir.Constant(ir.VectorType(ir.IntType(32), width), [0] * width)
            )
            blocks = builder.udiv(args[3], ir.Constant(i64, width * strips))
            with cgutils.for_range(builder, blocks) as outer:
                s = builder.mul(outer.index, ir.Constant(i64, width * strips))
                for slot in slots:
                    builder.store(start, slot)
                with cgutils.for_range(builder, count) as inner:
                    off = builder.load(builder.gep(ra.data, [inner.index]))
                    at = builder.add(builder.add(args[2], s), off)
                    for j, slot in enumerate(slots):
                        p = builder.gep(xa.data, [builder.add(at, ir.Constant(i64, j * width))])
                        v = _vpre(builder, kind, builder.load(builder.bitcast(p, vptr), align=4))
                        builder.store(_vop(builder, kind, builder.load(slot), v), slot)
                for j, slot in enumerate(slots):
                    q = builder.add(builder.add(args[5], s), ir.Constant(i64, j * width))
                    p = builder.gep(oa.data, [q])
                    builder.store(builder.load(slot), builder.bitcast(p, vptr), align=4)
            return context.get_dummy_value()

        return sig, codegen

    return cols


_f16_0, _f16_1, _f16_2, _f16_3 = (_lane_fold(16, k) for k in range(4))
_f8_0, _f8_1, _f8_2, _f8_3 = (_lane_fold(8, k) for k in range(4))
_c4_0, _c4_1, _c4_2, _c4_3 = (_column_fold(k, 4) for k in range(4))
_c1_0, _c1_1, _c1_2, _c1_3 = (_column_fold(k, 1) for k in range(4))


@njit(**INL)
def _tree_fold(x, start, blocks, init, lanes, kind):
    """The lanes' fold and tree (_lane_fold) for a run-time lane count and kind."""
    if lanes == 16:
        if kind == 0:
            return _f16_0(x, start, blocks, init)
        if kind == 1:
            return _f16_1(x, start, blocks, init)
        if kind == 2:
            return _f16_2(x, start, blocks, init)
        return _f16_3(x, start, blocks, init)
    if kind == 0:
        return _f8_0(x, start, blocks, init)
    if kind == 1:
        return _f8_1(x, start, blocks, init)
    if kind == 2:
        return _f8_2(x, start, blocks, init)
    return _f8_3(x, start, blocks, init)


@njit(**INL)
def _columns(x, roff, base, n, out, o0, init, kind, strips):
    """_column_fold for a run-time kind, 4 strips (64 outputs) or 1 (16)."""
    if strips == 4:
        if kind == 0:
            _c4_0(x, roff, base, n, out, o0, init)
        elif kind == 1:
            _c4_1(x, roff, base, n, out, o0, init)
        elif kind == 2:
            _c4_2(x, roff, base, n, out, o0, init)
        else:
            _c4_3(x, roff, base, n, out, o0, init)
    elif kind == 0:
        _c1_0(x, roff, base, n, out, o0, init)
    elif kind == 1:
        _c1_1(x, roff, base, n, out, o0, init)
    elif kind == 2:
        _c1_2(x, roff, base, n, out, o0, init)
    else:
        _c1_3(x, roff, base, n, out, o0, init)


@njit(**INL)
def _store(v, store, packed):
    """The plugin's store of a float32 running value into an integer output and its reload
    (kernel/reduction.py _trunc_store): truncated toward zero, NaN and values outside int32
    INT32_MIN; int8 saturates; uint8 saturates to [0, 255], or where `packed` turns 32768 and
    more into 0 first."""
    t = np.float64(v)
    if not (t > -2147483649.0 and t < 2147483648.0):
        t = -2147483648.0
    t = np.trunc(t)
    if store == 1:
        t = min(max(t, -128.0), 127.0)
    elif store == 2:
        t = 0.0 if packed and t >= 32768.0 else min(max(t, 0.0), 255.0)
    return np.float32(t)


@njit(**INL)
def _post(v, post, c):
    """mean: / count (one float32 division); l2: sqrt."""
    if post == 1:
        return v / c
    if post == 2:
        return np.sqrt(v)
    return v


@njit(**OPTS)
def reduce_chunks(
    x, obase, cbase, chunk, lanes, is_max, pre, lane_init, dst_init, post, count, store, packed, out
):
    """openvino's JIT order where W is reduced and each output's elements come in contiguous
    chunks (kernel/reduction.py _fold, chunk >= lanes): output o, chunk j starts at
    obase[o] + cbase[j]; its first chunk // lanes * lanes elements folded by `lanes` lanes
    (lane l: elements l, l + lanes, ...), the lanes combined by the plugin's tree, the tree
    combined with the running value (tree first for max, running value first for sums),
    then the rest one by one; `post` applied last.  Integer outputs (`store` 1 int8, 2 uint8,
    3 int32): the running value stored into the output buffer after the tree and after the
    rest (_store; `packed[o]`: uint8 output o is written by the packing store)."""
    blocks = chunk // lanes
    whole = blocks * lanes
    kind = 3 if is_max else pre
    c = np.float32(count)
    for o in range(obase.shape[0]):
        acc = dst_init
        for j in range(cbase.shape[0]):
            base = obase[o] + cbase[j]
            tree = _tree_fold(x, base, blocks, lane_init, lanes, kind)
            acc = _op(tree, acc, is_max) if is_max else acc + tree
            if store:
                acc = _store(acc, store, packed[o])
            for i in range(whole, chunk):
                acc = _op(acc, _pre(x[base + i], pre), is_max)
            if store:
                acc = _store(acc, store, packed[o])
        out[o] = _post(acc, post, c)


@njit(**OPTS)
def reduce_scalar_chunks(x, obase, cbase, chunk, pre, lane_init, dst_init, smode, post, count, out):
    """A max whose W chunks are shorter than the lanes: each chunk folded one by one (MAXPS),
    and before it, for the outputs the plugin writes with its scalar store (`smode`), the
    tree step of its untouched lanes (the running value against lowest())."""
    c = np.float32(count)
    for o in range(obase.shape[0]):
        acc = dst_init
        for j in range(cbase.shape[0]):
            base = obase[o] + cbase[j]
            if smode[o]:
                acc = lane_init if lane_init > acc else acc
            for i in range(chunk):
                v = _pre(x[base + i], pre)
                acc = acc if acc > v else v
        out[o] = _post(acc, post, c)


@njit(**OPTS)
def reduce_sequential(x, obase, run, roff, is_max, pre, dst_init, post, count, out):
    """One sequential fold per output in the order of `roff` (element e of output o is at
    obase[o // run] + o % run + roff[e]): the outputs of one run of `run` contiguous ones
    advance together, element by element, 64 or 16 at a time in vector registers, the rest
    one by one; `post` applied last."""
    kind = 3 if is_max else pre
    n64 = run // 64 * 64
    n16 = (run - n64) // 16 * 16
    for b in range(obase.shape[0]):
        o0 = b * run
        _columns(x, roff, obase[b], n64, out, o0, dst_init, kind, 4)
        _columns(x, roff, obase[b] + n64, n16, out, o0 + n64, dst_init, kind, 1)
        for k in range(n64 + n16, run):
            acc = dst_init
            for e in range(roff.shape[0]):
                acc = _op(acc, _pre(x[obase[b] + roff[e] + k], pre), is_max)
            out[o0 + k] = acc
    c = np.float32(count)
    if post:
        for i in range(out.shape[0]):
            out[i] = _post(out[i], post, c)


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
