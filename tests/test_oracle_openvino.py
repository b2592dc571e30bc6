"""The core against openvino's CPU plugin (INFERENCE_PRECISION_HINT=f32), layer by layer.

A seeded sweep writes a one-layer IR (Parameter -> pooling layer -> Results) for every
configuration, runs it in openvino and in irpool (reader -> op table -> plan -> kernel) and
compares: output dtypes and shapes equal, values bit-identical (float16 and bfloat16 included:
the kernel sums in openvino's order and rounds once), indices exactly.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from conftest import sweep

from irpool.frontends.ir_writer import NetBuilder
from irpool.frontends.ir_xml import parse_text
from irpool.geometry import plan
from irpool.kernel import pool
from irpool.model import bfloat16
from irpool.oracles import openvino_rt
from irpool.shapes import infer

pytestmark = pytest.mark.oracle

BF16 = bfloat16()
SWEEP = sweep(quick=150, full=1400)
REQUIRED = SWEEP * 5 // 7
"""At least this many of the random cases openvino accepts and irpool compares."""


@dataclass(frozen=True)
class Case:
    family: str
    opset: int
    dtype: str
    shape: tuple[int, ...]
    data: dict[str, str]
    indices_result: bool
    seed: int

    def describe(self) -> str:
        return f"{self.family}-opset{self.opset} {self.dtype} {list(self.shape)} {self.data}"


def _ints(values: list[int]) -> str:
    return ", ".join(map(str, values))


def make_case(rng: random.Random, seed: int) -> Case:
    family = rng.choice(["AvgPool", "MaxPool"])
    opset = rng.choice([1, 8, 14, 16] if family == "MaxPool" else [1, 14, 16])
    if family == "MaxPool":
        dtypes = ["f32"] * 4 + ["f16"] * 2 + ["i8", "u8", "i32", "f64", "i64"]
    else:
        dtypes = ["f32"] * 4 + ["f16"] * 2 + ["i8", "u8", "i32", "f64", "i64"]
    if BF16 is not None:
        dtypes.append("bf16")
    dtype = rng.choice(dtypes)
    rank = rng.choice([1, 2, 2, 3])
    kernel = [rng.randint(1, 4) for _ in range(rank)]
    dil = [rng.choice([1, 1, 2, 3]) for _ in range(rank)]
    has_dil = (family == "MaxPool" and opset >= 8) or (family == "AvgPool" and opset >= 16)
    if not has_dil:
        dil = [1] * rank
    # mostly inputs the dilated window fits in; sometimes smaller ones (refused or padded)
    sizes = [
        rng.randint(max(1, (k - 1) * d + 1 - 2 * rng.randint(0, 1)), 10)
        for k, d in zip(kernel, dil, strict=True)
    ]
    shape = (rng.randint(1, 2), rng.randint(1, 3), *sizes)
    exclude = rng.random() < 0.5
    k_eff = [(k - 1) * d + 1 for k, d in zip(kernel, dil, strict=True)]
    limit = [k - 1 if (family == "AvgPool" and exclude) else k + 1 for k in k_eff]
    data = {
        "strides": _ints([rng.randint(1, 3) for _ in range(rank)]),
        "pads_begin": _ints([rng.randint(0, min(3, lim)) for lim in limit]),
        "pads_end": _ints([rng.randint(0, min(3, lim)) for lim in limit]),
        "kernel": _ints(kernel),
        "rounding_type": rng.choice(["floor", "ceil"] + (["ceil_torch"] if opset >= 14 else [])),
        "auto_pad": rng.choice(["explicit"] * 4 + ["same_upper", "same_lower", "valid"]),
    }
    if family == "AvgPool":
        data["exclude-pad"] = "true" if exclude else "false"
    if has_dil:
        data["dilations"] = _ints(dil)
    indices_result = False
    if family == "MaxPool" and opset >= 8:
        data["index_element_type"] = rng.choice(["i32", "i64"])
        data["axis"] = str(rng.choice([0, 0, 1, 2, -1, -len(shape)]))
        indices_result = rng.random() < 0.7
    return Case(family, opset, dtype, shape, data, indices_result, seed)


def make_input(case: Case) -> np.ndarray:
    rng = np.random.default_rng(case.seed)
    shape = case.shape
    if case.dtype in ("f32", "f16", "f64", "bf16"):
        x = rng.integers(-4, 5, size=shape).astype(np.float64)
        if rng.random() < 0.6:
            x += rng.standard_normal(shape) * 10
        if rng.random() < 0.15:
            x[rng.random(shape) < 0.2] = rng.choice([np.nan, -np.inf, np.inf])
        name = {"f32": "float32", "f16": "float16", "f64": "float64"}.get(case.dtype)
        return x.astype(BF16 if case.dtype == "bf16" else name)
    info = np.iinfo({"i8": np.int8, "u8": np.uint8, "i32": np.int32, "i64": np.int64}[case.dtype])
    if rng.random() < 0.5:
        lo, hi = max(info.min, -3), min(info.max, 4)
    else:
        lo, hi = max(info.min, -(2**20)), min(info.max, 2**20)
    return rng.integers(lo, hi, size=shape, endpoint=True).astype(info.dtype)


def build_xml(case: Case) -> str:
    net = NetBuilder("oracle")
    x = net.parameter("x", case.shape, case.dtype)
    rank = len(case.shape)
    outs: list[tuple[Any, str]] = [((-1,) * rank, case.dtype)]
    if case.family == "MaxPool" and case.opset >= 8:
        outs.append(((-1,) * rank, case.data["index_element_type"]))
    refs = net.op(case.family, f"opset{case.opset}", "pool", case.data, [x], outs)
    net.result("values", refs[0])
    if case.indices_result:
        net.result("indices", refs[1])
    return net.xml()


def run_openvino(ov: ModuleType, xml: str, x: np.ndarray) -> list[np.ndarray] | str:
    try:
        compiled = openvino_rt.compile_model(openvino_rt.read_xml(xml))
    except Exception as e:  # openvino refuses the configuration on CPU
        return str(e).strip().splitlines()[-1][:120]
    return openvino_rt.infer(compiled, [x])


def run_irpool(xml: str, x: np.ndarray, want_indices: bool) -> list[np.ndarray]:
    layer = infer(parse_text(xml, "case.xml")).pooling[0]
    values, indices = pool(x, plan(layer.params, x.shape, "openvino", dtype=x.dtype))
    return [values] + ([indices] if want_indices and indices is not None else [])


def compare(case: Case, got: list[np.ndarray], expected: list[np.ndarray]) -> str | None:
    for k, (g, e) in enumerate(zip(got, expected, strict=True)):
        if g.dtype != e.dtype:
            return f"output {k}: dtype {g.dtype} vs openvino {e.dtype}"
        if g.shape != e.shape:
            return f"output {k}: shape {g.shape} vs openvino {e.shape}"
        g64, e64 = g.astype(np.float64), e.astype(np.float64)
        same = (g64 == e64) | (np.isnan(g64) & np.isnan(e64))
        if not same.all():
            bad = tuple(np.argwhere(~same)[0])
            return f"output {k}: at {bad} irpool {g[bad]} openvino {e[bad]}"
    return None


def test_sweep_matches_openvino_cpu(ov: ModuleType) -> None:
    rng = random.Random(20261122)
    compared, refused, failures = 0, {}, []
    by_kind: dict[str, int] = {}
    for i in range(SWEEP):
        case = make_case(rng, i)
        xml = build_xml(case)
        x = make_input(case)
        expected = run_openvino(ov, xml, x)
        if isinstance(expected, str):
            reason = expected.split(" (dim")[0].split(" for node")[0].split(" for op")[0]
            refused[reason] = refused.get(reason, 0) + 1
            continue
        got = run_irpool(xml, x, case.indices_result)
        problem = compare(case, got, expected)
        compared += 1
        key = f"{case.family}-{case.opset} {case.dtype}"
        by_kind[key] = by_kind.get(key, 0) + 1
        if problem:
            failures.append(f"{case.describe()} seed={case.seed}: {problem}")
    print(f"\ncompared {compared}, refused by openvino: {refused}")
    print("by op/dtype:", dict(sorted(by_kind.items())))
    assert not failures, f"{len(failures)} mismatches:\n" + "\n".join(failures[:15])
    assert compared >= REQUIRED


@pytest.mark.parametrize("path", ["numpy", "compiled"])
@pytest.mark.parametrize("shape", [(1, 1, 1), (2, 3, 4), (1, 2, 3, 3)])
def test_a_mean_of_negative_zeros_is_positive_zero(
    ov: ModuleType, shape: tuple[int, ...], path: str
) -> None:
    """openvino sums a window from +0.0, so a window of only -0.0 averages to +0.0; the
    window covers the whole plane here (the numpy core's global-window path)."""
    net = NetBuilder("zeros")
    x = net.parameter("x", shape, "f32")
    spatial = shape[2:]
    data = {
        "kernel": _ints(list(spatial)),
        "strides": _ints([1] * len(spatial)),
        "pads_begin": _ints([0] * len(spatial)),
        "pads_end": _ints([0] * len(spatial)),
        "exclude-pad": "true",
        "rounding_type": "floor",
    }
    refs = net.op("AvgPool", "opset1", "pool", data, [x], [((-1,) * len(shape), "f32")])
    net.result("values", refs[0])
    xml = net.xml()
    data_in = np.full(shape, -0.0, np.float32)
    expected = run_openvino(ov, xml, data_in)
    assert not isinstance(expected, str), expected
    layer = infer(parse_text(xml, "zeros.xml")).pooling[0]
    got, _ = pool(data_in, plan(layer.params, shape, "openvino", dtype="float32"), path=path)
    assert np.array_equal(np.signbit(got), np.signbit(expected[0]))
    assert not np.signbit(expected[0]).any()
