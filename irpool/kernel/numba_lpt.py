"""numba kernels of the quantized chains compile_model prepares (compiled_model.py; imported on
first use only, each kernel compiled or loaded from numba's disk cache on its first call).

An AvgPool LPT runs on integer codes divides each window's sum by its count in float32
(f32(sum) * f32(1/count)), where the windowed kernels give sum / count: the sum is recovered
exactly (the codes are integers far below 2**24, so f64(mean) * count lies within far less
than 0.5 of it) and the plugin's arithmetic redone, in one pass over the output."""

from __future__ import annotations

import os

import numpy as np
from numba import njit

CACHE = os.environ.get("IRPOOL_NUMBA_CACHE", "1") != "0"
OPTS = {
    "cache": CACHE,
    "nogil": True,
    "fastmath": False,
    "boundscheck": False,
    "error_model": "numpy",
}


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


@njit(**OPTS)
def reduce_codes_trailing(x, n, count, is_max, out):
    """A ReduceMean or ReduceMax of codes over the last axes, `n` codes per output (every
    array flat): the mean as the plugin takes it, f32(sum) / count, or the max.  The sum of
    integer codes is exact in any order: four float32 partial sums where every partial stays
    below 2**24 (n < 65536), else one float64 sum.  Returns False where a code is NaN or a sum
    not finite (the caller takes numpy's reading then)."""
    c = np.float32(count)
    quads = n - n % 4
    for r in range(out.size):
        base = r * n
        if is_max:
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
        elif n < 65536:
            s0 = s1 = s2 = s3 = np.float32(0.0)
            for i in range(0, quads, 4):
                s0 += x[base + i]
                s1 += x[base + i + 1]
                s2 += x[base + i + 2]
                s3 += x[base + i + 3]
            for i in range(quads, n):
                s0 += x[base + i]
            total = (s0 + s1) + (s2 + s3)
            if not np.isfinite(total):
                return False
            out[r] = total / c
        else:
            t = 0.0
            for i in range(n):
                t += np.float64(x[base + i])
            if not np.isfinite(t):
                return False
            out[r] = np.float32(t) / c
    return True
