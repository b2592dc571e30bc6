"""ONNX QDQ models (QuantizeLinear / DequantizeLinear around pooling) against onnxruntime.

`irpool run` must equal onnxruntime's output bit for bit, and the fusion irpool assumes
(irpool/qdq.py) must be the one onnxruntime's optimized model shows.  A handful of cases by
default, a grid behind `slow`."""

from __future__ import annotations

import itertools
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from qdq_helpers import (
    exact_inputs,
    inputs,
    node_types,
    onnxruntime_outputs,
    openvino_outputs,
    qdq_model,
    save,
)

import irpool.api as api
from irpool.errors import IrpoolError
from irpool.frontends.onnx_model import load
from irpool.qdq import onnxruntime_graph

pytestmark = pytest.mark.oracle

AP = "AveragePool"
# a ceil-mode pool whose padding counts in the divisor: the case where the runtimes part most
CEIL_COUNT_PAD = {
    "kernel_shape": [3, 3],
    "pads": [1, 1, 1, 1],
    "strides": [2, 2],
    "ceil_mode": 1,
    "count_include_pad": 1,
}
QUICK = [
    # op, attrs, dtype, scales, zero points, opset
    (AP, {"kernel_shape": [2, 2], "strides": [2, 2]}, np.uint8, (0.05, 0.05), (128, 128), 13),
    (
        AP,
        CEIL_COUNT_PAD,
        np.int8,
        (0.05, 0.075),
        (3, -2),
        21,
    ),
    (
        AP,
        {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 0},
        np.uint8,
        (0.1, 0.05),
        (10, 0),
        10,
    ),
    (
        "MaxPool",
        {"kernel_shape": [3, 3], "strides": [2, 2]},
        np.uint8,
        (0.05, 0.05),
        (128, 128),
        13,
    ),
    ("MaxPool", {"kernel_shape": [2, 2]}, np.int8, (0.05, 0.07), (0, 5), 21),
    ("GlobalAveragePool", {}, np.uint8, (0.05, 0.02), (128, 100), 13),
    ("GlobalAveragePool", {}, np.int8, (0.05, 0.05), (0, 0), 21),
]

EXPECTED_FUSION = {AP: "QLinearAveragePool", "GlobalAveragePool": "QLinearGlobalAveragePool"}


def _check_case(tmp_path: Path, case: tuple[Any, ...], seed: int = 0) -> str:
    """irpool run vs onnxruntime on one model; returns what onnxruntime ran the pool as."""
    op, attrs, dtype, scales, zps, opset = case
    path = save(qdq_model(op, attrs, dtype, scales, zps, opset), tmp_path / "m.onnx")
    x = inputs((2, 3, 8, 8), scales[0], seed)
    optimized = tmp_path / "opt.onnx"
    (want,) = onnxruntime_outputs(path, x, optimized)
    got = api.run(path, {"x": x})["y"]
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want), f"{int((got != want).sum())} of {got.size} cells differ"
    types = node_types(optimized)
    _, fusions = onnxruntime_graph(load(path))
    ran = types[1:-1]
    if fusions:
        expected = EXPECTED_FUSION.get(op, op)
        assert ran == [expected], (ran, fusions)
    else:
        assert ran == ["DequantizeLinear", op, "QuantizeLinear"], ran
    return ran[0] if len(ran) == 1 else "float"


@pytest.mark.parametrize(
    "case",
    QUICK,
    ids=lambda c: f"{c[0]}-{np.dtype(c[2]).name}-op{c[5]}" if isinstance(c, tuple) else str(c),
)
def test_run_equals_onnxruntime(ort: ModuleType, tmp_path: Path, case: tuple[Any, ...]) -> None:
    _check_case(tmp_path, case)


def test_fused_and_float_readings_really_differ(ort: ModuleType, tmp_path: Path) -> None:
    """The fusion matters: the same group run as written (the pool's output also a graph
    output keeps onnxruntime from fusing) computes other codes, and irpool follows both."""
    attrs = {"kernel_shape": [2, 2], "strides": [2, 2]}
    fused_path = save(qdq_model(AP, attrs, np.int8, (0.05, 0.05), (3, 3)), tmp_path / "f.onnx")
    plain_path = save(
        qdq_model(AP, attrs, np.int8, (0.05, 0.05), (3, 3), pool_output=True),
        tmp_path / "p.onnx",
    )
    x = inputs((2, 3, 8, 8), 0.05, 3)
    fused = onnxruntime_outputs(fused_path, x)[0]
    plain = onnxruntime_outputs(plain_path, x)[0]
    assert (fused != plain).any()
    assert np.array_equal(api.run(fused_path, {"x": x})["y"], fused)
    # the float chain: QuantizeLinear and DequantizeLinear are exact, but onnxruntime's float
    # AveragePool (MLAS) sums in an order irpool does not reproduce (a few ulps, see
    # docs/quantized.md), which moves a near-tie by one code now and then
    run = api.run(plain_path, {"x": x})
    got, pooled = run["y"], run["p"]
    _, ort_pooled = onnxruntime_outputs(plain_path, x)
    step = np.float32(0.05)
    assert np.abs(got - plain).max() <= step * 1.0001
    moved = got != plain
    assert moved.sum() <= 0.05 * got.size
    assert (pooled != ort_pooled)[moved].all(), "a code moved where the float pools agree"


def test_quantize_and_dequantize_linear_alone(ort: ModuleType, tmp_path: Path) -> None:
    """Per tensor and per axis, u8 and i8, ties, NaN, infinities and huge values."""
    for dtype, axis in itertools.product((np.uint8, np.int8), (None, 1)):
        scales = (np.array([0.05, 0.1, 0.3], np.float32), 0.05) if axis else (0.07, 0.05)
        zps = (np.array([1, 2, 3], dtype), 0) if axis else (7, 0)
        model = qdq_model(AP, None, dtype, scales, zps, 13, axis=axis)
        del model.graph.node[2:]  # x -> Q -> DQ -> xd
        model.graph.output[0].name = "xd"
        path = save(model, tmp_path / "qd.onnx")
        x = inputs((2, 3, 8, 8), 0.07, 1)
        x[0, 0, 0, :6] = [np.nan, np.inf, -np.inf, 1e30, -1e30, -0.0]
        (want,) = onnxruntime_outputs(path, x)
        got = api.run(path, {"x": x})["xd"]
        assert np.array_equal(got, want, equal_nan=True)


@pytest.mark.parametrize(
    "change, words",
    [
        ({"axis": 1}, "Scale and Zero-point must be a scalar"),
        ({"dilations": True}, "no dilations attribute"),
    ],
)
def test_models_onnxruntime_refuses(
    ort: ModuleType, tmp_path: Path, change: dict[str, Any], words: str
) -> None:
    """Where onnxruntime's fusion makes a QLinearAveragePool it cannot load, it refuses the
    whole model; irpool says so instead of computing the float chain."""
    attrs: dict[str, Any] = {"kernel_shape": [3, 3]}
    scales: tuple[Any, Any] = (0.05, 0.05)
    zps: tuple[Any, Any] = (1, 1)
    if change.get("axis"):
        scales = (np.array([0.05, 0.1, 0.2], np.float32), 0.05)
        zps = (np.array([1, 2, 3], np.uint8), 1)
    opset = 13
    if change.get("dilations"):
        attrs["dilations"] = [1, 1]
        opset = 19
    model = qdq_model(AP, attrs, np.uint8, scales, zps, opset, axis=change.get("axis"))
    path = save(model, tmp_path / "r.onnx")
    with pytest.raises(Exception) as refused:
        onnxruntime_outputs(path, inputs((2, 3, 8, 8), 0.05))
    assert "QLinearAveragePool" in str(refused.value)
    with pytest.raises(IrpoolError, match=words):
        api.run(path, {"x": inputs((2, 3, 8, 8), 0.05)})


def _grid() -> list[tuple[Any, ...]]:
    cases = []
    pools = [
        (AP, {"kernel_shape": [2, 2], "strides": [2, 2]}),
        (AP, {"kernel_shape": [3, 3]}),
        (AP, {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
        (AP, {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1}),
        (AP, {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
        (AP, CEIL_COUNT_PAD),
        (AP, {"kernel_shape": [2, 3], "pads": [0, 1, 1, 0], "strides": [1, 2]}),
        ("MaxPool", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
        ("MaxPool", {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1}),
        ("GlobalAveragePool", {}),
    ]
    quant = [
        (np.uint8, (0.05, 0.05), (128, 128)),
        (np.uint8, (0.05, 0.075), (0, 10)),
        (np.int8, (0.05, 0.05), (0, 0)),
        (np.int8, (0.1, 0.04), (-3, 7)),
    ]
    for (op, attrs), (dtype, scales, zps), opset in itertools.product(pools, quant, (10, 13, 21)):
        if opset == 10 and op == "MaxPool":
            continue
        cases.append((op, attrs, dtype, scales, zps, opset))
    return cases


@pytest.mark.slow
def test_grid_equals_onnxruntime(ort: ModuleType, tmp_path: Path) -> None:
    ran: dict[str, int] = {}
    for k, case in enumerate(_grid()):
        kind = _check_case(tmp_path, case, seed=k)
        ran[kind] = ran.get(kind, 0) + 1
    assert set(ran) == {"QLinearAveragePool", "QLinearGlobalAveragePool", "MaxPool", "float"}


@pytest.mark.parametrize(
    "op, dtype, scales, zps",
    [
        (AP, np.uint8, (0.05, 0.075), (128, 120)),
        (AP, np.int8, (0.05, 0.05), (3, 3)),
        ("MaxPool", np.uint8, (0.05, 0.05), (128, 128)),
        ("GlobalAveragePool", np.int8, (0.05, 0.03), (1, 2)),
    ],
)
def test_compare_checks_the_fused_nodes(
    ort: ModuleType, tmp_path: Path, op: str, dtype: Any, scales: Any, zps: Any
) -> None:
    """compare holds the node onnxruntime runs (QLinearAveragePool, the MaxPool on codes,
    QLinearGlobalAveragePool) against onnxruntime and passes; it says whether its probe changed
    what onnxruntime runs (an int8 pair whose codes are read stays int8: the zero point is not
    shifted by 128, and near-ties round otherwise)."""
    attrs = {} if op == "GlobalAveragePool" else {"kernel_shape": [2, 2], "strides": [2, 2]}
    path = save(qdq_model(op, attrs, dtype, scales, zps), tmp_path / "c.onnx")
    x = inputs((2, 3, 8, 8), scales[0], 3)
    report = api.compare(path, {"x": x})
    assert report.passed
    (layer,) = report.layers
    assert layer.op == {AP: "QLinearAveragePool-1", "MaxPool": "MaxPool-12"}.get(
        op, "QLinearGlobalAveragePool-1"
    )
    assert any("onnxruntime fuses" in n for n in layer.notes)
    assert report.probe is not None
    plain = onnxruntime_outputs(path, x)[0]
    probed_model = qdq_model(op, attrs, dtype, scales, zps)
    from onnx import helper

    code = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    for name in ("xq", "pq"):
        probed_model.graph.output.append(helper.make_tensor_value_info(name, code, None))
    probed = onnxruntime_outputs(save(probed_model, tmp_path / "p.onnx"), x)[0]
    assert report.probe.moved == int((plain != probed).sum())
    if dtype == np.int8 and op == AP:
        assert report.probe.moved > 0


def _convert_case(tmp_path: Path, case: tuple[Any, ...], seed: int) -> tuple[int, int, str]:
    """convert-report's verdict on one QDQ model against openvino's and onnxruntime's real
    outputs (no probe): (codes that differ, codes, the divergence id or "")."""
    from irpool.qdq import to_codes

    op, attrs, dtype, scales, zps, opset = case
    path = save(
        qdq_model(op, attrs, dtype, scales, zps, opset, shape=(2, 3, 9, 9)), tmp_path / "v.onnx"
    )
    x = exact_inputs((2, 3, 9, 9), scales[0], zps[0], dtype, seed)
    if not onnxruntime_graph(load(path))[1]:
        # not fused by onnxruntime: the pool is compared as a float node; the codes after it
        # are the QuantizeLinear's (x / s in onnxruntime, x * (1/s) in openvino), not the pool's
        report = api.convert_report(path, {"x": x})
        assert report.nodes[0].divergence is None or not report.nodes[0].divergence.startswith(
            "D45"
        )
        return 0, 0, "float"
    zp_out = np.asarray(zps[1], dtype)
    ours = to_codes(onnxruntime_outputs(path, x)[0], scales[1], zp_out, dtype)
    theirs = to_codes(openvino_outputs(path, x), scales[1], zp_out, dtype)
    differ = int((ours != theirs).sum())
    report = api.convert_report(path, {"x": x})
    (node,) = report.nodes
    assert node.outputs[0].mismatches == differ, (node.divergence, differ)
    assert node.same == (differ == 0)
    if differ:
        assert node.divergence is not None and node.divergence.startswith("D45")
        if op == AP:
            assert "reproduces every openvino code" in node.divergence, node.divergence
        return differ, ours.size, node.divergence_id or ""
    return 0, ours.size, ""


CONVERT_QUICK = [
    (AP, {"kernel_shape": [2, 2], "strides": [2, 2]}, np.uint8, (0.05, 0.075), (0, 10), 13),
    (
        AP,
        {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1},
        np.int8,
        (0.1, 0.04),
        (-3, 7),
        13,
    ),
    ("MaxPool", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, np.int8, (0.05, 0.05), (4, 4), 13),
    (
        AP,
        {"kernel_shape": [2, 3], "pads": [0, 1, 1, 0], "strides": [2, 2], "ceil_mode": 1},
        np.int8,
        (0.1, 0.04),
        (-3, 7),
        21,
    ),
]


@pytest.mark.parametrize(
    "case", CONVERT_QUICK, ids=["k2s2-u8", "include-pad-i8-zp", "max-i8", "ceil-i8-zp"]
)
def test_convert_report_names_what_openvino_really_computes(
    ov: ModuleType, ort: ModuleType, tmp_path: Path, case: tuple[Any, ...]
) -> None:
    differ, _, key = _convert_case(tmp_path, case, seed=5)
    if case[1].get("count_include_pad"):
        assert key == "D45b" and differ > 0
    if case[1].get("ceil_mode"):  # openvino's float32 reading, reproduced (_convert_case)
        assert key == "D45" and differ > 0


@pytest.mark.slow
def test_convert_report_grid(ov: ModuleType, ort: ModuleType, tmp_path: Path) -> None:
    found: dict[str, int] = {}
    for k, case in enumerate(_grid()):
        if case[0] == "MaxPool" and case[5] < 12:
            continue
        _, _, key = _convert_case(tmp_path, case, seed=k)  # 108 models: 24 differ (D45, D45b)
        found[key] = found.get(key, 0) + 1
    assert found.get("D45", 0) > 0 and found.get("D45b", 0) > 0


CEIL_CASES = [
    # attrs, dtype, scales, zero points: ceil_mode pools openvino runs in float32
    (
        {"kernel_shape": [2, 3], "pads": [0, 1, 1, 0], "strides": [2, 2], "ceil_mode": 1},
        np.int8,
        (0.1, 0.04),
        (-3, 7),
    ),
    ({"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1}, np.int8, (0.05, 0.075), (3, -7)),
    (CEIL_COUNT_PAD, np.uint8, (0.07, 0.105), (10, 20)),
    (
        {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2], "ceil_mode": 1},
        np.uint8,
        (0.1, 0.15),
        (5, 0),
    ),
]


def test_convert_report_reads_openvinos_float_ceil_pools(ov: ModuleType, tmp_path: Path) -> None:
    """openvino converts a QDQ AveragePool with ceil_mode into an AvgPool-16 with ceil_torch,
    which LPT leaves in float32 (the runtime model: Subgraph, Pooling f32, Subgraph); irpool's
    reading of it (qdq._lpt_codes, what convert-report holds against openvino's codes) equals
    openvino's codes on every cell, .5 ties included."""
    from irpool.qdq import _lpt_codes, to_codes
    from irpool.shapes import infer

    shape = (2, 8, 17, 17)
    checked = 0
    for k, (attrs, dtype, scales, zps) in enumerate(CEIL_CASES):
        path = save(qdq_model(AP, attrs, dtype, scales, zps, 13, shape=shape), tmp_path / "c.onnx")
        core = ov.Core()
        compiled = core.compile_model(
            ov.convert_model(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"}
        )
        runtime = compiled.get_runtime_model()
        types = {
            op.get_rt_info()["layerType"].astype(str): op.get_rt_info()["runtimePrecision"].astype(
                str
            )
            for op in runtime.get_ordered_ops()
        }
        assert types["Pooling"] == "f32"  # not rewritten by LPT
        fused, fusions = onnxruntime_graph(load(path))
        assert [f.becomes for f in fusions] == ["QLinearAveragePool"]
        (pl,) = infer(fused).pooling
        for seed in range(2):
            x = exact_inputs(shape, scales[0], zps[0], dtype, 10 * k + seed)
            codes = (np.rint(x.astype(np.float64) / np.float32(scales[0])) + zps[0]).astype(dtype)
            want = to_codes(
                np.asarray(compiled({"x": x})[0]), scales[1], np.asarray(zps[1], dtype), dtype
            )
            params = [
                np.asarray(scales[0], np.float32),
                np.asarray(zps[0], dtype),
                np.asarray(scales[1], np.float32),
                np.asarray(zps[1], dtype),
            ]
            got = _lpt_codes(pl, None, codes, [codes, *params])
            assert got is not None and got.shape == want.shape
            assert np.array_equal(got, want), int((got != want).sum())
            checked += want.size
    assert checked == 4 * 2 * 2 * 8 * 9 * 9
