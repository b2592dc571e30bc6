"""The core under the `torch` convention against PyTorch's own pooling (optional oracle: these
tests skip without torch, and fail without it when IRPOOL_REQUIRE_TORCH=1)."""

from __future__ import annotations

import random
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from conftest import sweep

from irpool.geometry import plan
from irpool.kernel import pool
from irpool.ops import torch as torch_ops

pytestmark = pytest.mark.oracle

SWEEP = sweep(quick=100, full=600)
REQUIRED = SWEEP * 2 // 3


def make_call(rng: random.Random) -> tuple[str, dict[str, Any], tuple[int, ...], str]:
    kind = rng.choice(["avg", "max"])
    rank = rng.choice([1, 2, 3])
    kernel = [rng.randint(1, 4) for _ in range(rank)]
    dilation = [rng.choice([1, 1, 2]) for _ in range(rank)] if kind == "max" else [1] * rank
    k_eff = [(k - 1) * d + 1 for k, d in zip(kernel, dilation, strict=True)]
    padding = [rng.randint(0, e // 2) for e in k_eff]
    kwargs: dict[str, Any] = {
        "kernel_size": kernel,
        "stride": [rng.randint(1, 3) for _ in range(rank)],
        "padding": padding,
        "ceil_mode": rng.random() < 0.5,
    }
    if kind == "max":
        kwargs["dilation"] = dilation
        kwargs["return_indices"] = rng.random() < 0.7
    else:
        kwargs["count_include_pad"] = rng.random() < 0.5
    shape = (rng.randint(1, 2), rng.randint(1, 3), *[rng.randint(e, e + 6) for e in k_eff])
    dtype = "int64" if kind == "avg" and rng.random() < 0.2 else "float32"
    return f"{kind}_pool{rank}d", kwargs, shape, dtype


def test_sweep_matches_torch(torch: ModuleType) -> None:
    rng = random.Random(3)
    nrng = np.random.default_rng(3)
    compared, failures = 0, []
    for _ in range(SWEEP):
        fn, kwargs, shape, dtype = make_call(rng)
        if dtype == "int64":
            x = nrng.integers(-20, 21, size=shape).astype(np.int64)
        else:
            x = nrng.integers(-4, 5, size=shape).astype(np.float32)
            if nrng.random() < 0.5:
                x = (x + nrng.standard_normal(shape)).astype(np.float32)
            if nrng.random() < 0.1:
                x[nrng.random(shape) < 0.1] = np.nan
        try:
            out = getattr(torch.nn.functional, fn)(torch.from_numpy(x), **kwargs)
        except RuntimeError:
            continue
        expected = [t.numpy() for t in out] if isinstance(out, tuple) else [out.numpy()]
        params = torch_ops.params(fn, **kwargs)
        values, indices = pool(x, plan(params, x.shape, "torch", dtype=x.dtype))
        got = [values] + ([indices] if indices is not None else [])
        compared += 1
        for k, (g, e) in enumerate(zip(got, expected, strict=True)):
            if g.shape != e.shape:
                failures.append(f"{fn} {kwargs} {shape}: shape {g.shape} vs {e.shape}")
            elif g.dtype.kind == "f" and k == 0:
                if not np.allclose(g, e, rtol=2e-6, atol=1e-6, equal_nan=True):
                    failures.append(f"{fn} {kwargs} {shape}: max diff {np.nanmax(np.abs(g - e))}")
            elif not np.array_equal(g, e):
                failures.append(f"{fn} {kwargs} {shape}: output {k} differs")
    print(f"\ncompared {compared} torch calls")
    assert not failures, f"{len(failures)} mismatches:\n" + "\n".join(failures[:10])
    assert compared >= REQUIRED
