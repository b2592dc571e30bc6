"""The core under the `onnx` convention against onnxruntime, node by node.

A seeded sweep over AveragePool and MaxPool versions, ranks, pads, auto_pad, ceil_mode,
dilations, storage_order and dtypes.  Max values and indices must be identical; means agree
within 4 float32 ulps of the largest |input| of the window (onnxruntime's pooling kernels sum in
their own order).  Where onnxruntime refuses a node, irpool must refuse it too.  Further sweeps
pin what onnxruntime's choice of kernel decides: NaN and -inf in MaxPool (MLAS kernels and the
reference loop), the refusal of negative SAME pads, and the count_include_pad divisor of
AveragePool-7..18.
"""

from __future__ import annotations

import random
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from conftest import sweep

from irpool.errors import IrpoolError
from irpool.geometry import plan
from irpool.kernel import pool
from irpool.ops import onnx as onnx_ops
from irpool.oracles import onnxruntime_rt

pytestmark = pytest.mark.oracle

SWEEP = sweep(quick=150, full=900)
REQUIRED = SWEEP * 2 // 3


def make_case(rng: random.Random) -> dict[str, Any]:
    op = rng.choice(["AveragePool", "MaxPool"])
    opset = rng.choice([7, 10, 11, 19, 22] if op == "AveragePool" else [8, 10, 11, 12, 22])
    rank = rng.choice([1, 2, 2, 3])
    kernel = [rng.randint(1, 4) for _ in range(rank)]
    attrs: dict[str, Any] = {"kernel_shape": kernel}
    has_dil = (op == "MaxPool" and opset >= 10) or (op == "AveragePool" and opset >= 19)
    dil = [rng.choice([1, 1, 2]) for _ in range(rank)] if has_dil else [1] * rank
    if has_dil and rng.random() < 0.7:
        attrs["dilations"] = dil
    else:
        dil = [1] * rank
    if _strides_and_auto_pad(rng, attrs, rank, notset=4, pads=0.8):
        attrs["pads"] = [rng.randint(0, k - 1) for k in kernel] * 1 + [
            rng.randint(0, k - 1) for k in kernel
        ]
        if rng.random() < 0.03:
            attrs["pads"][0] = kernel[0]  # onnxruntime refuses it (D11)
    if opset >= 10 and rng.random() < 0.5:
        attrs["ceil_mode"] = 1
    if op == "AveragePool" and rng.random() < 0.5:
        attrs["count_include_pad"] = 1
    n_outputs = 1
    if op == "MaxPool" and rng.random() < 0.6:
        n_outputs = 2
        if rng.random() < 0.4:
            attrs["storage_order"] = 1
    k_eff = [(k - 1) * d + 1 for k, d in zip(kernel, dil, strict=True)]
    shape = [rng.randint(1, 2), rng.randint(1, 3)] + [rng.randint(max(1, k - 1), 9) for k in k_eff]
    dtypes = ["float32"] * 3
    if op == "MaxPool":
        dtypes += ["float64", "float16"] + (["int8", "uint8"] if opset >= 12 else [])
    return _case(op, opset, attrs, shape, rng.choice(dtypes), n_outputs)


def _strides_and_auto_pad(
    rng: random.Random, attrs: dict[str, Any], rank: int, notset: int, pads: float
) -> bool:
    """Draw strides (most of the time) and an auto_pad (NOTSET `notset` times out of `notset`
    + 3) into `attrs`; whether explicit pads are to be drawn too (with NOTSET, at the odds
    `pads`)."""
    if rng.random() < 0.8:
        attrs["strides"] = [rng.randint(1, 3) for _ in range(rank)]
    auto = rng.choice(["NOTSET"] * notset + ["SAME_UPPER", "SAME_LOWER", "VALID"])
    if auto != "NOTSET":
        attrs["auto_pad"] = auto
        return False
    return rng.random() < pads


def _case(
    op: str, opset: int, attrs: dict[str, Any], shape: list[int], dtype: str, n_outputs: int
) -> dict[str, Any]:
    return {
        "op": op,
        "opset": opset,
        "attrs": attrs,
        "shape": shape,
        "dtype": dtype,
        "n_outputs": n_outputs,
    }


def _integers(shape: list[int], dtype: np.dtype[Any], rng: np.random.Generator) -> np.ndarray:
    """Any values of an integer type."""
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)


def make_input(case: dict[str, Any], rng: np.random.Generator) -> np.ndarray:
    shape, dtype = case["shape"], np.dtype(case["dtype"])
    if dtype.kind == "f":
        x = rng.integers(-4, 5, size=shape).astype(np.float64)
        if rng.random() < 0.5:
            x += rng.standard_normal(shape)
        return x.astype(dtype)
    return _integers(shape, dtype, rng)


def irpool_run(case: dict[str, Any], x: np.ndarray) -> list[np.ndarray]:
    spec = onnx_ops.select(case["op"], "", case["opset"])
    params = onnx_ops.params(spec, case["attrs"], x.ndim, indices=case["n_outputs"] == 2)
    values, indices = pool(x, plan(params, x.shape, "onnx", dtype=x.dtype))
    return [values] + ([indices] if case["n_outputs"] == 2 and indices is not None else [])


def test_sweep_matches_onnxruntime(ort: ModuleType, onnx: ModuleType) -> None:
    rng = random.Random(7)
    nrng = np.random.default_rng(7)
    compared, refused, failures, worst = 0, {}, [], 0.0
    for _ in range(SWEEP):
        case = make_case(rng)
        x = make_input(case, nrng)
        try:
            expected = onnxruntime_rt.run_node(
                case["op"], case["attrs"], [x], case["opset"], n_outputs=case["n_outputs"]
            )
        except Exception as e:
            reason = str(e).split(":")[-1].strip()[:60]
            refused[reason] = refused.get(reason, 0) + 1
            try:
                irpool_run(case, x)
                failures.append(f"{case}: onnxruntime refused ({reason}) but irpool computed")
            except IrpoolError:
                pass
            continue
        try:
            got = irpool_run(case, x)
        except IrpoolError as e:
            failures.append(
                f"{case}: irpool refused ({e}) but onnxruntime gave {[a.shape for a in expected]}"
            )
            continue
        compared += 1
        for k, (g, e) in enumerate(zip(got, expected, strict=True)):
            if g.shape != e.shape or g.dtype != e.dtype:
                failures.append(f"{case}: output {k} {g.dtype}{g.shape} vs {e.dtype}{e.shape}")
                break
            if case["op"] == "AveragePool" and k == 0:
                scale = np.spacing(np.float32(np.abs(x).max() or 1)) * 4
                err = float(np.abs(g.astype(np.float64) - e).max(initial=0))
                worst = max(worst, err / scale * 4)
                if err > scale:
                    failures.append(f"{case}: mean differs by {err}")
            elif not np.array_equal(g, e):
                bad = tuple(np.argwhere(g != e)[0])
                failures.append(f"{case}: output {k} at {bad}: irpool {g[bad]} ort {e[bad]}")
    print(
        f"\ncompared {compared}; onnxruntime refused: {refused}; worst mean error {worst:.2f} ulp"
    )
    assert not failures, f"{len(failures)} mismatches:\n" + "\n".join(failures[:12])
    assert compared >= REQUIRED


# -- NaN and -inf in MaxPool: which kernel runs decides ------------------------------------------


def nan_case(rng: random.Random) -> dict[str, Any]:
    """A MaxPool node aimed at every onnxruntime path: MLAS global (whole-plane windows),
    vector 2-D/3-D and generic kernels, and the reference loop (Indices, dilations,
    storage_order=1, float64, integers)."""
    opset = rng.choice([7, 8, 10, 11, 12, 22])
    rank = rng.choice([1, 2, 2, 3])
    shape = [rng.randint(1, 2), rng.randint(1, 3)] + [rng.randint(1, 10) for _ in range(rank)]
    kernel = [rng.randint(1, 4) for _ in range(rank)]
    attrs: dict[str, Any] = {"kernel_shape": kernel}
    if rng.random() < 0.15:
        attrs = {"kernel_shape": shape[2:]}
    else:
        if _strides_and_auto_pad(rng, attrs, rank, notset=5, pads=0.7):
            attrs["pads"] = [rng.randint(0, k - 1) for k in kernel] * 2
        if opset >= 10 and rng.random() < 0.4:
            attrs["ceil_mode"] = 1
        if opset >= 10 and rng.random() < 0.2:
            attrs["dilations"] = [rng.choice([1, 2]) for _ in range(rank)]
    n_outputs = 2 if opset >= 8 and rng.random() < 0.3 else 1
    if opset >= 8 and rng.random() < 0.1:
        attrs["storage_order"] = 1
    dtypes = ["float32"] * 4 + ["float16"] + (["float64"] if opset >= 8 else [])
    dtypes += ["int8", "uint8"] if opset >= 12 else []
    return _case("MaxPool", opset, attrs, shape, rng.choice(dtypes), n_outputs)


def nan_input(case: dict[str, Any], rng: np.random.Generator) -> np.ndarray:
    shape, dtype = case["shape"], np.dtype(case["dtype"])
    if dtype.kind != "f":
        return _integers(shape, dtype, rng)
    x = rng.integers(-4, 5, size=shape).astype(np.float64)
    x[rng.random(shape) < rng.choice([0.05, 0.2, 0.5])] = np.nan
    x[rng.random(shape) < rng.choice([0.0, 0.1, 0.7])] = -np.inf
    return x.astype(dtype)


def test_max_nan_rules_match_onnxruntime(ort: ModuleType, onnx: ModuleType) -> None:
    """Values (NaN where onnxruntime gives NaN, -inf and -FLT_MAX as it gives them) and indices
    are identical on every path; each path is met."""
    rng = random.Random(45)
    nrng = np.random.default_rng(45)
    seen: dict[str, int] = {}
    failures = []
    for _ in range(700):
        case = nan_case(rng)
        x = nan_input(case, nrng)
        try:
            expected = onnxruntime_rt.run_node(
                "MaxPool", case["attrs"], [x], case["opset"], n_outputs=case["n_outputs"]
            )
        except Exception:
            continue
        spec = onnx_ops.select("MaxPool", "", case["opset"])
        indices = case["n_outputs"] == 2
        p = plan(
            onnx_ops.params(spec, case["attrs"], x.ndim, indices=indices),
            x.shape,
            "onnx",
            dtype=x.dtype,
        )
        path = f"{p.nan_max} {case['dtype']}"
        seen[path] = seen.get(path, 0) + 1
        got = irpool_run(case, x)
        for k, (g, e) in enumerate(zip(got, expected, strict=True)):
            if g.shape != e.shape or not np.array_equal(g, e, equal_nan=k == 0):
                failures.append(f"{path} {case}: output {k}\n  irpool {g}\n  ort    {e}")
    print(f"\n{seen}")
    assert not failures, f"{len(failures)} mismatches:\n" + "\n".join(failures[:6])
    for policy in ("mlas_global", "mlas_2d", "mlas_3d", "mlas_generic", "first"):
        for dtype in ("float32", "float16"):
            assert seen.get(f"{policy} {dtype}", 0) >= 5, (policy, dtype, seen)
    assert seen.get("mlas_2d float64", 0) >= 5  # float64 takes the reference loop


def test_nan_rules_in_numbers(ort: ModuleType, onnx: ModuleType) -> None:
    """The rules on a few rows, as measured (docs/semantics.md): the same taps give different
    maxima on different kernels.  Each row: attributes, input, without Indices, with them."""
    nan = np.nan
    row = [5, nan, 1, 2]
    cases = [
        # 1-D, generic loop (std::max from lowest()): a NaN never wins
        ({"kernel_shape": [2]}, [1, 1, 4], row, [5, 1, 2], [5, nan, 2]),
        # 2-D vector kernel: maxps restarts after a NaN; a last NaN tap is the result
        ({"kernel_shape": [1, 4], "pads": [0, 1, 0, 0]}, [1, 1, 1, 4], row, [1, 2], [5, 5]),
        ({"kernel_shape": [1, 2], "strides": [1, 2]}, [1, 1, 1, 4], row, [nan, 2], [5, 2]),
        (
            {"kernel_shape": [1, 3]},
            [1, 1, 1, 7],
            [nan, 1, 2, 3, 4, nan, 6],
            [2, 3, 4, nan, 6],
            [nan, 3, 4, 4, 6],
        ),
        # a column of the 2-D kernel past the last multiple of 4 keeps std::max from its top
        ({"kernel_shape": [4, 1], "pads": [1, 0, 0, 0]}, [1, 1, 4, 1], row, [5, 5], [5, 5]),
        # global kernel: four lanes with maxps, combined as maxps(maxps(l0, l2), maxps(l1, l3))
        ({"kernel_shape": [1, 4]}, [1, 1, 1, 4], row, [5], [5]),
    ]
    for attrs, shape, values, plain, with_indices in cases:
        x = np.array(values, np.float32).reshape(shape)
        for n, want in ((1, plain), (2, with_indices)):
            expected = onnxruntime_rt.run_node("MaxPool", attrs, [x], 12, n_outputs=n)[0]
            np.testing.assert_array_equal(expected.ravel(), want, err_msg=f"{attrs} {n}")
            case = {"op": "MaxPool", "opset": 12, "attrs": attrs, "n_outputs": n}
            np.testing.assert_array_equal(irpool_run(case, x)[0].ravel(), want, err_msg=str(attrs))


# -- refusals --------------------------------------------------------------------------------


def _takes(op: str, opset: int, dtype: str, dilation: int) -> bool:
    """Whether the node exists with this element type and dilation at all."""
    if op == "AveragePool":
        return dtype in ("float32", "float16") and (dilation == 1 or opset >= 19)
    return (dtype != "int8" or opset >= 12) and (dilation == 1 or opset >= 10)


def test_negative_same_pads_refused_exactly_where_onnxruntime_refuses(
    ort: ModuleType, onnx: ModuleType
) -> None:
    """SAME_* pads computed from a kernel smaller than the stride can be negative: onnxruntime's
    MLAS paths refuse them (AveragePool-7..18 unless ceil_mode and count_include_pad, MaxPool
    without Indices or dilations, float data); every other path computes (D5)."""
    import itertools

    refused = computed = 0
    failures = []
    grid = itertools.product(
        [("AveragePool", v) for v in (7, 10, 11, 19, 22)] + [("MaxPool", v) for v in (8, 11, 12)],
        [(5, 1, 3), (6, 2, 4), (7, 1, 2), (4, 3, 2), (9, 2, 4)],  # n, kernel, stride
        [1, 2],  # dilation
        [0, 1],  # ceil_mode
        [0, 1],  # count_include_pad or Indices
        ["SAME_UPPER", "SAME_LOWER"],
        ["float32", "float16", "float64", "int8"],
        [1, 2],  # rank
    )
    for (op, opset), (n, k, s), d, ceil, extra, auto, dtype, rank in grid:
        if not _takes(op, opset, dtype, d):
            continue
        attrs: dict[str, Any] = {
            "kernel_shape": [k] + [1] * (rank - 1),
            "strides": [s] + [1] * (rank - 1),
            "auto_pad": auto,
        }
        if d > 1:
            attrs["dilations"] = [d] + [1] * (rank - 1)
        if ceil and opset >= 10:
            attrs["ceil_mode"] = 1
        if extra and op == "AveragePool":
            attrs["count_include_pad"] = 1
        case = {
            "op": op,
            "opset": opset,
            "attrs": attrs,
            "n_outputs": 1 + (op == "MaxPool") * extra,
        }
        x = np.arange(n * 2 ** (rank - 1)).reshape([1, 1, n] + [2] * (rank - 1)).astype(dtype)
        try:
            onnxruntime_rt.run_node(op, attrs, [x], opset, n_outputs=case["n_outputs"])
            ort_refuses = None
        except Exception as e:
            ort_refuses = str(e)
        try:
            irpool_run(case, x)
            ours = None
        except IrpoolError as e:
            ours = e.message
        if ort_refuses is not None and "non-negative" in ort_refuses:
            refused += 1
            if ours is None or "negative pads from SAME_* with kernel < stride" not in ours:
                failures.append(f"{case} {dtype}: onnxruntime refuses, irpool: {ours}")
            elif "D5" not in ours:
                failures.append(f"{case}: the message names no D5: {ours}")
        elif ort_refuses is None:
            computed += 1
            if ours is not None:
                failures.append(f"{case} {dtype}: onnxruntime computes, irpool refuses: {ours}")
    assert not failures, "\n".join(failures[:8])
    assert refused >= 100 and computed >= 300, (refused, computed)


def test_pads_not_smaller_than_kernel_refused(ort: ModuleType, onnx: ModuleType) -> None:
    """onnxruntime refuses a written pad >= kernel for every op and path, with auto_pad too (D11)."""
    x = np.arange(8, dtype=np.float32).reshape(1, 1, 8)
    for op, opset, attrs in [
        ("MaxPool", 12, {"kernel_shape": [2], "pads": [2, 0]}),
        ("MaxPool", 12, {"kernel_shape": [2], "pads": [0, 2], "dilations": [3]}),
        ("AveragePool", 19, {"kernel_shape": [2], "pads": [3, 3], "auto_pad": "VALID"}),
        ("AveragePool", 7, {"kernel_shape": [2], "pads": [2, 0]}),
    ]:
        with pytest.raises(Exception, match="Pad should be smaller than kernel"):
            onnxruntime_rt.run_node(op, attrs, [x], opset)
        with pytest.raises(IrpoolError, match=r"Pad should be smaller than kernel.*D11"):
            irpool_run({"op": op, "opset": opset, "attrs": attrs, "n_outputs": 1}, x)


# -- AveragePool-7..18: the MLAS divisor ---------------------------------------------------------


@pytest.mark.parametrize("opset", [7, 10, 11, 19, 22])
def test_count_include_pad_divisor_by_version(
    ort: ModuleType, onnx: ModuleType, opset: int
) -> None:
    """Ones, L=3, kernel 4, stride 3: one window reaching past the input and its pads.
    AveragePool-7..18 (MLAS) divide by the kernel, 3/4; 19+ by the taps up to the declared pads,
    3/3; with ceil_mode=1 (not in AveragePool-7) 7..18 go to the opset-19 loop as well."""
    x = np.ones((1, 1, 3), np.float32)
    for ceil in (0, 1) if opset >= 10 else (0,):
        attrs = {"kernel_shape": [4], "strides": [3], "count_include_pad": 1, "ceil_mode": ceil}
        if opset < 10:
            del attrs["ceil_mode"]
        want = 0.75 if opset < 19 and not ceil else 1.0
        expected = onnxruntime_rt.run_node("AveragePool", attrs, [x], opset)[0]
        np.testing.assert_array_equal(expected.ravel(), [want])
        got = irpool_run({"op": "AveragePool", "opset": opset, "attrs": attrs, "n_outputs": 1}, x)
        np.testing.assert_array_equal(got[0], expected)
