"""float16 <-> float32 and float32 -> bfloat16 with whole-array integer operations.

numpy converts float16 one value at a time on this kind of CPU (about 1.7 ns a value to
float32 and 2.5 ns back; measured on 800K values), slower than the pooling around it.  These
functions give the same bits as numpy's conversions (every float16 pattern and random float32
patterns are checked in tests/test_halves.py) with a few vectorised passes:

* float16 -> float32: the bits, sign-extended to int32 and shifted left by 13, hold the sign in
  bit 31 (and copies of it in bits 28-30, masked off) and exponent and mantissa in bits 13-27;
  read as a float32 that is the number times 2**-112, for normal and subnormal values alike,
  so one multiplication by 2**112 finishes it.  Infinities and NaN (exponent all ones) come
  out as finite numbers of 2**16 or more and are fixed only where a min/max finds any.
* float32 -> float16, nearest even: for results in the normal range, (a - (112 << 23) + 0xFFF
  + odd) >> 13, where a is the magnitude's bits and odd its bit 13; subnormal, overflowing and
  NaN results (the top ten bits of the payload kept, at least 1) are recomputed only where a
  min/max finds any.
* float32 -> bfloat16, nearest even: (u + 0x7FFF + bit 16 of u) >> 16; a NaN becomes 0x7FC0
  with its sign, as ml_dtypes converts.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[Any]

TWO_112 = np.float32(2.0**112)
F16_LIMIT = np.float32(65536.0)
"""Finite float16 values stay below this after the conversion; infinities and NaN do not."""


def f16_to_f32(dst: Array, src: Array) -> None:
    """dst[...] = src (float16) as float32, exactly as numpy converts; dst and src of one
    shape, either may be a strided view."""
    bits = dst.view(np.int32)
    np.copyto(bits, src.view(np.int16), casting="unsafe")  # sign-extends
    np.left_shift(bits, 13, out=bits)
    np.bitwise_and(bits, np.int32(-0x70002000), out=bits)  # 0x8FFFE000
    np.multiply(dst, TWO_112, out=dst)
    if dst.size and (dst.max() >= F16_LIMIT or dst.min() <= -F16_LIMIT):
        # infinities and NaN: exponent all ones, the mantissa kept as numpy keeps a payload
        special = (src.view(np.uint16) & np.uint16(0x7C00)) == np.uint16(0x7C00)
        dst.view(np.uint32)[special] |= np.uint32(0x7F800000)


def f32_to_f16(dst: Array, src: Array, work: Array) -> None:
    """dst[...] = src (float32) rounded to float16 (nearest even; overflow to infinity), as
    numpy converts, NaN payloads included.  `work`: a uint32 array of src's shape."""
    u = src.view(np.uint32)
    t = work
    np.bitwise_and(u, np.uint32(0x7FFFFFFF), out=t)  # the magnitude's bits
    low = int(t.min()) if t.size else 0x40000000
    high = int(t.max()) if t.size else 0
    magnitude = t.copy() if low < 0x38800000 or high >= 0x47800000 else None
    odd = np.right_shift(t, 13)  # bit 13, and then the sign below
    np.bitwise_and(odd, np.uint32(1), out=odd)
    np.add(t, odd, out=t)
    np.add(t, np.uint32(0xC8000FFF), out=t)  # - (112 << 23) + 0xFFF, modulo 2**32
    np.right_shift(t, 13, out=t)
    if magnitude is not None:
        small = magnitude < np.uint32(0x38800000)  # below 2**-14: a subnormal result (or 0)
        if small.any():
            # adding 0.5 rounds to nearest even at float16's subnormal spacing
            tiny = magnitude[small].view(np.float32) + np.float32(0.5)
            t[small] = tiny.view(np.uint32) - np.uint32(0x3F000000)
        big = magnitude >= np.uint32(0x47800000)  # 2**16 and above: infinity or NaN
        if big.any():
            m = magnitude[big]
            # a NaN keeps the top of its payload, and stays a NaN (numpy's rule)
            payload = np.maximum((m & np.uint32(0x7FFFFF)) >> np.uint32(13), np.uint32(1))
            t[big] = np.where(m > np.uint32(0x7F800000), 0x7C00 + payload, np.uint32(0x7C00))
    np.right_shift(u, 16, out=odd)
    np.bitwise_and(odd, np.uint32(0x8000), out=odd)
    np.bitwise_or(t, odd, out=t)
    np.copyto(dst.view(np.uint16), t, casting="unsafe")


def f32_to_bf16(dst: Array, src: Array, work: Array) -> None:
    """dst[...] = src (float32) rounded to bfloat16 (nearest even; NaN to 0x7FC0 with its
    sign), as numpy converts to ml_dtypes.bfloat16.  `work`: a uint32 array of src's shape."""
    u = src.view(np.uint32)
    t = work
    np.right_shift(u, 16, out=t)
    np.bitwise_and(t, np.uint32(1), out=t)
    np.add(t, u, out=t)
    np.add(t, np.uint32(0x7FFF), out=t)
    np.right_shift(t, 16, out=t)
    nan = np.isnan(src)
    if nan.any():
        t[nan] = (u[nan] >> np.uint32(16)) & np.uint32(0x8000) | np.uint32(0x7FC0)
    np.copyto(dst.view(np.uint16), t, casting="unsafe")


def f32_to_bf16_half_up_if_odd(dst: Array, src: Array, work: Array) -> None:
    """dst[...] = src (float32) rounded to bfloat16 as ov::bfloat16 rounds (openvino's CPU
    plugin without AVX-512): 0x8000 is added to the bits only where bit 16 (the lowest kept
    one) is set, modulo 2**32, then the low half is dropped; subnormals are kept and NaNs get
    no case of their own (0x7FFFFFFF becomes 0x8000).  `work`: a uint32 array of src's
    shape."""
    u = src.view(np.uint32)
    t = work
    np.bitwise_and(u, np.uint32(0x10000), out=t)
    np.right_shift(t, 1, out=t)
    np.add(t, u, out=t)
    np.right_shift(t, 16, out=t)
    np.copyto(dst.view(np.uint16), t, casting="unsafe")
