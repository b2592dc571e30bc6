"""Each named divergence of docs/semantics.md (irpool.cases): irpool's conventions reproduce
each system's measured numbers, and, where installed, the systems still compute them."""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pytest
from divergence_helpers import (
    ET,
    assert_outcome,
    input_of,
    irpool_ir,
    irpool_onnx,
    irpool_torch,
)

from irpool.cases import CASES, Case, ir_net
from irpool.divergences.doc import NAN_ROWS, VERSION_ROWS, KernelRow, kernel_row
from irpool.geometry import plan
from irpool.kernel import pool
from irpool.ops import openvino as ov_ops
from irpool.ops import torch as torch_ops
from irpool.oracles import onnxruntime_rt, openvino_rt


def _cases(system: str) -> list[Case]:
    return [c for c in CASES if system in c.expected and c.expected[system].refuses is None]


@pytest.mark.parametrize("case", _cases("openvino"), ids=lambda c: c.key)
def test_openvino_convention(case: Case) -> None:
    assert_outcome(irpool_ir(case, "openvino"), case.expected["openvino"], case.key)


@pytest.mark.parametrize("case", _cases("onnxruntime"), ids=lambda c: c.key)
def test_onnx_convention(case: Case) -> None:
    assert_outcome(irpool_onnx(case, "onnx"), case.expected["onnxruntime"], case.key)


@pytest.mark.parametrize("case", _cases("torch"), ids=lambda c: c.key)
def test_torch_convention(case: Case) -> None:
    assert_outcome(irpool_torch(case), case.expected["torch"], case.key)


# D4 and D7 write different attributes for the two systems (auto_pad pads, index axis)
SAME_LAYER = [
    c for c in _cases("onnxruntime") if c.openvino and c.key not in ("D4", "D4-avg", "D7")
]


@pytest.mark.parametrize("case", SAME_LAYER, ids=lambda c: c.key)
def test_ir_layer_under_onnx_convention(case: Case) -> None:
    """The same IR layer computed as onnxruntime would gives onnxruntime's numbers."""
    assert_outcome(irpool_ir(case, "onnx"), case.expected["onnxruntime"], case.key)


# -- the systems themselves --------------------------------------------------------------------


@pytest.mark.oracle
@pytest.mark.parametrize("case", _cases("openvino"), ids=lambda c: c.key)
def test_openvino_computes_it(ov: ModuleType, case: Case) -> None:
    assert case.openvino is not None
    x = input_of(case)
    compiled = openvino_rt.compile_model(
        openvino_rt.read_xml(ir_net(case.openvino, x.shape, ET[case.dtype]))
    )
    assert_outcome(openvino_rt.infer(compiled, [x]), case.expected["openvino"], case.key)


@pytest.mark.oracle
@pytest.mark.parametrize(
    "case", [c for c in CASES if "onnxruntime" in c.expected], ids=lambda c: c.key
)
def test_onnxruntime_computes_it(ort: ModuleType, onnx: ModuleType, case: Case) -> None:
    assert case.onnx is not None
    x = input_of(case)
    expected = case.expected["onnxruntime"]
    two = expected.indices is not None
    run = lambda: onnxruntime_rt.run_node(  # noqa: E731
        case.onnx.op, case.onnx.attrs, [x], case.onnx.opset, n_outputs=2 if two else 1
    )
    if expected.refuses:
        with pytest.raises(Exception, match="|".join(expected.refuses.split()[:1]) or "."):
            run()
        return
    assert_outcome(run(), expected, case.key)


@pytest.mark.oracle
@pytest.mark.parametrize("case", _cases("torch"), ids=lambda c: c.key)
def test_torch_computes_it(torch: ModuleType, case: Case) -> None:
    assert case.torch is not None
    x = torch.from_numpy(input_of(case))
    fn = getattr(torch.nn.functional, case.torch.function)
    out = fn(x, **case.torch.kwargs)
    got = [t.numpy() for t in out] if isinstance(out, tuple) else [out.numpy()]
    assert_outcome(got, case.expected["torch"], case.key)


# -- D3 and D15: larger inputs, expectations from the oracles ------------------------------------


def _d3_input() -> np.ndarray:
    return np.arange(36, dtype=np.float32).reshape(1, 1, 6, 6)


def test_d3_openvino_and_torch_conventions_differ_on_pytorch_conversion() -> None:
    """avg_pool2d(k3, s2, p1, ceil_mode, count_include_pad) as openvino's PyTorch front end
    writes it (AvgPool-14 ceil_torch, exclude-pad=false) differs from torch by 17/3."""
    params = torch_ops.params("avg_pool2d", 3, 2, 1, ceil_mode=True, count_include_pad=True)
    x = _d3_input()
    ov_values, _ = pool(x, plan(params, x.shape, "openvino", dtype=x.dtype))
    torch_values, _ = pool(x, plan(params, x.shape, "torch", dtype=x.dtype))
    assert abs(float(np.abs(ov_values - torch_values).max()) - 17 / 3) < 1e-5


@pytest.mark.oracle
def test_d3_measured(ov: ModuleType, torch: ModuleType) -> None:
    x = _d3_input()
    layer = {
        "strides": "2, 2",
        "pads_begin": "1, 1",
        "pads_end": "1, 1",
        "kernel": "3, 3",
        "exclude-pad": "false",
        "rounding_type": "ceil_torch",
    }
    from irpool.cases import IrLayer

    xml = ir_net(IrLayer("AvgPool", 14, layer), x.shape, "f32")
    got_ov = openvino_rt.infer(openvino_rt.compile_model(openvino_rt.read_xml(xml)), [x])[0]
    got_torch = torch.nn.functional.avg_pool2d(torch.from_numpy(x), 3, 2, 1, True, True).numpy()
    params = torch_ops.params("avg_pool2d", 3, 2, 1, ceil_mode=True, count_include_pad=True)
    np.testing.assert_allclose(
        got_ov, pool(x, plan(params, x.shape, "openvino", dtype=x.dtype))[0], rtol=1e-6
    )
    np.testing.assert_allclose(
        got_torch, pool(x, plan(params, x.shape, "torch", dtype=x.dtype))[0], rtol=1e-6
    )


D15_DATA = {
    "strides": "2, 3",
    "dilations": "2, 2",
    "pads_begin": "1, 1",
    "pads_end": "1, 1",
    "kernel": "3, 2",
    "index_element_type": "i64",
    "axis": "2",
}
"""The D15 MaxPool-8/14 but for its rounding_type (the writer puts attributes in order)."""


def test_d15_ceil_and_ceil_torch_shapes() -> None:
    shapes = {}
    for version, rounding in ((8, "ceil"), (14, "ceil_torch")):
        spec, _ = ov_ops.select("MaxPool", f"opset{version}", D15_DATA)
        params = ov_ops.params(spec, {**D15_DATA, "rounding_type": rounding}, 4)
        shapes[rounding] = plan(params, (1, 1, 9, 11), "openvino").output_shape[2:]
    torch_params = torch_ops.params("max_pool2d", (3, 2), (2, 3), 1, 2, ceil_mode=True)
    assert shapes == {"ceil": (4, 5), "ceil_torch": (4, 4)}
    assert plan(torch_params, (1, 1, 9, 11), "torch").output_shape[2:] == (4, 4)


@pytest.mark.oracle
def test_d15_maxpool14_equals_torch(ov: ModuleType, torch: ModuleType) -> None:
    x = np.random.default_rng(15).standard_normal((1, 2, 9, 11)).astype(np.float32)
    data = {**D15_DATA, "rounding_type": "ceil_torch"}
    from irpool.cases import IrLayer

    xml = ir_net(IrLayer("MaxPool", 14, data), x.shape, "f32")
    got_ov = openvino_rt.infer(openvino_rt.compile_model(openvino_rt.read_xml(xml)), [x])
    values, indices = torch.nn.functional.max_pool2d(
        torch.from_numpy(x), (3, 2), (2, 3), 1, 2, ceil_mode=True, return_indices=True
    )
    np.testing.assert_array_equal(got_ov[0], values.numpy())
    np.testing.assert_array_equal(got_ov[1], indices.numpy())


def test_divergence_matrix_is_current() -> None:
    """docs/divergences.md is what irpool's conventions compute today."""
    from pathlib import Path

    from irpool.divergences.doc import markdown

    path = Path(__file__).resolve().parent.parent / "docs" / "divergences.md"
    assert path.read_text() == markdown(), (
        "regenerate: python -m irpool.divergences > docs/divergences.md"
    )


# -- onnxruntime: the kernel decides (the second part of docs/divergences.md) -------------------


@pytest.mark.oracle
@pytest.mark.parametrize("row", NAN_ROWS, ids=lambda r: r.key)
def test_onnxruntime_kernel_rows_max(ort: ModuleType, onnx: ModuleType, row: KernelRow) -> None:
    x = np.array(row.input, dtype=np.float32).reshape(row.shape)
    for indices in (False, True):
        expected = onnxruntime_rt.run_node(
            row.op, row.attrs, [x], 12, n_outputs=2 if indices else 1
        )
        got = kernel_row(row, 12, indices)
        assert not isinstance(got, str), got
        assert len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_array_equal(g, e, err_msg=f"{row.key} indices={indices}")


@pytest.mark.oracle
@pytest.mark.parametrize("row", VERSION_ROWS, ids=lambda r: r.key)
@pytest.mark.parametrize("opset", [11, 19])
def test_onnxruntime_kernel_rows_average(
    ort: ModuleType, onnx: ModuleType, row: KernelRow, opset: int
) -> None:
    x = np.array(row.input, dtype=np.float32).reshape(row.shape)
    got = kernel_row(row, opset)
    try:
        expected = onnxruntime_rt.run_node(row.op, row.attrs, [x], opset)
    except Exception as e:
        assert isinstance(got, str) and got.startswith("refuses"), (got, str(e))
        assert "non-negative" in str(e)
        return
    assert not isinstance(got, str), got
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-6, err_msg=row.key)
