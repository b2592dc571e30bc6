"""The numba kernels of glue_compiled.py: the per-element glue of a compiled model (imported on
first use only; each kernel is compiled, or loaded from numba's disk cache, on its first call).

Each computes, element by element, the IEEE operation the numpy core does (ops/glue.py,
ops/elements.py): fastmath is off, so nothing is contracted or reordered.  Arrays are flat and
contiguous; `out` is written in place.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .numba_kernels import OPTS, h2f


@njit(**OPTS)
def to_f32(x, out):
    """Integers to the nearest float32 (u8, i8 exact; i32 rounded to nearest even, as
    numpy's astype)."""
    for i in range(x.size):
        out[i] = np.float32(x[i])


@njit(**OPTS)
def half_to_f32(bits, out):
    """float16 (as its uint16 bits) to float32, exact, NaN payloads as numpy widens them."""
    for i in range(bits.size):
        out[i] = h2f(bits[i])


@njit(**OPTS)
def by_constant(a, b, mid, inner, shift, out):
    """out = a + b (`shift`) or a * b, where b varies along the middle of (outer, mid, inner)
    only: b[m] applies to the run of `inner` elements at (o, m).  A Subtract passes -b: x - c
    and x + (-c) are the same IEEE operation, signed zeros included."""
    block = mid * inner
    for o in range(0, a.size, block):
        for m in range(mid):
            s = b[m]
            base = o + m * inner
            src = a[base : base + inner]
            dst = out[base : base + inner]
            if shift:
                for i in range(inner):
                    dst[i] = src[i] + s
            else:
                for i in range(inner):
                    dst[i] = src[i] * s


@njit(**OPTS)
def unary(x, op, out):
    """op 0: ReLU (x > 0 ? x : +0, NaN to +0); 1: Abs (the sign bit cleared); 2: Sqrt;
    3: x * x; 4: x * x * x; 5: (x * x) * (x * x); 6: x (a copy)."""
    zero = np.float32(0.0)
    if op == 0:
        for i in range(x.size):
            v = x[i]
            out[i] = v if v > zero else zero
    elif op == 1:
        for i in range(x.size):
            out[i] = abs(x[i])
    elif op == 2:
        for i in range(x.size):
            out[i] = np.sqrt(x[i])
    elif op == 3:
        for i in range(x.size):
            out[i] = x[i] * x[i]
    elif op == 4:
        for i in range(x.size):
            out[i] = x[i] * x[i] * x[i]
    elif op == 5:
        for i in range(x.size):
            v = x[i]
            out[i] = (v * v) * (v * v)
    else:
        for i in range(x.size):
            out[i] = x[i]


@njit(**OPTS)
def fake_quantize(x, il, ih, isc, ish, osc, ol, mid, inner, fused, fma_out, out):
    """The CPU plugin's FakeQuantize as lpt.cpu_fake_quantize computes it, the six constants
    varying along the middle of (outer, mid, inner) only: clamp to [il, ih] (NaN passes),
    x * isc + ish (one rounding through float64 where `fused`), round half to even, then
    steps * osc + ol (one rounding where `fma_out`)."""
    block = mid * inner
    for o in range(0, x.size, block):
        for m in range(mid):
            lo, hi, a, b, c, d = il[m], ih[m], isc[m], ish[m], osc[m], ol[m]
            base = o + m * inner
            src = x[base : base + inner]
            dst = out[base : base + inner]
            for i in range(inner):
                v = src[i]
                if v == v:
                    v = lo if v < lo else v
                    v = hi if v > hi else v
                if fused:
                    t = np.float32(np.float64(v) * np.float64(a) + np.float64(b))
                else:
                    t = v * a + b
                s = np.rint(t)
                if fma_out:
                    dst[i] = np.float32(np.float64(s) * np.float64(c) + np.float64(d))
                else:
                    dst[i] = s * c + d
