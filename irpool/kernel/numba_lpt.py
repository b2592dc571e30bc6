"""numba kernels of the quantized chains compile_model prepares (compiled_model.py; imported on
first use only, each kernel compiled or loaded from numba's disk cache on its first call).

An AvgPool LPT runs on integer codes divides each window's sum by its count in float32
(f32(sum) * f32(1/count)), where the windowed kernels give sum / count: the sum is recovered
exactly (the codes are integers far below 2**24, so f64(mean) * count lies within far less
than 0.5 of it) and the plugin's arithmetic redone, in one pass over the output."""

from __future__ import annotations

import numpy as np
from numba import njit

from .numba_kernels import OPTS


@njit(**OPTS)
def average_of_codes(means, counts, recips, out):
    """out = f32(rint(f64(means) * counts)) * recips, a non-finite sum read as 0; `counts`
    (float64) and `recips` (float32, 1/count) run along the last len(counts) positions and
    repeat before them (every array flat)."""
    m = counts.size
    rows = means.size // m
    for r in range(rows):
        base = r * m
        for j in range(m):
            s = np.rint(np.float64(means[base + j]) * counts[j])
            if not np.isfinite(s):
                s = 0.0
            out[base + j] = np.float32(s) * recips[j]


@njit(**{**OPTS, "fastmath": {"reassoc"}})
def sum_of_codes_rows(x, n, out):
    """The sums of integer codes over the last axes, `n` codes per output (every array flat),
    in float32: exact in any order while every partial sum stays below 2**24 (the caller's
    n < 65536), so reassociation is allowed and the compiler vectorises it.  Nothing but these
    additions happens here (reassociation lets the compiler rewrite other arithmetic too: the
    ReduceMean's division is the caller's).  Returns False where a sum is not finite (a NaN
    or an infinity among the codes: the caller takes numpy's reading then)."""
    for r in range(out.size):
        base = r * n
        s = np.float32(0.0)
        for i in range(n):
            s += x[base + i]
        out[r] = s
        if not np.isfinite(s):
            return False
    return True


@njit(**OPTS)
def max_of_codes_rows(x, n, out):
    """A ReduceMax of codes over the last axes, `n` codes per output (every array flat), in
    four running maxima.  Returns False where a code is NaN (numpy's reading then)."""
    quads = n - n % 4
    for r in range(out.size):
        base = r * n
        m0 = m1 = m2 = m3 = x[base]
        nan = False
        for i in range(0, quads, 4):
            a, b, d, e = x[base + i], x[base + i + 1], x[base + i + 2], x[base + i + 3]
            nan |= (a != a) | (b != b) | (d != d) | (e != e)
            m0 = a if a > m0 else m0
            m1 = b if b > m1 else m1
            m2 = d if d > m2 else m2
            m3 = e if e > m3 else m3
        for i in range(quads, n):
            a = x[base + i]
            nan |= a != a
            m0 = a if a > m0 else m0
        if nan:
            return False
        m0 = m1 if m1 > m0 else m0
        m2 = m3 if m3 > m2 else m2
        out[r] = m2 if m2 > m0 else m0
    return True
