"""The compiled kernels of the pooling families (kernel/family_compiled.py, numba_family.py)
against the numpy core (kernel/family.execute), bit for bit: zero signs, NaN, infinities,
both instruction sets' lane orders, every float type."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from family_helpers import random_values
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irpool import conventions as conv
from irpool.families.reduce import ReduceParams, Reduction
from irpool.kernel.family import execute
from irpool.kernel.family_compiled import PreparedFamily, why_not

pytest.importorskip("numba")

FEW = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DTYPES = ["float32", "float16", "bfloat16", "float64"]
INTS = ["int8", "uint8", "int32", "int64"]


def _values(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, special: bool) -> Any:
    x = random_values(rng, shape, special)
    if special:
        x[rng.random(shape) < 0.1] = -0.0
        x[rng.random(shape) < 0.05] = np.inf
    if dtype == "bfloat16":
        import ml_dtypes

        return x.astype(ml_dtypes.bfloat16)
    return x.astype(dtype)


def same_bits(a: Any, b: Any) -> bool:
    """Equal shapes, dtypes and bits, zero signs included; any NaN equals any NaN (where two
    NaNs meet in an addition, which one's payload survives is LLVM's choice of operand
    order, as it is the vector unit's in numpy and in openvino: irpool models where NaN
    arises, not its payload)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.itemsize in (2, 4, 8) and a.dtype.kind not in "iub":
        kind = f"u{a.dtype.itemsize}"
        wide = np.float32 if a.dtype.itemsize <= 4 else np.float64
        nan = np.isnan(a.astype(wide)) & np.isnan(b.astype(wide))
        return bool(np.all(nan | (a.view(kind) == b.view(kind))))
    return bool(np.array_equal(a, b))


@st.composite
def reduce_cases(draw: Any) -> tuple[Any, tuple[int, ...], str, bool]:
    rank = draw(st.integers(1, 5))
    shape = [draw(st.integers(1, 5)) for _ in range(rank)]
    if draw(st.booleans()):
        shape[-1] = draw(st.integers(5, 40))  # long enough for 8 and 16 lanes
    if rank >= 2 and draw(st.booleans()):
        shape[-2] = draw(st.integers(5, 20))
    axes = tuple(draw(st.lists(st.integers(0, rank - 1), min_size=1, max_size=rank, unique=True)))
    kind = draw(st.sampled_from(["sum", "mean", "max", "l1", "l2"]))
    dtype = draw(st.sampled_from(DTYPES + INTS))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if dtype in INTS:
        x = _integers(rng, tuple(shape), dtype, draw(st.sampled_from([10.0, 300.0, 3e9])))
    else:
        x = _values(rng, tuple(shape), dtype, draw(st.booleans()))
    return x, axes, kind, draw(st.booleans())


def _integers(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, scale: float) -> Any:
    """Integers of `dtype` of about `scale` (large ones saturate 8-bit stores and leave int32)."""
    info = np.iinfo(dtype)
    return (rng.standard_normal(shape) * scale).clip(info.min, info.max).astype(dtype)


@pytest.mark.parametrize("isa", ["avx512", "avx2"])
@FEW
@given(case=reduce_cases())
def test_reductions_as_the_numpy_core(isa: str, case: Any) -> None:
    x, axes, kind, keep = case
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("IRPOOL_OV_ISA", isa)
        params = ReduceParams(op="Reduce", kind=kind, axes=axes, keep=keep)
        plan = Reduction(kind).plan(params, tuple(x.shape), x.dtype.name, conv.get("openvino"))
    prepared = PreparedFamily(plan, 1, "auto")
    expected = execute(plan, [x])
    if why_not(plan) is None:
        assert prepared.path == "compiled"
    for got, want in zip(prepared([x]), expected, strict=True):
        assert same_bits(got, want), (plan.view, plan.reduced, plan.chunk)


@pytest.mark.parametrize(
    "shape,axes",
    [
        ((1, 2048, 7, 7), (2, 3)),
        ((1, 512, 14, 14), (2, 3)),
        ((1, 256, 28, 28), (1,)),
        ((1, 96, 56, 56), (2, 3)),
        ((2, 3, 4, 5, 6), (1, 2, 4)),
    ],
)
@pytest.mark.parametrize("kind", ["mean", "max", "sum", "l2"])
def test_head_reductions(shape: tuple[int, ...], axes: tuple[int, ...], kind: str) -> None:
    x = _values(np.random.default_rng(7), shape, "float32", special=True)
    params = ReduceParams(op="Reduce", kind=kind, axes=axes, keep=True)
    plan = Reduction(kind).plan(params, shape, "float32", conv.get("openvino"))
    prepared = PreparedFamily(plan, 1, "compiled")
    assert prepared.path == "compiled" or why_not(plan) is not None
    assert same_bits(prepared([x])[0], execute(plan, [x])[0])


@pytest.mark.parametrize("isa", ["avx512", "avx2"])
@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("kind", ["mean", "max", "sum", "l2"])
def test_integer_heads(isa: str, dtype: str, kind: str) -> None:
    """Integer reductions over H, W (the plugin's stores after the tree and after the rest:
    truncation, 8-bit saturation, uint8's packing store) on the compiled path."""
    shape = (1, 40, 7, 7)
    x = _integers(np.random.default_rng(3), shape, dtype, 300.0)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("IRPOOL_OV_ISA", isa)
        params = ReduceParams(op="Reduce", kind=kind, axes=(2, 3), keep=True)
        plan = Reduction(kind).plan(params, shape, dtype, conv.get("openvino"))
    prepared = PreparedFamily(plan, 1, "compiled")
    assert prepared.path == "compiled", prepared.why
    assert same_bits(prepared([x])[0], execute(plan, [x])[0])


@st.composite
def adaptive_cases(draw: Any) -> tuple[Any, Any, str]:
    from irpool.families.adaptive import AdaptiveParams

    nd = draw(st.integers(1, 3))
    spatial = [draw(st.integers(1, 9)) for _ in range(nd)]
    sizes = tuple(draw(st.integers(1, 8)) for _ in range(nd))
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 3)), *spatial)
    reduce = draw(st.sampled_from(["mean", "max"]))
    convention = draw(st.sampled_from(["openvino", "torch"]))
    dtypes = ["float32", "float16", "int32", "int8"] if convention == "openvino" else DTYPES
    dtype = draw(st.sampled_from(dtypes))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if dtype.startswith("int"):
        x: Any = rng.integers(-100, 100, shape).astype(dtype)
    else:
        x = _values(rng, shape, dtype, draw(st.booleans()))
    indices = reduce == "max" and draw(st.booleans())
    params = AdaptiveParams(
        op="Adaptive",
        reduce=reduce,
        sizes=sizes,
        indices=reduce == "max",
        index_dtype="int32",
        indices_used=indices,
    )
    return x, params, convention


@FEW
@given(case=adaptive_cases())
def test_adaptive_as_the_numpy_core(case: Any) -> None:
    from irpool.families.adaptive import ADAPTIVE

    x, params, convention = case
    plan = ADAPTIVE.plan(params, tuple(x.shape), x.dtype.name, conv.get(convention))
    prepared = PreparedFamily(plan, 1, "auto")
    assert prepared.path == "compiled", prepared.why
    expected = execute(plan, [x])
    got = prepared([x])
    assert len(got) == len(expected)
    for a, b in zip(got, expected, strict=True):
        assert same_bits(a, b)


@st.composite
def lp_cases(draw: Any) -> tuple[Any, Any, str]:
    from irpool.families.lp import LpParams
    from irpool.geometry import PoolParams

    nd = draw(st.integers(1, 3))
    convention = draw(st.sampled_from(["onnx", "openvino", "torch"]))
    spatial = [draw(st.integers(2, 9)) for _ in range(nd)]
    kernel = tuple(draw(st.integers(1, min(3, s))) for s in spatial)
    strides = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    if convention == "torch":
        pads, dilations = ((0, 0),) * nd, (1,) * nd
    else:
        pads = tuple((draw(st.integers(0, k - 1)), draw(st.integers(0, k - 1))) for k in kernel)
        dilations = (1,) * nd
    window = None
    if draw(st.integers(0, 4)) > 0:
        window = PoolParams(
            op="LpPool",
            reduce="mean",
            window=kernel,
            strides=strides,
            dilations=dilations,
            pads=pads,
            rounding=draw(st.sampled_from(["floor", "ceil"])),
        )
    elif convention == "torch":
        convention = "openvino"
    p = draw(st.sampled_from([1.0, 2.0, 3.0, 0.5, 2.5]))
    params = LpParams(op="LpPool", p=p, window=window)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 3)), *spatial)
    x = _values(rng, shape, "float32", draw(st.booleans()))
    return x, params, convention


@pytest.mark.slow
@FEW
@given(case=lp_cases())
def test_lp_as_the_numpy_core(case: Any) -> None:
    from irpool.errors import SpecError
    from irpool.families.lp import GLOBAL_LP, LP

    x, params, convention = case
    family = LP if params.window is not None else GLOBAL_LP
    try:
        plan = family.plan(params, tuple(x.shape), "float32", conv.get(convention))
    except SpecError:
        return
    prepared = PreparedFamily(plan, 1, "auto")
    assert prepared.path == "compiled", prepared.why
    assert same_bits(prepared([x])[0], execute(plan, [x])[0])


@pytest.mark.parametrize("layout", ["tensor", "plane"])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_unpool_as_the_numpy_core(layout: str, dtype: str) -> None:
    from irpool.errors import InputError
    from irpool.families.unpool import UnpoolPlan

    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 3, 4, 5)).astype(dtype)
    out = (2, 3, 8, 10)
    size = int(np.prod(out)) if layout == "tensor" else 80
    plan = UnpoolPlan(
        op="MaxUnpool",
        convention="onnx",
        input_shape=x.shape,
        output_shape=out,
        dtype=dtype,
        compute=dtype,
        default_shape=out,
        layout=layout,
    )
    prepared = PreparedFamily(plan, 1, "auto")
    assert prepared.path == "compiled"
    idx = rng.integers(0, size, x.shape).astype(np.int64)
    idx.reshape(-1)[5] = idx.reshape(-1)[7]  # a repeated index: the later value wins
    assert same_bits(prepared([x, idx])[0], execute(plan, [x, idx])[0])
    idx.reshape(-1)[3] = size
    with pytest.raises(InputError) as mine:
        prepared([x, idx])
    with pytest.raises(InputError) as core:
        execute(plan, [x, idx])
    assert str(mine.value) == str(core.value)


LONG = settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.slow
@pytest.mark.parametrize("isa", ["avx512", "avx2"])
@LONG
@given(case=reduce_cases())
def test_reductions_long_sweep(isa: str, case: Any) -> None:
    """The reduction property above over a thousand cases per instruction set (CI)."""
    test_reductions_as_the_numpy_core.hypothesis.inner_test(isa, case)  # type: ignore[attr-defined]


@pytest.mark.slow
@LONG
@given(case=adaptive_cases())
def test_adaptive_long_sweep(case: Any) -> None:
    test_adaptive_as_the_numpy_core.hypothesis.inner_test(case)  # type: ignore[attr-defined]


@pytest.mark.slow
@LONG
@given(case=lp_cases())
def test_lp_long_sweep(case: Any) -> None:
    test_lp_as_the_numpy_core.hypothesis.inner_test(case)  # type: ignore[attr-defined]
