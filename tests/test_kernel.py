"""The kernel against the brute-force reference, over random geometries, dtypes and conventions."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
import reference
from hypothesis import assume, given
from hypothesis import strategies as st

from irpool.conventions import CONVENTIONS
from irpool.errors import IrpoolError, SpecError
from irpool.geometry import PoolParams, PoolPlan, for_dtype, plan
from irpool.kernel import pool
from irpool.kernel.zero_sign import SCAN_RULES
from irpool.model import bfloat16

BF16 = bfloat16()
FLOATS = ["float32", "float64", "float16"] + (["bfloat16"] if BF16 is not None else [])
INTS = ["int8", "uint8", "int32", "int64"]


def _dtype(name: str) -> np.dtype[Any]:
    return BF16 if name == "bfloat16" else np.dtype(name)  # type: ignore[return-value]


@pytest.fixture(autouse=True, scope="module")
def _numpy_core() -> Iterator[None]:
    """These tests are about the numpy core, the reference path (IRPOOL_KERNEL=numpy);
    test_kernel_compiled.py holds the compiled path to it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("IRPOOL_KERNEL", "numpy")
        yield


@st.composite
def plans(draw: st.DrawFn, reduce: str | None = None) -> PoolPlan:
    rank = draw(st.integers(1, 3))
    window = tuple(draw(st.integers(1, 4)) for _ in range(rank))
    strides = tuple(draw(st.integers(1, 3)) for _ in range(rank))
    dilations = tuple(draw(st.sampled_from([1, 1, 2, 3])) for _ in range(rank))
    pads = tuple((draw(st.integers(0, 3)), draw(st.integers(0, 3))) for _ in range(rank))
    red = reduce or draw(st.sampled_from(["max", "mean"]))
    params = PoolParams(
        op="test",
        reduce=red,  # type: ignore[arg-type]
        window=window,
        strides=strides,
        dilations=dilations,
        pads=pads,
        auto_pad=draw(
            st.sampled_from(["explicit", "explicit", "same_upper", "same_lower", "valid"])
        ),
        rounding=draw(st.sampled_from(["floor", "ceil", "ceil_torch"])),
        count_pad=draw(st.booleans()),
        indices=red == "max" and draw(st.booleans()),
        index_axis=draw(st.sampled_from([0, 1, 2, 2 + rank - 1])),
        column_major=draw(st.booleans()),
        index_dtype=draw(st.sampled_from(["int64", "int32"])),
        divisor_override=draw(st.sampled_from([None, None, "full"])),
        onnxruntime_mlas=draw(st.booleans()),
    )
    shape = (
        draw(st.integers(1, 2)),
        draw(st.integers(1, 3)),
        *(draw(st.integers(1, 7)) for _ in range(rank)),
    )
    convention = draw(st.sampled_from(sorted(CONVENTIONS)))
    try:
        return plan(params, shape, convention, indices_used=draw(st.booleans()))
    except IrpoolError:
        assume(False)
        raise


@st.composite
def inputs(draw: st.DrawFn, p: PoolPlan, dtype_name: str) -> np.ndarray:
    dtype = _dtype(dtype_name)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    shape = p.input_shape
    if dtype_name in FLOATS:
        x = rng.integers(-3, 4, size=shape).astype(np.float64)
        if draw(st.booleans()):
            x = x + rng.standard_normal(shape) * 100
        special = draw(st.sampled_from([None, np.nan, np.inf, -np.inf, 1e300, -3.4028235e38]))
        if special is not None:
            x[rng.random(shape) < 0.2] = special
        with np.errstate(over="ignore"):  # 1e300 becomes inf in narrower types, on purpose
            return x.astype(dtype)
    info = np.iinfo(dtype)
    lo, hi = (info.min, info.max) if draw(st.booleans()) else (max(info.min, -3), 4)
    return rng.integers(lo, hi, size=shape, endpoint=False, dtype=np.int64).astype(dtype)


@given(data=st.data())
def test_kernel_matches_reference(data: st.DataObject) -> None:
    p = data.draw(plans())
    name = data.draw(st.sampled_from(FLOATS + INTS))
    p = for_dtype(p, name)
    x = data.draw(inputs(p, name))
    if p.refusal(name) is not None:
        with pytest.raises(SpecError, match="onnxruntime refuses"):
            pool(x, p)
        return
    values, indices = pool(x, p)
    expected, expected_idx = reference.pool(x, p)
    assert values.dtype == x.dtype and values.shape == p.output_shape
    np.testing.assert_array_equal(
        values.astype(np.float64), expected.astype(np.float64), err_msg=str(p)
    )
    if expected_idx is None:
        assert indices is None
    else:
        assert indices is not None and indices.dtype == np.dtype(p.index_dtype)
        np.testing.assert_array_equal(indices, expected_idx, err_msg=str(p))


@given(data=st.data())
def test_window_one_stride_one_is_identity(data: st.DataObject) -> None:
    p = data.draw(plans())
    ident = replace(
        p,
        axes=tuple(
            replace(a, window=1, stride=1, dilation=1, pad_begin=0, pad_end=0, out=a.size)
            for a in p.axes
        ),
        divisor="in_input",
        float_refusal=None,
    )
    seed = data.draw(st.integers(0, 2**32 - 1))
    x = np.random.default_rng(seed).standard_normal(ident.input_shape).astype(np.float32)
    values, _ = pool(x, ident)
    np.testing.assert_array_equal(values, x)


def test_constant_input_gives_the_constant_for_excluded_pad_means() -> None:
    params = PoolParams("t", "mean", (3, 3), (2, 2), (1, 1), ((1, 1), (1, 1)), rounding="ceil")
    p = plan(params, (2, 3, 7, 8), "openvino")
    x = np.full(p.input_shape, 2.5, np.float32)
    values, _ = pool(x, p)
    assert np.all(values == 2.5)


@pytest.mark.parametrize("name", FLOATS + INTS)
def test_dtypes_keep_their_type(name: str) -> None:
    params = PoolParams("t", "max", (2,), (2,), (1,), ((0, 0),), indices=True)
    p = plan(params, (1, 2, 6), "openvino", dtype=name)
    x = np.arange(12).reshape(1, 2, 6).astype(_dtype(name))
    values, idx = pool(x, p)
    assert values.dtype == x.dtype
    np.testing.assert_array_equal(values.astype(np.int64), [[[1, 3, 5], [7, 9, 11]]])
    np.testing.assert_array_equal(idx, [[[1, 3, 5], [7, 9, 11]]])


@given(data=st.data())
def test_tiny_chunks_row_blocks_and_threads_change_nothing(data: st.DataObject) -> None:
    """Chunks of planes, blocks of rows and threads only split the work."""
    import irpool.kernel as kernel

    p = data.draw(plans())
    name = data.draw(st.sampled_from(["float32", "int32", "float16"]))
    assume(p.refusal(name) is None)
    p = for_dtype(p, name)
    x = data.draw(inputs(p, name))
    expected, expected_idx = pool(x, p, threads=1)
    saved = (kernel.CHUNK_BYTES, kernel.PARALLEL_BYTES)
    try:
        kernel.CHUNK_BYTES, kernel.PARALLEL_BYTES = data.draw(st.sampled_from([1, 16, 64])), 0
        values, indices = pool(x, p, threads=2)
    finally:
        kernel.CHUNK_BYTES, kernel.PARALLEL_BYTES = saved
    np.testing.assert_array_equal(values, expected)
    if expected_idx is not None:
        np.testing.assert_array_equal(indices, expected_idx)


@st.composite
def mlas_plans(draw: st.DrawFn) -> PoolPlan:
    """MaxPool geometries onnxruntime runs through MLAS (no Indices, no dilation), reaching
    each of its kernels: global windows, 2-D and 3-D vector ones (last stride <= 2), the
    generic loop (1-D, a last stride of 3)."""
    rank = draw(st.integers(1, 3))
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    shape += tuple(draw(st.integers(1, 9)) for _ in range(rank))
    if draw(st.integers(0, 4)) == 0:
        window, strides, pads = shape[2:], (1,) * rank, ((0, 0),) * rank
    else:
        window = tuple(draw(st.integers(1, 4)) for _ in range(rank))
        strides = tuple(draw(st.integers(1, 3)) for _ in range(rank))
        pads = tuple((draw(st.integers(0, k - 1)), draw(st.integers(0, k - 1))) for k in window)
    params = PoolParams(
        "MaxPool-12",
        "max",
        window,
        strides,
        (1,) * rank,
        pads,
        rounding=draw(st.sampled_from(["floor", "ceil"])),
        onnxruntime_mlas=True,
    )
    try:
        return plan(params, shape, "onnx")
    except IrpoolError:
        assume(False)
        raise


@given(data=st.data())
def test_mlas_nan_rules_match_the_loop_transcription(data: st.DataObject) -> None:
    """NaN, -inf and lowest() as each MLAS max kernel meets them, against the loops of
    tests/reference.py; float64 takes onnxruntime's reference loop instead."""
    p = data.draw(mlas_plans())
    assert p.nan_max.startswith("mlas_")
    name = data.draw(st.sampled_from(["float32", "float32", "float16", "float64"]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = rng.integers(-4, 5, size=p.input_shape).astype(np.float64)
    share = data.draw(st.sampled_from([0.05, 0.2, 0.5, 0.9]))
    x[rng.random(p.input_shape) < share] = np.nan
    x[rng.random(p.input_shape) < data.draw(st.sampled_from([0.0, 0.1, 0.6]))] = -np.inf
    x = x.astype(name)
    values, indices = pool(x, for_dtype(p, name))
    expected, _ = reference.pool(x, p)
    assert indices is None
    np.testing.assert_array_equal(values, expected.astype(x.dtype), err_msg=str(p))


HALF_GRID = [
    pytest.param(
        name,
        indices,
        convention,
        id=f"{name}-{convention}-{'indices' if indices else 'values'}",
        # the reference takes ~9 s of CPU per case: the default run keeps one (float16, openvino's
        # bit-exact rule, values and indices); the other dtype, conventions and the values-only
        # path are slow
        marks=[]
        if (name, indices, convention) == ("float16", True, "openvino")
        else [pytest.mark.slow],
    )
    for name in ("float16", "bfloat16")
    for indices in (False, True)
    for convention in ("openvino", "onnx", "torch")
]


@pytest.mark.parametrize(("name", "indices", "convention"), HALF_GRID)
def test_half_max_on_every_bit_pattern(name: str, indices: bool, convention: str) -> None:
    """Every one of the 65,536 bit patterns (both zeros, subnormals, infinities, NaN of either
    sign) against the reference; openvino's maxima are taken on int16 keys, bit for bit."""
    if name == "bfloat16" and BF16 is None:
        pytest.skip("ml_dtypes is not installed")
    rng = np.random.default_rng(3)
    bits = rng.permutation(np.arange(1 << 16, dtype=np.uint32).astype(np.uint16))
    x = bits.reshape(1, 4, 128, 128).view(_dtype(name))
    params = PoolParams("MaxPool", "max", (3, 2), (2, 2), (1, 1), ((1, 1), (0, 1)), indices=indices)
    p = plan(params, x.shape, convention, dtype=x.dtype)
    values, idx = pool(x, p)
    with np.errstate(invalid="ignore"):  # the reference's casts of NaN
        expected, expected_idx = reference.pool(x, p)
    if convention == "openvino":  # no NaN wins: the bits themselves
        np.testing.assert_array_equal(values.view(np.uint16), expected.view(np.uint16))
    else:  # a NaN maximum goes through float32, which does not keep its payload
        np.testing.assert_array_equal(values.astype(np.float64), expected.astype(np.float64))
    if indices:
        np.testing.assert_array_equal(idx, expected_idx)


@given(data=st.data())
def test_zero_maxima_keep_the_first_zero_taps_sign(data: st.DataObject) -> None:
    """openvino, onnxruntime's loop and PyTorch keep the first maximal tap in row-major order,
    so a maximum of +0.0/-0.0 ties has the sign of the window's first zero tap, bit for bit
    (the reference scans the taps in that order)."""
    p = data.draw(plans(reduce="max"))
    name = data.draw(st.sampled_from(FLOATS))
    p = for_dtype(p, name)
    assume(p.refusal(name) is None and p.nan_rule in SCAN_RULES)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    ties = np.array([0.0, -0.0, 0.0, -0.0, -1.0, np.nan], np.float32)
    x = rng.choice(ties, size=p.input_shape).astype(_dtype(name))
    values, _ = pool(x, p)
    with np.errstate(invalid="ignore"):
        expected, _ = reference.pool(x, p)
    expected = expected.astype(x.dtype)
    nan = np.isnan(expected.astype(np.float32))
    assert np.array_equal(np.isnan(values.astype(np.float32)), nan)
    bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize]
    same = values.view(bits) == expected.view(bits)
    assert (same | nan).all(), f"{p}: {values[~(same | nan)][:4]} vs {expected[~(same | nan)][:4]}"


@st.composite
def eigen_plans(draw: st.DrawFn) -> PoolPlan:
    """tf convention 3-D max pools as TensorFlow runs them without oneDNN (the eigen_3d rule):
    SAME (pads that can be negative) or VALID, 1 to 20 channels, up to 64 taps."""
    window = tuple(draw(st.integers(1, 4)) for _ in range(3))
    strides = tuple(draw(st.integers(1, 5)) for _ in range(3))
    auto_pad = draw(st.sampled_from(["same_upper", "valid"]))
    spatial = tuple(draw(st.integers(k if auto_pad == "valid" else 1, 7)) for k in window)
    params = PoolParams("MaxPool", "max", window, strides, (1, 1, 1), ((0, 0),) * 3, auto_pad)
    shape = (draw(st.integers(1, 2)), draw(st.sampled_from([1, 3, 8, 9, 12, 16, 17, 20])), *spatial)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TF_ENABLE_ONEDNN_OPTS", "0")
        return plan(params, shape, "tf")


@given(data=st.data())
def test_eigen_3d_rule_matches_the_loop_transcription(data: st.DataObject) -> None:
    """NaN, -inf, lowest() and both zeros as TensorFlow's CuboidMaxPooling meets them (in
    packets of 8 channels and one at a time), against tests/reference.py, bit for bit."""
    import platform
    import sys

    if sys.platform != "linux" or platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("irpool models TensorFlow without oneDNN on Linux x86 only")
    p = data.draw(eigen_plans())
    assert p.nan_max == "eigen_3d"
    name = data.draw(st.sampled_from(FLOATS))
    p = for_dtype(p, name)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = rng.integers(-2, 3, size=p.input_shape).astype(np.float32)
    specials = [np.nan, -np.inf, -0.0, 0.0, -3.4028235e38]
    for special in data.draw(st.lists(st.sampled_from(specials), max_size=4)):
        x[rng.random(p.input_shape) < data.draw(st.sampled_from([0.1, 0.4, 0.8]))] = special
    with np.errstate(over="ignore"):
        x = x.astype(_dtype(name))
    values, indices = pool(x, p)
    with np.errstate(invalid="ignore"):
        expected, _ = reference.pool(x, p)
    expected = expected.astype(x.dtype)
    assert indices is None
    nan = np.isnan(expected.astype(np.float32))
    assert np.array_equal(np.isnan(values.astype(np.float32)), nan), str(p)
    bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize]
    same = values.view(bits) == expected.view(bits)
    assert (same | nan).all(), f"{p}: {values[~(same | nan)][:4]} vs {expected[~(same | nan)][:4]}"
