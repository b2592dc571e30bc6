"""The core under the `onnx` convention against onnxruntime, node by node.

A seeded sweep over AveragePool and MaxPool versions, ranks, pads, auto_pad, ceil_mode,
dilations, storage_order and dtypes.  Max values and indices must be identical; means agree
within 4 float32 ulps of the largest |input| of the window (onnxruntime's pooling kernels sum in
their own order).
"""

from __future__ import annotations

import random
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from irpool.errors import IrpoolError
from irpool.geometry import plan
from irpool.kernel import pool
from irpool.ops import onnx as onnx_ops
from irpool.oracles import onnxruntime_rt

pytestmark = pytest.mark.oracle

SWEEP = 900
REQUIRED = 600


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
    if rng.random() < 0.8:
        attrs["strides"] = [rng.randint(1, 3) for _ in range(rank)]
    auto = rng.choice(["NOTSET"] * 4 + ["SAME_UPPER", "SAME_LOWER", "VALID"])
    if auto != "NOTSET":
        attrs["auto_pad"] = auto
    elif rng.random() < 0.8:
        attrs["pads"] = [rng.randint(0, k - 1) for k in kernel] * 1 + [
            rng.randint(0, k - 1) for k in kernel
        ]
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
    return {
        "op": op,
        "opset": opset,
        "attrs": attrs,
        "shape": shape,
        "dtype": rng.choice(dtypes),
        "n_outputs": n_outputs,
    }


def make_input(case: dict[str, Any], rng: np.random.Generator) -> np.ndarray:
    shape, dtype = case["shape"], np.dtype(case["dtype"])
    if dtype.kind == "f":
        x = rng.integers(-4, 5, size=shape).astype(np.float64)
        if rng.random() < 0.5:
            x += rng.standard_normal(shape)
        return x.astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)


def oversized_include_pad(case: dict[str, Any]) -> bool:
    """AveragePool-7..18 with count_include_pad and a window larger than the padded input: the
    MLAS path of onnxruntime counts the excess as padding (see docs/semantics.md, D16)."""
    attrs = case["attrs"]
    if case["op"] != "AveragePool" or case["opset"] >= 19 or not attrs.get("count_include_pad"):
        return False
    n = len(attrs["kernel_shape"])
    pads = attrs.get("pads", [0] * 2 * n)
    if attrs.get("auto_pad", "NOTSET") != "NOTSET":
        return True
    return any(
        k > size + pads[i] + pads[n + i]
        for i, (k, size) in enumerate(zip(attrs["kernel_shape"], case["shape"][2:], strict=True))
    )


def irpool_run(case: dict[str, Any], x: np.ndarray) -> list[np.ndarray]:
    spec = onnx_ops.select(case["op"], "", case["opset"])
    params = onnx_ops.params(spec, case["attrs"], x.ndim, indices=case["n_outputs"] == 2)
    values, indices = pool(x, plan(params, x.shape, "onnx"))
    return [values] + ([indices] if case["n_outputs"] == 2 and indices is not None else [])


def test_sweep_matches_onnxruntime(ort: ModuleType, onnx: ModuleType) -> None:
    rng = random.Random(7)
    nrng = np.random.default_rng(7)
    compared, refused, failures, worst = 0, {}, [], 0.0
    for _ in range(SWEEP):
        case = make_case(rng)
        x = make_input(case, nrng)
        if oversized_include_pad(case):
            continue
        try:
            expected = onnxruntime_rt.run_node(
                case["op"], case["attrs"], [x], case["opset"], n_outputs=case["n_outputs"]
            )
        except Exception as e:
            reason = str(e).split(":")[-1].strip()[:60]
            refused[reason] = refused.get(reason, 0) + 1
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
