"""Shrinking a bundle's input while its finding persists.

The layer's attributes never change; only its input does: the batch, then the channels, then
each spatial axis (cropped at its start or its end), then the values (small integers, fewest
non-zero cells, magnitudes of one).  A candidate is kept when `still(arrays)` says the
finding is the same one (the same verdict and the same divergence id).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[Any]
Still = Callable[[dict[str, Array]], bool]

MAX_TRIES = 400
"""Most candidates one minimization judges (each is one run of the runtime on a tiny model)."""


@dataclass
class Shrunk:
    arrays: dict[str, Array]
    steps: list[str] = field(default_factory=list)
    tries: int = 0


class _Budget:
    def __init__(self, still: Still, limit: int) -> None:
        self.still = still
        self.limit = limit
        self.tries = 0

    def __call__(self, arrays: dict[str, Array]) -> bool:
        if self.tries >= self.limit:
            return False
        self.tries += 1
        return self.still(arrays)


def _with(arrays: Mapping[str, Array], key: str, value: Array) -> dict[str, Array]:
    out = dict(arrays)
    out[key] = np.ascontiguousarray(value)
    return out


def _crops(n: int) -> list[int]:
    """Sizes to try for an axis of size n, smallest first."""
    sizes = list(range(1, min(n, 12)))
    s = 12
    while s < n:
        sizes.append(s)
        s = int(s * 1.5) + 1
    return [v for v in sizes if v < n]


def shrink(
    arrays: Mapping[str, Array],
    key: str,
    still: Still,
    priority: tuple[int, ...] | None = None,
    limit: int = MAX_TRIES,
    values: bool = True,
    spatial: bool = True,
) -> Shrunk:
    """The smallest input found for feed `key` that keeps the finding: shapes first (axis 0,
    axis 1 at the `priority` cell's channel first, then each further axis), then values."""
    judge = _Budget(still, limit)
    current = dict(arrays)
    steps: list[str] = []
    x = current[key]
    # the batch and the channels: one item, the differing one first
    for axis in (0, 1):
        if x.ndim <= axis or x.shape[axis] == 1:
            continue
        first = priority[axis] if priority is not None and len(priority) > axis else 0
        order = [first] + [i for i in range(min(x.shape[axis], 8)) if i != first]
        for i in order:
            if i >= x.shape[axis]:
                continue
            candidate = np.take(x, [i], axis=axis)
            trial = _with(current, key, candidate)
            if judge(trial):
                steps.append(f"axis {axis}: {x.shape[axis]} -> 1 (item {i})")
                current, x = trial, candidate
                break
    # spatial axes: the shortest crop, at the start or at the end
    for axis in range(2, x.ndim if spatial else 2):
        n = x.shape[axis]
        for size in _crops(n):
            done = False
            for start in (0, n - size):
                candidate = np.take(x, range(start, start + size), axis=axis)
                trial = _with(current, key, candidate)
                if judge(trial):
                    where = "start" if start == 0 else "end"
                    steps.append(f"axis {axis}: {n} -> {size} (kept from the {where})")
                    current, x = trial, candidate
                    done = True
                    break
            if done:
                break
    if values:
        current, x = _values(current, key, x, judge, steps)
    return Shrunk(current, steps, judge.tries)


def _small_integers(x: Array) -> list[Array]:
    if x.dtype.kind not in "f" and x.dtype.name != "bfloat16":
        return []
    wide = x.astype(np.float64)
    out = []
    for scale in (1.0, 4.0, 16.0):
        with np.errstate(invalid="ignore"):
            out.append(np.round(wide * scale).astype(x.dtype))
    return out


def _values(
    current: dict[str, Array], key: str, x: Array, judge: _Budget, steps: list[str]
) -> tuple[dict[str, Array], Array]:
    for candidate in _small_integers(x):
        trial = _with(current, key, candidate)
        if judge(trial):
            steps.append("values: rounded to small integers")
            current, x = trial, candidate
            break
    zero = np.zeros((), x.dtype)
    # fewest non-zero cells: zero chunks, halving their size (delta debugging)
    flat = x.reshape(-1)
    live = [i for i in range(flat.size) if flat[i] != 0 or np.isnan(flat[i].astype(np.float64))]
    before = len(live)
    chunk = max(1, len(live) // 2)
    while live and chunk >= 1:
        changed = False
        start = 0
        while start < len(live):
            part = live[start : start + chunk]
            candidate = x.copy().reshape(-1)
            candidate[part] = zero
            candidate = candidate.reshape(x.shape)
            trial = _with(current, key, candidate)
            if judge(trial):
                current, x = trial, candidate
                live = live[:start] + live[start + chunk :]
                changed = True
            else:
                start += chunk
        if not changed:
            if chunk == 1:
                break
            chunk = max(1, chunk // 2)
    if len(live) < before:
        steps.append(f"values: {before} -> {len(live)} non-zero cells")
    # magnitudes: each remaining value as +-1, then as the smallest integer that still shows it
    if x.dtype.kind in "fiu" or x.dtype.name == "bfloat16":
        flat = x.reshape(-1)
        ones = flat.copy()
        for i in live:
            v = float(flat[i])
            if np.isfinite(v) and v != 0:
                ones[i] = np.asarray(1.0 if v > 0 or x.dtype.kind == "u" else -1.0).astype(x.dtype)
        candidate = ones.reshape(x.shape)
        if not np.array_equal(candidate, x, equal_nan=True):
            trial = _with(current, key, candidate)
            if judge(trial):
                current, x = trial, candidate
                steps.append("values: magnitudes 1")
    return current, x
