"""float16/bfloat16 conversions of the numpy path (irpool/kernel/halves.py) and of the compiled
path, against numpy's and ml_dtypes' own conversions, bit for bit (NaN payloads included)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from irpool.geometry import PoolParams, plan
from irpool.kernel import pool
from irpool.kernel.halves import f16_to_f32, f32_to_bf16, f32_to_f16
from irpool.model import bfloat16

BF16 = bfloat16()
EVERY_HALF = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)


def float32_samples() -> np.ndarray:
    """Random float32 bit patterns, values around float16's limits (the largest finite, the
    halfway points to infinity, the subnormal range and its rounding ties) and every float16
    value widened."""
    rng = np.random.default_rng(0)
    patterns = rng.integers(0, 2**32, 1 << 20, dtype=np.uint64).astype(np.uint32)
    scale = rng.choice([6e-8, 3e-5, 6.1e-5, 1.0, 65504.0, 65519.0, 65520.0, 1e5], 1 << 18)
    near = (rng.standard_normal(1 << 18) * scale).astype(np.float32)
    ties = (np.arange(-2048, 2048, dtype=np.float32) + 0.5) * np.float32(2.0**-24)
    widened = EVERY_HALF.view(np.float16).astype(np.float32)
    return np.concatenate([patterns.view(np.float32), near, ties, widened])


def test_float16_to_float32_on_every_pattern() -> None:
    got = np.empty(EVERY_HALF.size, np.float32)
    f16_to_f32(got, EVERY_HALF.view(np.float16))
    want = EVERY_HALF.view(np.float16).astype(np.float32)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    # a strided source into a strided destination
    grid = EVERY_HALF.view(np.float16).reshape(256, 256)
    out = np.zeros((256, 300), np.float32)
    f16_to_f32(out[:, 10:138], grid[:, ::2])
    np.testing.assert_array_equal(out[:, 10:138], grid[:, ::2].astype(np.float32))


def test_float32_to_float16_and_bfloat16() -> None:
    values = float32_samples()
    got = np.empty(values.size, np.float16)
    f32_to_f16(got, values, np.empty(values.size, np.uint32))
    with np.errstate(over="ignore", invalid="ignore"):
        want = values.astype(np.float16)
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))
    if BF16 is None:
        pytest.skip("ml_dtypes is not installed")
    got_b = np.empty(values.size, BF16)
    f32_to_bf16(got_b, values, np.empty(values.size, np.uint32))
    with np.errstate(invalid="ignore"):
        want_b = values.astype(BF16)
    np.testing.assert_array_equal(got_b.view(np.uint16), want_b.view(np.uint16))


def _layers(rank: int) -> list[PoolParams]:
    one, two = (1,) * rank, (2,) * rank
    pads = ((0, 0),) * rank
    return [
        PoolParams("avg", "mean", one, one, one, pads),
        PoolParams("avg2", "mean", two, two, one, pads),
        PoolParams("avg3", "mean", (3,) * rank, two, one, ((1, 1),) * rank),
        PoolParams("max", "max", two, two, one, pads),
    ]


@pytest.mark.parametrize("name", [pytest.param("float16", marks=pytest.mark.slow), "bfloat16"])
def test_both_paths_on_every_half_pattern(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Averages (1x1: the conversions themselves; 2x2 and 3x3: sums rounded back) and maxima
    of all 65,536 bit patterns: the compiled path, the numpy path and numpy's own conversions
    give the same bits, NaN payloads included where at most one NaN enters a sum (bfloat16
    as openvino's CPU plugin rounds it on AVX-512: the compiled path has no other rounding;
    tests/test_isa.py covers AVX2's)."""
    pytest.importorskip("numba", reason="the compiled path needs numba")
    monkeypatch.setenv("IRPOOL_OV_ISA", "avx512_bf16")
    if name == "bfloat16" and BF16 is None:
        pytest.skip("ml_dtypes is not installed")
    dtype: Any = BF16 if name == "bfloat16" else np.dtype(name)
    x = np.random.default_rng(1).permutation(EVERY_HALF).reshape(1, 4, 128, 128).view(dtype)
    for params in _layers(2):
        p = plan(params, x.shape, "openvino", dtype=name)
        numpy_values, _ = pool(x, p, threads=1, path="numpy")
        compiled_values, _ = pool(x, p, threads=1, path="compiled")
        bits = numpy_values.view(np.uint16)
        got = compiled_values.view(np.uint16)
        if params.op in ("avg2", "avg3"):
            # where two NaNs are added, which payload (and sign) survives is the adder's choice:
            # numpy's SIMD loops and numba's code order the operands differently on some CPUs
            # (AVX-512 without AVX512_BF16). NaN positions must agree, every other bit too.
            nan = np.isnan(numpy_values.astype(np.float32))
            np.testing.assert_array_equal(np.isnan(compiled_values.astype(np.float32)), nan)
            got, bits = np.where(nan, 0, got), np.where(nan, 0, bits)
        np.testing.assert_array_equal(got, bits, err_msg=params.op)
        if params.op == "avg":  # (0 + x) / 1 as numpy computes it, then numpy's rounding
            with np.errstate(invalid="ignore"):
                wide = (np.float32(0) + x.astype(np.float32)) / np.float32(1)
                if name == "bfloat16":  # openvino's CPU plugin: subnormals as zeros of their sign
                    tiny = np.abs(wide) < np.float32(2.0**-126)
                    wide = np.where(tiny, np.copysign(np.float32(0), wide), wide)
                want = wide.astype(dtype)
            np.testing.assert_array_equal(bits, want.view(np.uint16))
