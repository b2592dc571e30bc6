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
