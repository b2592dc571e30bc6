"""Element types as openvino's CPU plugin holds and converts them (openvino 2026.4.1, x86-64,
INFERENCE_PRECISION_HINT=f32; measured, docs/semantics.md "Element types and Convert").

The plugin does not run a net in the types its IR declares.  It computes in six internal types
(f32, f16, bf16, i32, i8, u8): f64 is held as f32, i64/u64/u32/i16/u16 as i32, boolean as u8.
A Parameter keeps the user's array (the first node that reads it converts), and a Result of
another type gets a conversion from the internal type in front of it.  An f16 tensor made inside
the net is held in f32 (only Parameters are physically f16, only Results round to f16).

Two Convert implementations do the work, with different rules: a reference node (`cpu_convert`:
clamp to the common range computed in the source's type, then a C cast) and a jit one (a
truncating vector conversion), chosen by the pair of types.  Constants are folded at compile
time by the core's reference implementations (C++ `static_cast` semantics) and then stored in
the internal type with rules of their own.

Every function takes and returns numpy arrays; element types are IR names (f32, i64, boolean).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from ..conventions import target
from ..kernel.halves import f32_to_bf16_half_up_if_odd
from ..model import numpy_dtype

Array = npt.NDArray[Any]

FLOATS = ("f64", "f32", "f16", "bf16")
INTEGERS = ("i64", "i32", "i16", "i8", "u64", "u32", "u16", "u8")
INTEGRAL = (*INTEGERS, "boolean")
HELD: Mapping[str, str] = {
    "f64": "f32",
    "f32": "f32",
    "f16": "f16",
    "bf16": "bf16",
    "i64": "i32",
    "i32": "i32",
    "i16": "i32",
    "i8": "i8",
    "u64": "i32",
    "u32": "i32",
    "u16": "i32",
    "u8": "u8",
    "boolean": "u8",
}
"""The internal type the plugin computes a tensor of each IR type in."""

FLT_MAX = float(np.finfo(np.float32).max)
F16_MAX = 65504.0
BF16_MAX = float(np.array([0x7F7F0000], dtype=np.uint32).view(np.float32)[0])
"""The largest finite bfloat16, 3.3895e38."""
INT32_MIN = -(2**31)
INT32_TOP_F32 = 2147483520
"""The largest float32 below 2^31: where the plugin's f32 -> i32 reorders saturate."""


def held_type(et: str) -> str:
    """The internal type of a tensor the model declares `et` (f16 inside a net: see
    `convert`, which holds it in f32)."""
    return HELD[et]


def _range(et: str) -> tuple[int, int]:
    if et == "boolean":
        return 0, 1
    info = np.iinfo(numpy_dtype(et))
    return int(info.min), int(info.max)


# -- bit-level primitives ----------------------------------------------------------------------


def cvtt_i32(x: Array) -> Array:
    """x86 cvttss2si/cvttsd2si: truncation toward zero; NaN and anything outside the int32
    range give INT32_MIN."""
    v = np.asarray(x, dtype=np.float64)
    out = np.full(v.shape, INT32_MIN, dtype=np.int32)
    ok = np.isfinite(v) & (v > -2147483649.0) & (v < 2147483648.0)
    out[ok] = np.trunc(v[ok]).astype(np.int64).astype(np.int32)
    return out


def cvtt_i64(x: Array) -> Array:
    """cvttsd2si with a 64-bit destination: NaN and out of range give INT64_MIN."""
    v = np.asarray(x, dtype=np.float64)
    out = np.full(v.shape, np.iinfo(np.int64).min, dtype=np.int64)
    ok = np.isfinite(v) & (v >= -9.223372036854775808e18) & (v < 9.223372036854775808e18)
    out[ok] = np.trunc(v[ok]).astype(np.int64)
    return out


def wrap(ints: Array, et: str) -> Array:
    """Two's-complement truncation or sign extension of integers to type `et`."""
    a = np.asarray(ints)
    if et == "boolean":
        return np.asarray(a != 0)
    if a.dtype == np.uint64 and et != "u64":
        a = a.view(np.int64)
    elif a.dtype.kind == "b":
        a = a.astype(np.uint8)
    if et == "u64":
        return np.asarray(a.astype(np.int64).astype(np.uint64) if a.dtype != np.uint64 else a)
    return np.asarray(a.astype(np.int64).astype(numpy_dtype(et)))


def clamp_keep_nan(x: Array, lo: float, hi: float) -> Array:
    """std::max(std::min(x, hi), lo): a NaN passes through."""
    y = np.where(hi < x, hi, x)
    return np.asarray(np.where(y < lo, lo, y))


def to_f32(x: Array) -> Array:
    """numpy's conversion to float32 (round to nearest even, overflow to inf), silently."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(np.asarray(x).astype(np.float32))


def to_f16(x: Array) -> Array:
    """float32 -> float16, round to nearest even, overflow to inf, silently."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(np.asarray(x, dtype=np.float32).astype(np.float16))


def _bits(x: Array) -> Array:
    return np.ascontiguousarray(np.asarray(x, dtype=np.float32)).view(np.uint32).astype(np.uint64)


def _bf16(bits: Array) -> Array:
    return (np.asarray(bits) & 0xFFFF).astype(np.uint16).view(numpy_dtype("bf16"))


def bf16_rne_flush(x: Array) -> Array:
    """float32 -> bfloat16 as the plugin's jit (vcvtneps2bf16): round to nearest even, a
    subnormal input becomes a zero of its sign, a NaN stays a (quiet) NaN.  Every bfloat16
    pooling output and every f32/f16 -> bf16 Convert rounds so."""
    u = _bits(x)
    exponent = (u >> 23) & 0xFF
    nan = (exponent == 0xFF) & ((u & 0x7FFFFF) != 0)
    r = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    r = np.where(exponent == 0, (u >> 16) & 0x8000, r)
    r = np.where(nan, (u >> 16) | 0x40, r)
    return _bf16(r)


def bf16_rne(x: Array) -> Array:
    """float32 -> bfloat16 as oneDNN's bfloat16 emulation on AVX-512 without AVX512_BF16:
    round to nearest even with subnormals kept, a NaN stays a (quiet) NaN."""
    u = _bits(x)
    exponent = (u >> 23) & 0xFF
    nan = (exponent == 0xFF) & ((u & 0x7FFFFF) != 0)
    r = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    r = np.where(nan, (u >> 16) | 0x40, r)
    return _bf16(r)


def bf16_held_in_f32() -> bool:
    """Whether the plugin holds a bfloat16 tensor made inside a net in float32, as it holds
    f16 (the target's instruction set is avx2: no bfloat16 kernels).  Then a Convert to bf16 rounds
    nothing, a bfloat16 layer computes in float32 and keeps its result so, and only a Result
    rounds to bfloat16 (`bf16_from_f32`); a bf16 Parameter is physically bfloat16 (measured
    with openvino 2026.4.1 on an AVX2 CPU: i64 -> Convert bf16 -> Convert f64 gives 257.0 for
    257, f32 -> Convert bf16 -> AvgPool averages the unrounded values)."""
    return target().isa.name == "avx2"


def bf16_from_f32(x: Array) -> Array:
    """float32 -> bfloat16 as the plugin's jit converts on this machine's instruction set
    (conventions.target()): with AVX512_BF16 `bf16_rne_flush`; with AVX-512 without it
    `bf16_rne` (subnormals kept, measured); with AVX2 only (a Result of a
    bf16 tensor held in float32, see `bf16_held_in_f32`) as ov::bfloat16 rounds,
    `bf16_odd_round` without a NaN case (0x3F80C000 -> 0x3F80, 0x3F818000 -> 0x3F82, 1e-40
    kept, 0x7FFFFFFF -> 0x8000, 0x7F800001 -> infinity; measured with openvino 2026.4.1 on an
    AVX2 CPU)."""
    if bf16_held_in_f32():
        return bf16_odd_round(x, quiet_nan=False)
    if not target().isa.bf16_instructions:
        return bf16_rne(x)
    return bf16_rne_flush(x)


def bf16_odd_round(x: Array, quiet_nan: bool = True) -> Array:
    """float32 -> bfloat16 as the plugin's scalar bfloat16 type rounds (the reference Convert
    from f64 and from 16/32/64-bit integers): 0x8000 is added only when the kept half is odd,
    so an odd result rounds half up and an even one is truncated (3e9 = 0x4F32D05E ->
    0x4F32).  `quiet_nan` off: the core's bfloat16 (constant folding) has no NaN case, so a
    NaN whose payload lies below bit 16 becomes infinity."""
    f = np.ascontiguousarray(np.asarray(x, dtype=np.float32))
    out = np.empty(f.shape, numpy_dtype("bf16"))
    f32_to_bf16_half_up_if_odd(out, f, np.empty(f.shape, np.uint32))
    if quiet_nan:
        nan = np.isnan(f)
        out.view(np.uint16)[nan] = (f.view(np.uint32)[nan] >> 16 | 0x40).astype(np.uint16)
    return out


def _quiet(x: Array) -> Array:
    """float32 values with every NaN's quiet bit set (as x86 conversions give them)."""
    u = np.ascontiguousarray(np.asarray(x, dtype=np.float32)).view(np.uint32).copy()
    nan = ((u & 0x7F800000) == 0x7F800000) & ((u & 0x7FFFFF) != 0)
    u[nan] |= np.uint32(0x400000)
    return u.view(np.float32)


def flush_f32(x: Array) -> Array:
    """How the plugin stores a float32 constant: when it holds a subnormal, every value whose
    exponent bits are 0 (the subnormals and -0.0) becomes +0.0; otherwise nothing changes
    (measured: [-0.0, 1.0] stays, [-0.0, 1e-40] becomes [0.0, 0.0])."""
    v = np.ascontiguousarray(np.asarray(x, dtype=np.float32)).copy()
    u = v.view(np.uint32)
    low = (u & 0x7F800000) == 0
    if np.any(low & ((u & 0x7FFFFF) != 0)):
        u[low] = 0
    return v


def _floats64(x: Array) -> Array:
    a = np.asarray(x)
    if a.dtype == numpy_dtype("bf16"):
        return np.asarray(a.astype(np.float32).astype(np.float64))
    return np.asarray(a.astype(np.float64))


# -- Convert at run time -------------------------------------------------------------------------


def _ref_float_to_int(x: Array, src: str, dst: str) -> Array:
    """A reference Convert node from float type `src` to integer `dst` (i32, i8 or u8): clamp
    to [lowest, max] of the source intersected with the destination's range, the bounds
    computed in double and rounded to the source's compute type (float for f32/f16/bf16, so
    INT32_MAX becomes 2^31), then a C cast (NaN and 2^31 give INT32_MIN)."""
    source = {"f64": np.inf, "f32": FLT_MAX, "f16": F16_MAX, "bf16": BF16_MAX}[src]
    t_lo, t_hi = _range(dst)
    lo, hi = max(-source, float(t_lo)), min(source, float(t_hi))
    if src != "f64":
        lo, hi = float(np.float32(lo)), float(np.float32(hi))
    return wrap(cvtt_i32(clamp_keep_nan(_floats64(x), lo, hi)), dst)


def _to_boolean(x: Array, src: str) -> Array:
    """-> boolean: floats x != 0 and not NaN (f64 first rounded to f32: 1e-300 is false);
    i64/i32 through i32, where 0 and INT32_MIN are false; u64/u32 through i32, where every
    value negative as i32 is false; the 8/16-bit types x != 0."""
    if src == "f64":
        x = to_f32(clamp_keep_nan(_floats64(x), -FLT_MAX, FLT_MAX))
        src = "f32"
    if src in FLOATS:
        v = _floats64(x)
        return np.asarray((v != 0) & ~np.isnan(v))
    if src in ("i64", "i32"):
        w = wrap(x, "i32")
        return np.asarray((w != 0) & (w != INT32_MIN))
    if src in ("u64", "u32"):
        return np.asarray(wrap(x, "i32") > 0)
    return np.asarray(np.asarray(x) != 0)


def convert(x: Array, src: str, dst: str) -> tuple[Array, str]:
    """A Convert(dst) node the plugin runs on a tensor it holds as `src`: (the value it holds
    afterwards, that value's type).  The result is in the internal type of `dst` (i32 for
    i64/u64/u32/i16/u16, u8 for boolean, f32 for f64; f16 is held in f32: a Convert to f16
    inside a net rounds nothing); `deliver` gives the declared type at a Result.

    * float -> i32 and the types held as i32: reference node (clamp, truncate);
      f32/f16/bf16 -> i8/u8: jit (truncate to int32, keep the low byte);
      f64 -> i8/u8: reference (saturates);
    * integer -> integer: two's complement, through i32;
    * f64 -> f32/f16: clamp to +-FLT_MAX, round; f64 -> bf16: clamp to +-3.3895e38, round to
      float, then the scalar bfloat16 rounding (`bf16_odd_round`);
    * f32/f16 -> bf16: round to nearest even, subnormals flushed where the CPU has
      AVX512_BF16 (`bf16_from_f32`);
    * on an AVX2 CPU (`bf16_held_in_f32`) -> bf16 is -> f32 (held so; a Result rounds);
    * integer -> float: the nearest float32 (-> bf16: `bf16_odd_round` of it, exact for
      i8/u8);
    * -> boolean: see `_to_boolean`.
    """
    x = np.asarray(x)
    if src == dst:
        # a Parameter's own type other than an internal one is read into the internal type
        # even by a Convert to that same type (f64 clamped, i64 wrapped; measured)
        return (x, src) if src == "f16" else widen(x, src)
    if dst == "f16":
        if src == "f16":
            return x, "f16"
        value, _ = convert(x, src, "f32")
        return value, "f32"
    if dst == "bf16" and bf16_held_in_f32():  # held in float32 (AVX2), as f16 is
        value, _ = convert(x, src, "f32")
        return (_quiet(value) if src == "f16" else value), "f32"
    held = HELD[dst]
    if dst == "boolean":
        return _to_boolean(x, src).astype(np.uint8), held
    if src == "boolean":
        x, src = np.asarray(x).astype(np.uint8), "u8"
        if held == "u8":
            return x, "u8"
    if src in FLOATS and dst in INTEGERS:
        if src == "f64" or held == "i32":
            return _ref_float_to_int(x, src, held), held
        return wrap(cvtt_i32(_floats64(x)), held), held
    if src in INTEGRAL and dst in INTEGERS:
        return wrap(x, held), held
    if src in FLOATS:  # float -> float
        if src == "f64":
            if dst == "bf16":
                return bf16_odd_round(
                    to_f32(clamp_keep_nan(_floats64(x), -BF16_MAX, BF16_MAX))
                ), held
            return to_f32(clamp_keep_nan(_floats64(x), -FLT_MAX, FLT_MAX)), held
        wide = np.asarray(x.astype(np.float32))  # f32, f16 and bf16 widen exactly
        if dst == "bf16":
            return bf16_from_f32(wide), held
        return wide, held  # f32, f64 (held in f32)
    # integer -> float
    nearest = to_f32(x)
    if dst == "bf16":
        if src in ("i8", "u8"):
            return np.asarray(nearest.astype(numpy_dtype("bf16"))), held
        return bf16_odd_round(nearest), held
    return nearest, held


def reorder_to_integer(x: Array, et: str) -> Array:
    """float32 values back to the integer type they are held for (a Reorder f32 -> i32/i8/u8
    after a float32 pooling): round half to even, saturate (i32 at 2147483520, the largest
    float32 below 2^31), NaN to INT32_MIN (i32) or 0 (8-bit)."""
    held = HELD[et]
    lo, hi = _range(held)
    if held == "i32":
        hi = INT32_TOP_F32
    v = np.asarray(x, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        r = np.clip(np.rint(v), lo, hi)
    r = np.where(np.isnan(v), INT32_MIN if held == "i32" else 0, r)
    return np.asarray(r.astype(numpy_dtype(held)))


def deliver(x: Array, held: str, declared: str) -> Array:
    """A tensor held as `held` at a Result of the declared type (the conversion the plugin
    puts in front of such a Result): f32 -> f16 rounds to nearest even (overflow to inf),
    f32 -> f64 clamps +-inf to +-FLT_MAX, i32 -> i64/u64/u32/i16/u16 wraps or sign-extends,
    u8 -> boolean is x != 0; float32 held for an integer type is reordered first."""
    x = np.asarray(x)
    if held == declared:
        return x
    if held == "f32" and declared in INTEGRAL:
        return deliver(reorder_to_integer(x, declared), HELD[declared], declared)
    if declared == "f16":
        return to_f16(x)
    if declared == "bf16" and held != "bf16" and bf16_held_in_f32():
        return bf16_from_f32(np.asarray(x, dtype=np.float32))
    if declared == "f64":
        return np.asarray(clamp_keep_nan(_floats64(x), -FLT_MAX, FLT_MAX))
    if declared == "boolean":
        return np.asarray(x != 0)
    if declared in INTEGERS:
        return wrap(x, declared)
    value, _ = convert(x, held, declared)
    return value


def widen(x: Array, et: str) -> tuple[Array, str]:
    """What the first node reading a Parameter of type `et` (other than a Convert) gets: its
    internal type (f64 clamped to +-FLT_MAX, 64/32/16-bit integers wrapped to i32, boolean as
    u8, f16 widened to f32 as every layer computes it)."""
    if et == "f16":
        return np.asarray(np.asarray(x).astype(np.float32)), "f32"
    held = HELD[et]
    if held == et:
        return np.asarray(x), et
    return convert(x, et, held)


# -- constants -----------------------------------------------------------------------------------


def _core_float_to_int(x: Array, dst: str) -> Array:
    """static_cast<T>(float or double) as gcc compiles it for x86-64."""
    v = _floats64(x)
    if dst in ("i8", "u8", "i16", "u16", "i32"):
        return wrap(cvtt_i32(v), dst)
    if dst == "i64":
        return cvtt_i64(v)
    if dst == "u32":
        return wrap(cvtt_i64(v), "u32")
    big = v >= 9.223372036854775808e18  # u64
    low = cvtt_i64(np.where(big, v - 9.223372036854775808e18, v)).astype(np.uint64)
    return np.asarray(np.where(big, low ^ np.uint64(1 << 63), low))


def fold_convert(x: Array, src: str, dst: str) -> Array:
    """Convert(dst) of a constant of type `src`, folded at compile time by the core's reference
    Convert (C++ static_cast on x86-64: no clamping, NaN/inf/out of range -> INT_MIN of the
    cast's width): the constant of type `dst` the model then holds (see `store_folded`)."""
    x = np.asarray(x)
    if src == dst:
        return x.copy()
    if dst == "boolean":
        if src in FLOATS:
            return np.asarray(_floats64(x) != 0)  # NaN is true
        return np.asarray(x != 0)
    if src == "boolean":
        x, src = x.astype(np.uint8), "u8"
    if src == "f32" and dst in ("u32", "u64"):
        # measured: the folded f32 -> u32/u64 is not the scalar cast: NaN and x <= -1 give a
        # value >= 2^31, x >= 2^32 (u32) or 2^64 (u64) gives 0, the rest truncates
        v = _floats64(x)
        top = 4294967296.0 if dst == "u32" else 18446744073709551616.0
        out = np.zeros(x.shape, numpy_dtype(dst))
        mid = np.isfinite(v) & (v > -1) & (v < top)
        with np.errstate(invalid="ignore"):
            out[mid] = np.trunc(v[mid]).astype(np.uint64).astype(numpy_dtype(dst))
        out[np.isnan(v) | (v <= -1)] = 0xFFFFFFFF
        return out
    if src in FLOATS and dst in INTEGERS:
        return _core_float_to_int(x, dst)
    if src in INTEGERS and dst in INTEGERS:
        if x.dtype == np.uint64:
            return np.asarray(x.astype(numpy_dtype(dst)))
        return wrap(x, dst)
    if dst == "bf16":
        if src in ("f32", "f16"):  # widened exactly, signalling NaNs kept
            return bf16_odd_round(x.astype(np.float32), quiet_nan=False)
        return bf16_odd_round(to_f32(_floats64(x) if src != "u64" else x), quiet_nan=False)
    if dst == "f16":
        if src == "i32":  # the i32 -> f16 reference clamps to f16's range (i64, u32 do not)
            clamped = np.clip(x.astype(np.float64), -F16_MAX, F16_MAX)
            return to_f16(clamped.astype(np.float32))
        if src == "f64":
            with np.errstate(over="ignore"):
                return np.asarray(x.astype(np.float16))
        return to_f16(to_f32(x))
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(x.astype(numpy_dtype(dst)))


def _clamp_into_i32(v: Array) -> Array:
    a = np.asarray(v)
    if a.dtype == np.uint64:
        a = np.minimum(a, np.uint64(2**31 - 1)).astype(np.int64)
    return np.asarray(np.clip(a.astype(np.int64), INT32_MIN, 2**31 - 1).astype(np.int32))


def store_constant(value: Array, et: str) -> tuple[Array, str]:
    """How the plugin holds a constant of type `et` from the IR (a Const): (the value, its
    internal type).  float32: see `flush_f32`; i64/u64/u32/i16/u16: clamped (saturated) into
    i32, unlike
    Parameters, which wrap; f16 widened to f32 (held); f64 to f32 as a Convert would;
    boolean as u8."""
    v = np.asarray(value)
    if et == "f32":
        return flush_f32(v), "f32"
    if et == "f16":
        return np.asarray(v.astype(np.float32)), "f32"
    if et == "f64":
        return to_f32(clamp_keep_nan(v.astype(np.float64), -FLT_MAX, FLT_MAX)), "f32"
    if HELD[et] == "i32" and et != "i32":
        return _clamp_into_i32(v), "i32"
    if et == "boolean":
        return np.asarray(v.astype(np.uint8)), "u8"
    return v, et


def store_folded(x: Array, src: str, dst: str) -> tuple[Array, str]:
    """How the plugin holds the result of a folded Convert (`fold_convert(x, src, dst)`; with
    src == dst, a folded MaxPool's output x): float32 as `flush_f32` stores it; f64 as float32
    clamped to +-FLT_MAX; the types held as i32 clamped into i32; f16 widened."""
    v = fold_convert(x, src, dst)
    if dst == "f32":  # (src == dst: a folded MaxPool's output)
        return flush_f32(v), "f32"
    if dst == "f64":
        return to_f32(clamp_keep_nan(v.astype(np.float64), -FLT_MAX, FLT_MAX)), "f32"
    return store_constant(v, dst)
