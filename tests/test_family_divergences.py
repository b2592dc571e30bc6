"""The family rows of docs/divergences.md (D17 ...): every cell irpool computes is what the
runtime itself computes on the same input (openvino 2026.4, onnxruntime 1.32, torch 2.13)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from family_helpers import adaptive_net, openvino_run, reduce_net, same_bits, save

from irpool.divergences.doc import FAMILY_ROWS, FamilyRow, family_cell


def _x(row: FamilyRow) -> np.ndarray:
    return np.array(row.input, dtype=row.dtype).reshape(row.shape)


def _lp_attrs(row: FamilyRow) -> dict[str, Any]:
    _, params = row.systems["onnxruntime"]
    return {
        "kernel_shape": list(params.window.window),
        "strides": list(params.window.strides),
        "ceil_mode": int(params.window.rounding == "ceil"),
        "p": int(params.p),
    }


def _openvino(row: FamilyRow, tmp: Path, ov: ModuleType) -> list[np.ndarray]:
    family, params = row.systems["openvino"]
    x = _x(row)
    et = "u8" if row.dtype == "uint8" else "f32"
    if family.name == "reduce":
        path = save(reduce_net(params.kind, x.shape, list(params.axes), params.keep, et), tmp)
        return [openvino_run(path, x)["values"]]
    if family.name == "adaptive":
        path = save(adaptive_net(params.reduce, x.shape, params.sizes), tmp)
        out = openvino_run(path, x)
        return [out["values"]] + ([out["indices"]] if "indices" in out else [])
    from irpool.oracles import onnxruntime_rt, openvino_rt

    model = onnxruntime_rt.node_model("LpPool", _lp_attrs(row), [x], 18)
    import onnx

    onnx.save(model, str(tmp / "m.onnx"))
    compiled = openvino_rt.compile_model(ov.convert_model(str(tmp / "m.onnx")))
    return openvino_rt.infer(compiled, [x])


def _onnxruntime(row: FamilyRow) -> list[np.ndarray]:
    from irpool.oracles import onnxruntime_rt

    family, params = row.systems["onnxruntime"]
    x = _x(row)
    if family.name == "reduce" and params.global_op:
        return onnxruntime_rt.run_node("GlobalMaxPool", {}, [x], 13)
    if family.name == "reduce":
        axes = np.array(params.axes, np.int64)
        return onnxruntime_rt.run_node(
            "ReduceMean", {"keepdims": int(params.keep)}, [x, axes], 18, initializers={1: axes}
        )
    if family.name == "unpool":
        assert row.indices is not None
        idx = np.array(row.indices["onnxruntime"], np.int64).reshape(row.shape)
        attrs = {"kernel_shape": list(params.kernel), "strides": list(params.strides)}
        return onnxruntime_rt.run_node("MaxUnpool", attrs, [x, idx], 11)
    return onnxruntime_rt.run_node("LpPool", _lp_attrs(row), [x], 18)


def _torch(row: FamilyRow, torch: ModuleType) -> list[np.ndarray]:
    family, params = row.systems["torch"]
    t = torch.from_numpy(_x(row))
    f = torch.nn.functional
    if family.name == "reduce" and params.kind == "max":
        return [t.amax(tuple(params.axes)).numpy()]
    if family.name == "reduce":
        return [t.mean(tuple(params.axes)).numpy()]
    if family.name == "adaptive" and params.reduce == "max":
        values, idx = f.adaptive_max_pool2d(t, params.sizes, return_indices=True)
        return [values.numpy(), idx.numpy()]
    if family.name == "adaptive":
        return [f.adaptive_avg_pool2d(t, params.sizes).numpy()]
    if family.name == "unpool":
        assert row.indices is not None
        idx = torch.tensor(row.indices["torch"], dtype=torch.int64).reshape(row.shape)
        return [f.max_unpool2d(t, idx, list(params.kernel), list(params.strides)).numpy()]
    a = _lp_attrs(row)
    return [
        f.lp_pool1d(t, a["p"], a["kernel_shape"][0], a["strides"][0], bool(a["ceil_mode"])).numpy()
    ]


def _agree(got: Any, run: Any) -> None:
    try:
        want = run()
    except Exception as e:
        assert isinstance(got, str) and got.startswith("refuses"), (got, str(e))
        return
    assert not isinstance(got, str), (got, want)
    for g, w in zip(got, want, strict=False):
        w = np.asarray(w)
        if w.dtype.kind in "iu":
            assert np.array_equal(g.astype(np.int64), w.astype(np.int64))
        else:
            assert same_bits(g.astype(w.dtype), w), (g, w)


@pytest.mark.oracle
@pytest.mark.parametrize(
    "row", [r for r in FAMILY_ROWS if "openvino" in r.systems], ids=lambda r: r.key
)
def test_openvino_cells(ov: ModuleType, onnx: ModuleType, tmp_path: Path, row: FamilyRow) -> None:
    _agree(family_cell(row, "openvino"), lambda: _openvino(row, tmp_path, ov))


@pytest.mark.oracle
@pytest.mark.parametrize(
    "row", [r for r in FAMILY_ROWS if "onnxruntime" in r.systems], ids=lambda r: r.key
)
def test_onnxruntime_cells(ort: ModuleType, onnx: ModuleType, row: FamilyRow) -> None:
    _agree(family_cell(row, "onnxruntime"), lambda: _onnxruntime(row))


@pytest.mark.oracle
@pytest.mark.parametrize(
    "row", [r for r in FAMILY_ROWS if "torch" in r.systems], ids=lambda r: r.key
)
def test_torch_cells(torch: ModuleType, row: FamilyRow) -> None:
    _agree(family_cell(row, "torch"), lambda: _torch(row, torch))


def test_every_family_divergence_has_a_row_or_a_story() -> None:
    from irpool.divergences import TABLE

    ids = {d.id for d in TABLE}
    assert {f"D{n}" for n in range(17, 36)} <= ids
    assert {r.key.split("-")[0] for r in FAMILY_ROWS} <= ids


@pytest.mark.parametrize(
    "row", [r for r in FAMILY_ROWS if "openvino" in r.systems], ids=lambda r: r.key
)
def test_openvino_cells_are_the_same_with_avx2_and_avx512(row: FamilyRow) -> None:
    """docs/divergences.md is generated on one machine: its OpenVINO cells must not depend on
    the plugin's instruction set (8 lanes and AVX2 stores, or 16 lanes and AVX-512's).  Each
    instruction set's cells are checked against openvino on a machine that has it
    (test_openvino_cells); here, that both give the same cells (D17's NaN ends lane 7 of 8 or
    lane 15 of 16: lowest() either way)."""
    cells = []
    for isa in ("avx512_bf16", "avx2"):
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("IRPOOL_OV_ISA", isa)
            cells.append(family_cell(row, "openvino"))
    a, b = cells
    if isinstance(a, str) or a is None:
        assert a == b
        return
    assert not isinstance(b, str) and b is not None
    assert all(same_bits(x, y) for x, y in zip(a, b, strict=True))
