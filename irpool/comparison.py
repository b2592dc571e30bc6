"""Two arrays compared as compare reports them: errors in abs, rel and ulp, the worst element,
the smallest tolerances that pass, the summation-order bound of a float mean, and the map of
the cells that differ."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from .arrays import mismatches
from .errors import IrpoolError
from .geometry import PoolPlan, for_dtype
from .kernel import pool

Array = npt.NDArray[Any]


@dataclass
class OutputComparison:
    """One output of one layer: irpool against openvino."""

    name: str
    dtype: str
    declared: str
    inferred: str
    produced: str
    computed: str
    exact: bool
    max_abs: float = 0.0
    max_rel: float = 0.0
    max_ulp: float | None = None
    mismatches: int = 0
    size: int = 0
    worst_index: tuple[int, ...] | None = None
    worst_irpool: Any = None
    worst_openvino: Any = None
    min_atol: float = 0.0
    min_rtol: float = 0.0
    nan_mismatches: int = 0
    inf_mismatches: int = 0
    passed: bool = True
    shape_ok: bool = True
    rounding: int = 0
    """Values that differ, but by no more than two summation orders can (see rounding_bound)."""
    rounding_share: float | None = None
    """The largest difference as a share of that bound (None: no bound applied)."""
    mismatch_map: dict[str, Any] | None = None
    """Where the differing values are over the output's spatial cells (see mismatch_map)."""
    cell_values: tuple[list[Any], list[Any], list[int]] | None = None
    """Every value of both sides (got, expected) and the flat indices of those that count as
    differing, for an output that differs and has at most CELL_VALUES values on each side
    (see cell_values)."""


def _spacing(b: Array) -> Array:
    """The distance from each value of b to the next one of its type, as float64."""
    if b.dtype.name == "bfloat16":
        spacing = np.abs(b.astype(np.float64)) * 2.0**-7
        return np.asarray(np.maximum(spacing, 2.0**-133))
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(np.abs(np.spacing(b)).astype(np.float64))


def _ulp(a: Array, b: Array) -> Array:
    """|a - b| in units in the last place of b's type (finite values; NaN elsewhere)."""
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        return np.asarray(np.abs(a.astype(np.float64) - b.astype(np.float64)) / _spacing(b))


SUM_TOLERANCE = "(taps + 1) * eps * max|x| of the window"
"""How far two summation orders may take a float mean apart (see rounding_bound)."""


def rounding_bound(p: PoolPlan, x: Array, expected: Array) -> Array | None:
    """The largest difference two summation orders can make in each mean of plan `p`.

    A window of n taps summed in any order is off the exact sum by at most (n - 1) * u * sum|x|
    (u = eps / 2 of the type the sums run in), so two orders differ by at most
    (n - 1) * eps * max|x| after the division by a divisor >= the taps inside; the two
    divisions round once more each (1 eps * |mean|).  Bound: (taps + 1) * eps * max|x| over
    the window, plus one unit in the last place of the output when it is narrower than the
    sums (f16 means summed in float32 and rounded).  Measured against onnxruntime 1.32 (whose
    MLAS kernels sum a window in another order than irpool): at most 0.21 of this bound over
    1,050 random AveragePool nodes and the onnx package's real networks (shufflenet: 4 ulp).
    None when the plan is not a float mean."""
    floating = x.dtype.kind == "f" or x.dtype.name == "bfloat16"
    if p.reduce != "mean" or not floating or expected.shape != p.output_shape:
        return None
    wide = np.dtype(np.float64) if x.dtype == np.float64 else np.dtype(np.float32)
    taps = math.prod(a.window for a in p.axes)
    try:
        with np.errstate(invalid="ignore", over="ignore"):
            largest_plan = for_dtype(replace(p, reduce="max", indices=False), wide)
            largest, _ = pool(np.abs(x.astype(wide)), largest_plan)
    except IrpoolError:
        return None
    with np.errstate(invalid="ignore", over="ignore"):
        bound = (taps + 1) * float(np.finfo(wide).eps) * np.maximum(largest.astype(np.float64), 0)
        if expected.dtype.itemsize < wide.itemsize:
            bound = bound + _spacing(expected)
    return np.asarray(bound)


def compare_arrays(
    name: str,
    got: Array,
    expected: Array,
    atol: float,
    rtol: float,
    exact: bool,
    allowance: Array | None = None,
) -> OutputComparison:
    """Metrics of irpool's output `got` against the oracle's `expected`.  `allowance` (per
    element) is a difference accepted on top of atol/rtol: summation-order rounding."""
    result = OutputComparison(
        name=name,
        dtype=str(expected.dtype),
        declared="",
        inferred="",
        produced="[" + ",".join(map(str, expected.shape)) + "]",
        computed="[" + ",".join(map(str, got.shape)) + "]",
        exact=exact,
        size=int(expected.size),
    )
    if got.shape != expected.shape:
        result.shape_ok = False
        result.passed = False
        result.cell_values = cell_values(got, expected, None)
        return result
    if got.dtype != expected.dtype:
        result.passed = False
    g = got.astype(np.float64)
    e = expected.astype(np.float64)
    floating = expected.dtype.kind == "f" or expected.dtype.name == "bfloat16"
    g_nan, e_nan = np.isnan(g), np.isnan(e)
    g_inf, e_inf = np.isinf(g), np.isinf(e)
    result.nan_mismatches = int(np.count_nonzero(g_nan != e_nan))
    same_special = (g_nan & e_nan) | (g_inf & e_inf & (np.sign(g) == np.sign(e)))
    finite = ~(g_nan | e_nan | g_inf | e_inf)
    result.inf_mismatches = int(
        np.count_nonzero((g_inf | e_inf) & ~same_special & ~(g_nan | e_nan))
    )
    # differences of finite pairs only: inf - inf and NaN never reach the arithmetic
    diff = np.zeros(g.shape, np.float64)
    np.subtract(g, e, out=diff, where=finite)
    diff = np.abs(diff)
    scale = np.where(finite & (e != 0), np.abs(e), 1.0)
    rel = np.where(finite & (e != 0), diff / scale, 0.0)
    if diff.size:
        result.max_abs = float(diff.max())
        result.max_rel = float(rel.max())
        if floating:
            ulp = np.zeros(g.shape, np.float64)
            ulp[finite] = _ulp(got[finite], expected[finite])
            result.max_ulp = float(ulp.max())
    bad = mismatches(got, expected, atol, rtol, exact=exact)
    if allowance is not None and diff.size:
        with np.errstate(invalid="ignore", divide="ignore"):
            covered = finite & (diff <= allowance)
            share = np.where(finite & (diff > 0), diff / allowance, 0.0)
        result.rounding = int(np.count_nonzero(bad & covered))
        result.rounding_share = float(np.where(np.isnan(share), np.inf, share).max())
        bad = bad & ~covered
    result.mismatches = int(np.count_nonzero(bad))
    result.mismatch_map = mismatch_map(bad)
    if result.mismatches:
        score = np.where(bad, np.where(finite, diff, np.inf), -1.0)
        worst = np.unravel_index(int(np.argmax(score)), score.shape)
        result.worst_index = tuple(int(i) for i in worst)
        result.worst_irpool = got[worst].item() if hasattr(got[worst], "item") else got[worst]
        result.worst_openvino = expected[worst].item()
        result.passed = False
        result.cell_values = cell_values(got, expected, bad)
    result.min_atol = result.max_abs
    result.min_rtol = result.max_rel
    return result


CELL_VALUES = 256
"""Most values per side of an output whose every cell a report lists (cell_values)."""


def _flat(a: Array) -> list[Any]:
    """The values of an array, C order, as JSON holds them: numbers, with NaN and the
    infinities as the strings "nan", "inf" and "-inf"."""
    wide = a.astype(np.float64) if a.dtype.kind == "f" or a.dtype.name == "bfloat16" else a
    return [
        v if not isinstance(v, float) or math.isfinite(v) else str(v)
        for v in np.asarray(wide).reshape(-1).tolist()
    ]


def cell_values(
    got: Array, expected: Array, bad: Array | None, limit: int = CELL_VALUES
) -> tuple[list[Any], list[Any], list[int]] | None:
    """Every value of both outputs, flat in C order (see _flat), and the flat indices where
    `bad` (the mismatch mask; None when the shapes differ) is set; None when either output
    has more than `limit` values.  What a report shows in full for a small output that
    differs."""
    if got.size > limit or expected.size > limit:
        return None
    differing = [] if bad is None else [int(i) for i in np.flatnonzero(bad)]
    return _flat(got), _flat(expected), differing


MAP_CELLS = 4096
"""Most cells a mismatch map lists one by one; beyond it a coarse map of blocks comes along."""


def _coarse(counts: Array, limit: int) -> dict[str, Any]:
    """Per block of cells, how many of them differ; blocks as small as keep at most `limit`."""
    shape = counts.shape
    factor = max(1, math.ceil((counts.size / limit) ** (1 / len(shape))))
    while math.prod(math.ceil(n / factor) for n in shape) > limit:
        factor += 1
    block = [min(factor, n) for n in shape]
    blocks = [math.ceil(n / b) for n, b in zip(shape, block, strict=True)]
    pad = [(0, c * b - n) for n, b, c in zip(shape, block, blocks, strict=True)]
    padded = np.pad((counts > 0).astype(np.int64), pad)
    split: list[int] = []
    for c, b in zip(blocks, block, strict=True):
        split += [c, b]
    sums = padded.reshape(split).sum(axis=tuple(range(1, 2 * len(shape), 2)))
    return {"block": block, "shape": blocks, "differing": sums.tolist()}


def mismatch_map(bad: Array, limit: int = MAP_CELLS) -> dict[str, Any] | None:
    """Where an output (N, C, *spatial) differs, over its spatial cells: `shape` (spatial),
    `planes` (N * C, folded into each cell), `differing_cells` (cells where a plane differs),
    `cells` ([*index, planes differing there], C order, at most `limit`), `truncated`, and
    past the limit `coarse` (per block of `block` cells, how many differ).  None for an output
    without spatial axes, or one where nothing differs."""
    if bad.ndim < 3 or not bad.any():
        return None
    spatial = bad.shape[2:]
    planes = int(bad.shape[0] * bad.shape[1])
    counts = bad.reshape((planes, *spatial)).sum(axis=0)
    where = np.argwhere(counts > 0)
    out: dict[str, Any] = {
        "shape": [int(n) for n in spatial],
        "planes": planes,
        "differing_cells": len(where),
        "cells": [[*map(int, idx), int(counts[tuple(idx)])] for idx in where[:limit]],
        "truncated": len(where) > limit,
    }
    if len(where) > limit:
        out["coarse"] = _coarse(counts, limit)
    return out


def mismatch_cells(got: Array, expected: Array, limit: int = 8) -> list[tuple[int, ...]]:
    """The first spatial positions (batch and channel dropped, each position once) where two
    outputs of the same shape differ."""
    if got.shape != expected.shape:
        return []
    if got.ndim <= 2:
        return []
    bad = mismatches(got, expected, exact=True)
    spatial = bad.reshape((-1, *bad.shape[2:])).any(axis=0)
    return [tuple(int(v) for v in idx) for idx in np.argwhere(spatial)[:limit]]
