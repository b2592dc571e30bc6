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
