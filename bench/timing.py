"""Timing and checking helpers the bench scripts share."""

from __future__ import annotations

import gc
import math
import os
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def cpu_times() -> tuple[float, float]:
    """(busy CPU seconds of the whole machine, CPU seconds of this process)."""
    with open("/proc/stat") as handle:
        fields = [float(v) for v in handle.readline().split()[1:]]
    ticks = os.sysconf("SC_CLK_TCK")
    busy = (sum(fields[:8]) - fields[3] - fields[4]) / ticks
    t = os.times()
    return busy, t.user + t.system


def interleave(
    runs: dict[str, Callable[[], Any]], rounds: int, min_seconds: float, max_rounds: int = 3000
) -> tuple[dict[str, list[float]], dict[str, list[float]], float, int]:
    """Time every run once per round in a random order: (wall times, thread CPU times, the
    CPU share other processes used, rounds)."""
    names = list(runs)
    wall: dict[str, list[float]] = {n: [] for n in names}
    cpu: dict[str, list[float]] = {n: [] for n in names}
    order = random.Random(0)
    for n in names:  # warm
        runs[n]()
    gc.collect()
    gc.disable()
    try:
        busy0, own0 = cpu_times()
        start = time.perf_counter()
        done = 0
        while done < rounds or (time.perf_counter() - start < min_seconds and done < max_rounds):
            order.shuffle(names)
            for n in names:
                fn = runs[n]
                c0 = time.thread_time()
                t0 = time.perf_counter()
                fn()
                t1 = time.perf_counter()
                c1 = time.thread_time()
                wall[n].append(t1 - t0)
                cpu[n].append(c1 - c0)
            done += 1
        elapsed = time.perf_counter() - start
        busy1, own1 = cpu_times()
    finally:
        gc.enable()
    others = max(0.0, (busy1 - busy0) - (own1 - own0)) / (elapsed * (os.cpu_count() or 1))
    return wall, cpu, others, done


def paired(times: dict[str, list[float]], ref: str = "ov1") -> dict[str, float]:
    """Per peer: the median over rounds of its time / ref's time in the same round."""
    if ref not in times:
        return {}
    base = times[ref]
    return {
        n: statistics.median(a / b for a, b in zip(t, base, strict=True) if b > 0)
        for n, t in times.items()
    }


def geomean(values: list[float]) -> float:
    return float(math.exp(sum(math.log(v) for v in values) / len(values))) if values else math.nan


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """The same dtype, shape and bits (zero signs included), NaN equal to NaN."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    unsigned = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
    nan = np.isnan(a.astype(np.float32)) & np.isnan(b.astype(np.float32))
    return bool(((a.view(unsigned) == b.view(unsigned)) | nan).all())
